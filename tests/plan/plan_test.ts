import assert from "node:assert/strict";
import {
  EXIT,
  exitCode,
  invalidMessage,
  planSucceeded,
  renderDiff,
  renderObjects,
  renderText,
  verdictOf,
} from "../../lib/plan/mod.ts";
import { APPLIED_TOGETHER, examples, outcomeOf, plan, ROOT, yaml } from "./helpers.ts";
import { updatingGoldens } from "../../lib/testing/mod.ts";

const GOLDEN = `${ROOT}tests/plan/golden/examples.txt`;

const TINY_TEAM = `
apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata: { name: tiny }
spec:
  displayName: Tiny
  access:
    users: [{ name: amy@example.com, role: admin }, { name: ben@example.com, role: operator }]
  resourceLimits: { maxClusters: 1 }
  clusterDefaults: { kubernetesVersion: v1.31.0 }
  environments: [{ name: dev }, { name: prod }]
`;

const tenantCluster = (name: string, env = "dev", annotations: Record<string, string> = {}) => `
---
apiVersion: butler.butlerlabs.dev/v1alpha1
kind: TenantCluster
metadata:
  name: ${name}
  namespace: team-tiny
  labels: { butler.butlerlabs.dev/environment: ${env} }
  annotations: ${JSON.stringify(annotations)}
spec: { providerConfigRef: { name: aws-us-east, namespace: butler-system } }
`;

const AWS = () => examples("credentials/aws-credentials.yaml", "providerconfigs/aws-us-east.yaml");

Deno.test("plan: the seeds' examples", async (t) => {
  const result = await plan(examples(...APPLIED_TOGETHER));

  await t.step(
    "are all admitted, the controllers converge, and every object is Ready",
    () => {
      assert.deepEqual(result.outcomes.filter((o) => o.action !== "create"), []);
      assert.deepEqual(result.failures, []);
      assert.ok(result.converged);
      assert.deepEqual(verdictOf(result).notReady.map((n) => `${n.name}: ${n.why}`), []);
      assert.equal(planSucceeded(result), true);
      assert.equal(exitCode(verdictOf(result), "not-ready"), EXIT.ok);
    },
  );

  await t.step("give each Team its namespace and RBAC, and an IPAM TenantCluster its addresses", () => {
    const ns = result.objects.find((o) => o.kind === "Namespace" && o.metadata.name === "team-payments");
    assert.ok(ns, "team-payments is created by the Team controller");
    const allocation = result.objects.find((o) =>
      o.kind === "IPAllocation" && o.metadata.name === "team-platform-prod-cluster-lb"
    );
    assert.equal(allocation?.status?.phase, "Allocated");
    const pool = result.objects.find((o) => o.kind === "NetworkPool" && o.metadata.name === "lab-pool");
    // prod-cluster's hand-made LB allocation (8) and api-prod's pinned range (8), and 5 node addresses each.
    assert.equal(pool?.status?.allocatedIPs, 26);
  });

  await t.step("print as recorded (UPDATE_GOLDEN=1 records on purpose)", async () => {
    const text = renderText(result);
    if (updatingGoldens()) {
      await Deno.mkdir(`${ROOT}tests/plan/golden`, { recursive: true });
      await Deno.writeTextFile(GOLDEN, text);
    }
    assert.equal(text, await Deno.readTextFile(GOLDEN));
  });

  await t.step("give byte-identical output on a second run", async () => {
    const again = await plan(examples(...APPLIED_TOGETHER));
    assert.equal(renderText(again), renderText(result));
    assert.equal(renderObjects(again, "yaml"), renderObjects(result, "yaml"));
    assert.equal(renderObjects(again, "json"), renderObjects(result, "json"));
  });

  await t.step(
    "planned again over their own result change nothing: the result is a fixed point",
    async () => {
      const again = await plan(examples(...APPLIED_TOGETHER), { live: result.objects });
      assert.deepEqual(again.outcomes.filter((o) => o.action !== "unchanged"), []);
      assert.equal(renderDiff(again), "No changes against the live objects.\n");
      assert.equal(again.rounds, 2, "one quiet round before and one after applying");
    },
  );
});

Deno.test("plan: environment access that names outsiders is refused by the policy, with its message", async (t) => {
  for (const file of ["team-env-access-outsider.yaml", "team-env-access-unknown-group.yaml"]) {
    await t.step(file, async () => {
      const text = Deno.readTextFileSync(`${ROOT}examples/invalid/${file}`);
      const expect = /^# expect: (.+)$/m.exec(text)![1]!;
      const result = await plan(yaml(text, file));
      const [outcome] = result.outcomes;
      assert.equal(outcome?.action, "refused");
      assert.equal(outcome?.refusal?.by, "ValidatingAdmissionPolicy butler-team-access");
      assert.match(
        outcome!.refusal!.message,
        /^The teams "\S+" is invalid: : ValidatingAdmissionPolicy 'butler-team-access' with binding 'butler-team-access' denied request: /,
      );
      assert.ok(outcome!.refusal!.message.endsWith(expect), outcome!.refusal!.message);
      assert.ok(!planSucceeded(result));
    });
  }
});

