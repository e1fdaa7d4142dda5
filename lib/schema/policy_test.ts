import assert from "node:assert/strict";
import { admissionPolicies, type PolicyWrite } from "./mod.ts";

const POLICY = {
  apiVersion: "admissionregistration.k8s.io/v1",
  kind: "ValidatingAdmissionPolicy",
  metadata: { name: "p" },
  spec: {
    matchConstraints: {
      resourceRules: [{
        apiGroups: ["g"],
        apiVersions: ["*"],
        operations: ["CREATE"],
        resources: ["things"],
      }],
    },
    matchConditions: [{
      name: "not-exempt",
      expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)",
    }],
    variables: [
      { name: "team", expression: "object.spec.?teamRef.?name.orValue('')" },
      { name: "admin", expression: "authorizer.group('g').resource('things').check('update').allowed()" },
    ],
    validations: [
      {
        expression: "variables.team == '' || request.namespace == 'team-' + variables.team",
        messageExpression: "'must be in team-' + variables.team + ', got ' + request.namespace",
        reason: "Forbidden",
      },
      { expression: "variables.admin", message: "only admins" },
      { expression: "size(object.metadata.name) < 10" },
    ],
  },
};
const BINDING = {
  kind: "ValidatingAdmissionPolicyBinding",
  metadata: { name: "p-binding" },
  spec: { policyName: "p", validationActions: ["Deny"] },
};

function write(object: Record<string, unknown>, op: PolicyWrite["operation"] = "CREATE"): PolicyWrite {
  return {
    operation: op,
    group: "g",
    version: "v1",
    resource: "things",
    kind: "Thing",
    object: { metadata: { name: "a", namespace: "team-x" }, ...object } as PolicyWrite["object"],
    userInfo: { username: "u", groups: [] },
  };
}

Deno.test("a shipped policy's CEL, as the API server evaluates it", async (t) => {
  const [policy] = admissionPolicies([POLICY, BINDING]);
  assert.deepEqual(policy!.bindings, ["p-binding"]);
  await t.step("admitted, and out of its match", () => {
    assert.equal(policy!.judge(write({ spec: { teamRef: { name: "x" } } })), undefined);
    assert.equal(
      policy!.judge(write({ spec: { teamRef: { name: "y" } } }, "UPDATE")),
      undefined,
      "CREATE only",
    );
    const exempt = write({ spec: { teamRef: { name: "y" } } });
    const labelled = {
      ...exempt,
      object: { ...exempt.object, metadata: { name: "a", labels: { exempt: "" } } },
    };
    assert.equal(policy!.judge(labelled), undefined, "a false match condition skips the policy");
  });
  await t.step("messageExpression and reason; a message; no message: the expression", () => {
    assert.deepEqual(policy!.judge(write({ spec: { teamRef: { name: "y" } } })), {
      policy: "p",
      binding: "p-binding",
      message: "must be in team-y, got team-x",
      reason: "Forbidden",
    });
    const long = write({ spec: {} });
    const named = {
      ...long,
      object: { ...long.object, metadata: { name: "a-long-name", namespace: "team-x" } },
    };
    assert.equal(policy!.judge(named)?.message, "failed expression: size(object.metadata.name) < 10");
    assert.equal(policy!.judge(named)?.reason, "Invalid");
  });
  await t.step("an error is a refusal in cel-go's words, naming the variable", () => {
    assert.equal(
      policy!.judge(write({}))?.message,
      `expression 'variables.team == '' || request.namespace == 'team-' + variables.team' resulted in error: composited variable "team" fails to evaluate: no such key: spec`,
    );
  });
  await t.step("no Deny binding: nothing is refused", () => {
    const [audit] = admissionPolicies([POLICY, {
      ...BINDING,
      spec: { policyName: "p", validationActions: ["Audit"] },
    }]);
    assert.equal(audit!.judge(write({ spec: { teamRef: { name: "y" } } })), undefined);
  });
});
