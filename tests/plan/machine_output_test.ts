/**
 * `plan -o json` and `-o yaml` say what was refused, for scripts: beside the resulting objects (`items`, which a
 * later `--live` reads back), `refused` lists each refused input with where it is (file, document, line), who
 * refused it and the words, and the object as written. And a TenantCluster outside every team namespace is one of
 * them (docs/tenancy.md): refused by the policy, exit 1 under every `--fail-on` but `none`.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import type { CommandRun } from "../../lib/testing/mod.ts";
import { NOW, planCli, ROOT } from "./helpers.ts";

function cli(args: string[], stdin?: string): Promise<CommandRun> {
  return planCli(args, {
    env: { KUBECTL_VALIDATE: "/nonexistent/kubectl-validate", NO_COLOR: "1" },
    ...(stdin === undefined ? {} : { stdin }),
  });
}

const OUTSIDE = `# a cluster outside every team namespace
apiVersion: butler.butlerlabs.dev/v1alpha1
kind: TenantCluster
metadata:
  name: stray
  namespace: default
spec:
  providerConfigRef: { name: harvester-lab }
  kubernetesVersion: v1.31.0
`;

Deno.test("plan -o json and -o yaml list what is refused, with its object, words and line", async (t) => {
  await t.step("a schema refusal, in JSON: the field's line", async () => {
    const r = await cli(["--now", NOW, "-o", "json", "examples/invalid/aws-without-region.yaml"]);
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(out.kind, "List");
    assert.deepEqual(out.items.filter((o: { kind: string }) => o.kind === "ProviderConfig"), []);
    assert.equal(out.refused.length, 1);
    const [refusal] = out.refused;
    assert.equal(refusal.source, "examples/invalid/aws-without-region.yaml#1");
    assert.equal(refusal.line, 12);
    assert.equal(refusal.name, "ProviderConfig butler-system/aws-without-region");
    assert.equal(refusal.by, "schema");
    assert.equal(
      refusal.message,
      'The ProviderConfig "aws-without-region" is invalid: spec.aws.region: Required value: region is required for AWS provider',
    );
    const written = parse(Deno.readTextFileSync(`${ROOT}examples/invalid/aws-without-region.yaml`));
    assert.deepEqual(refusal.object, written);
    assert.match(r.stderr, /^Result: 1 refused, 0 not Ready, 0 failing sync\(s\)\.$/m);
  });

  await t.step("a policy refusal, in YAML: the line where the object starts", async () => {
    const r = await cli(
      ["--now", NOW, "-o", "yaml", "examples/ipam/single-pool", "examples/teams/platform.yaml", "-"],
      OUTSIDE,
    );
    assert.equal(r.code, 1, r.stderr);
    const out = parse(r.stdout);
    assert.deepEqual(
      out.refused.map((x: { source: string; line: number; by: string; message: string }) => x),
      [{
        source: "(stdin)#1",
        line: 2,
        name: "TenantCluster default/stray",
        by: "ValidatingAdmissionPolicy butler-tenantcluster-references",
        message: 'tenantclusters.butler.butlerlabs.dev "stray" is forbidden: ' +
          "ValidatingAdmissionPolicy 'butler-tenantcluster-references' with binding 'butler-tenantcluster-references' denied request: TenantCluster must be in a team namespace (\"team-<team>\", labelled butler.butlerlabs.dev/team by its Team), got \"default\"",
        object: parse(OUTSIDE),
      }],
    );
    assert.ok(out.items.some((o: { kind: string }) => o.kind === "Team"), "what is admitted is in items");
    assert.equal(out.items.some((o: { kind: string }) => o.kind === "TenantCluster"), false);
  });

  await t.step("nothing refused: an empty list, so a script can always read it", async () => {
    const r = await cli(["--now", NOW, "-o", "json", "examples/teams/sandbox.yaml"]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).refused, []);
  });

  await t.step(
    "the cluster outside the team namespaces fails the plan under the default --fail-on",
    async () => {
      const r = await cli(
        ["--now", NOW, "examples/ipam/single-pool", "examples/teams/platform.yaml", "-"],
        OUTSIDE,
      );
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stdout, /^Result: 1 refused, 0 not Ready, 0 failing sync\(s\)\.$/m);
    },
  );
});