Deno.test("plan: references out of their trust zone are refused by the policies, with their messages", async (t) => {
  const files = [
    "providerconfig-borrowed-credentials.yaml",
    "providerconfig-scoped-to-another-team.yaml",
    "tenantcluster-provider-of-another-team.yaml",
    "tenantcluster-team-of-another-namespace.yaml",
  ];
  for (const file of files) {
    await t.step(file, async () => {
      const text = Deno.readTextFileSync(`${ROOT}examples/invalid/${file}`);
      const expect = /^# expect: (.+)$/m.exec(text)![1]!;
      const by = /^# refused-by: (.+)$/m.exec(text)![1]!;
      const sourced = yaml(text, file);
      const { kind, metadata } = sourced[0]!.object;
      const result = await plan([
        ...examples("teams", "providerconfigs/azure-platform-team.yaml"),
        ...sourced,
      ]);
      const outcome = outcomeOf(result, `${kind} ${metadata.namespace}/${metadata.name}`);
      assert.equal(outcome.action, "refused");
      assert.equal(outcome.refusal?.by, by);
      assert.ok(outcome.refusal!.message.endsWith(`denied request: ${expect}`), outcome.refusal!.message);
    });
  }
});

Deno.test("plan: the TenantCluster webhook refuses the cluster over the team's quota, the first is admitted", async () => {
  const result = await plan([...AWS(), ...yaml(TINY_TEAM + tenantCluster("one") + tenantCluster("two"))]);
  assert.equal(outcomeOf(result, "TenantCluster team-tiny/one").action, "create");
  const two = outcomeOf(result, "TenantCluster team-tiny/two");
  assert.equal(two.action, "refused");
  assert.equal(
    two.refusal?.message,
    'admission webhook "tenantclusters.admission.butler.butlerlabs.dev" denied the request: spec: Forbidden: team "tiny" already has 1 cluster(s); team quota limits to 1',
  );
  assert.ok(!planSucceeded(result));
  assert.match(
    renderText(result),
    /Team tiny: clusters 1\/1, nodes 3, CPU 12, memory 48Gi, storage 300Gi; quota Warning/,
  );
});

Deno.test("plan: an object waits for the namespace a Team creates, and is refused when none does", async () => {
  const result = await plan([
    ...AWS(),
    ...yaml(
      tenantCluster("early") + "\n---\n" + TINY_TEAM +
        tenantCluster("lost").replace("team-tiny", "team-nobody"),
    ),
  ]);
  assert.equal(outcomeOf(result, "TenantCluster team-tiny/early").action, "create");
  assert.deepEqual(outcomeOf(result, "TenantCluster team-nobody/lost").refusal, {
    by: "API server",
    message: 'namespaces "team-nobody" not found',
  });
});

Deno.test("plan: a built-in kind Butler neither manages nor reads is skipped, not refused", async () => {
  const result = await plan(
    yaml("apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web, namespace: default }\n"),
  );
  assert.equal(result.outcomes[0]?.action, "skipped");
  assert.match(
    result.outcomes[0]!.note!,
    /Deployment \(apps\/v1\) is served by the API server; plan does not judge it/,
  );
  assert.ok(planSucceeded(result));
});

Deno.test("plan: against live objects", async (t) => {
  const first = await plan([...AWS(), ...yaml(TINY_TEAM + tenantCluster("one"))]);
  assert.ok(planSucceeded(first));

  await t.step("a Team change shows the access it removes in the diff", async () => {
    const changed = TINY_TEAM.replace(", { name: ben@example.com, role: operator }", "");
    const result = await plan([...AWS(), ...yaml(changed + tenantCluster("one"))], { live: first.objects });
    assert.equal(outcomeOf(result, "Team tiny").action, "update");
    const diff = renderDiff(result);
    assert.match(diff, /^- RoleBinding team-tiny\/butler-user-ben-example-com-[0-9a-f]{8}$/m);
    assert.match(
      diff,
      /^~ Team tiny\n(?: {4}.*\n)*? {4}spec\.access\.users\[1\]\.name: "ben@example\.com" -> \(none\)$/m,
    );
    assert.doesNotMatch(diff, /RoleBinding team-tiny\/butler-user-amy/);
  });

  await t.step("moving a cluster to another environment needs the migration annotation", async () => {
    const moved = await plan([...AWS(), ...yaml(TINY_TEAM + tenantCluster("one", "prod"))], {
      live: first.objects,
    });
    assert.deepEqual(outcomeOf(moved, "TenantCluster team-tiny/one").refusal, {
      by: "ValidatingAdmissionPolicy butler-tenantcluster-identity",
      message:
        'tenantclusters.butler.butlerlabs.dev "one" is forbidden: ValidatingAdmissionPolicy \'butler-tenantcluster-identity\' with binding \'butler-tenantcluster-identity\' denied request: env label changes require the "butler.butlerlabs.dev/migration-operation" annotation set to "true"; use `butleradm env migrate`',
    });
    const migrated = await plan(
      [
        ...AWS(),
        ...yaml(
          TINY_TEAM + tenantCluster("one", "prod", { "butler.butlerlabs.dev/migration-operation": "true" }),
        ),
      ],
      { live: first.objects },
    );
    assert.equal(outcomeOf(migrated, "TenantCluster team-tiny/one").action, "update");
  });
});

Deno.test("plan: a hook that fails is reported, and fails the plan", async () => {
  const result = await plan(yaml(TINY_TEAM), {
    routes: [(app) => app.post("/hooks/team/sync", (c) => c.json({ error: "team sync is down" }, 500))],
  });
  assert.deepEqual(result.failures.map((f) => `${f.name}: ${f.message}`), [
    "Team tiny: butler-team: sync hook failed (HTTP 500): team sync is down",
  ]);
  assert.equal(
    result.objects.find((o) => o.kind === "Namespace" && o.metadata.name === "team-tiny"),
    undefined,
  );
  assert.ok(!planSucceeded(result));
  assert.match(renderText(result), /Failing syncs\n {2}Team tiny: butler-team: sync hook failed/);
});

Deno.test("plan: a status that changes on every sync never converges, and the plan says so", async () => {
  const result = await plan(AWS(), {
    maxRounds: 4,
    routes: [(app) =>
      app.post("/hooks/providerconfig/sync", async (c) => {
        const body = await c.req.json();
        return c.json({ status: { syncs: (body.object.status?.syncs ?? 0) + 1 } });
      })],
  });
  assert.equal(result.converged, false);
  assert.ok(!planSucceeded(result));
  assert.match(
    renderText(result),
    /Controllers do NOT converge: objects still change after \d+ round\(s\)\./,
  );
});

Deno.test("invalidMessage words kubectl-validate's status as kubectl prints the API server's", () => {
  assert.deepEqual(
    invalidMessage({
      message:
        'NetworkPool.butler.butlerlabs.dev "p" is invalid: spec.tenantAllocation: Invalid value: "object": x',
      details: {
        kind: "NetworkPool",
        name: "p",
        causes: [{
          field: "spec.tenantAllocation",
          message:
            'Invalid value: "object": tenantAllocation.start and tenantAllocation.end must be set together',
        }],
      },
    }),
    {
      message:
        'The NetworkPool "p" is invalid: spec.tenantAllocation: Invalid value: tenantAllocation.start and tenantAllocation.end must be set together',
    },
  );
  assert.deepEqual(
    invalidMessage({
      details: {
        kind: "ProviderConfig",
        name: "q",
        causes: [
          { field: "spec.provider", message: 'Unsupported value: "openstack"' },
          { field: "<nil>", message: 'Invalid value: "null": some validation rules were not checked' },
        ],
      },
    }),
    {
      message:
        'The ProviderConfig "q" is invalid: spec.provider: Unsupported value: "openstack"; <nil>: Invalid value: null: some validation rules were not checked',
      causes: [
        'spec.provider: Unsupported value: "openstack"',
        "<nil>: Invalid value: null: some validation rules were not checked",
      ],
    },
  );
  assert.deepEqual(invalidMessage({ message: "no details" }), { message: "no details" });
});

Deno.test("invalidMessage quotes an int-or-string value kubectl-validate leaves empty, as the API server does", () => {
  const status = {
    details: {
      kind: "Team",
      name: "bad-limit",
      causes: [{
        field: "spec.resourceLimits.maxMemory",
        message:
          'Invalid value: "": must be a non-negative Kubernetes quantity, such as 480Gi, 2Ti, 120 or 500m',
      }],
    },
  };
  assert.deepEqual(invalidMessage(status, { spec: { resourceLimits: { maxMemory: "480GB" } } }), {
    message:
      'The Team "bad-limit" is invalid: spec.resourceLimits.maxMemory: Invalid value: "480GB": must be a non-negative Kubernetes quantity, such as 480Gi, 2Ti, 120 or 500m',
  });
  // Without the object, or where the value is not a string or number, the words are kept.
  assert.match(invalidMessage(status).message, /Invalid value: "": must be/);
  const listed = invalidMessage(
    {
      details: {
        ...status.details,
        causes: [{
          field: "spec.environments[0].clusterDefaults.workerCPU",
          message: 'Invalid value: "": x',
        }],
      },
    },
    { spec: { environments: [{ clusterDefaults: { workerCPU: -1 } }] } },
  );
  assert.match(listed.message, /workerCPU: Invalid value: -1: x$/);
  const long = invalidMessage({
    details: {
      kind: "Team",
      name: "t",
      causes: [{ field: "spec.x", message: "Too long: may not be longer than 1024" }],
    },
  });
  assert.equal(long.message, 'The Team "t" is invalid: spec.x: Too long: may not be more than 1024 bytes');
});
