import assert from "node:assert/strict";
import type { CommandRun } from "../../lib/testing/mod.ts";
import { parse } from "yaml";
import { NOW, planCli, ROOT } from "./helpers.ts";

/** The command without kubectl-validate, so that the run is the same on every machine. */
function cli(args: string[], stdin?: string): Promise<CommandRun> {
  return planCli(args, {
    env: { KUBECTL_VALIDATE: "/nonexistent/kubectl-validate", NO_COLOR: "1" },
    ...(stdin === undefined ? {} : { stdin }),
  });
}

Deno.test("main.ts plan", async (t) => {
  await t.step("exit 0 and a clean plan for the seeds' Teams, the same bytes twice", async () => {
    const a = await cli(["--now", NOW, "examples/teams"]);
    assert.equal(a.code, 0, a.stderr);
    assert.match(a.stdout, /^Plan at 2026-11-23T10:00:00Z: 5 object\(s\): 5 to create/);
    assert.match(
      a.stdout,
      /Schemas and CEL rules of Butler's kinds: checked in process against manifests\/crds\./,
    );
    assert.match(
      a.stdout,
      /Core and RBAC kinds: schemas not checked \(kubectl-validate not found; optional\)\./,
    );
    assert.match(
      a.stdout,
      /Result: everything is admitted, the controllers converge and every object is Ready\.\n$/,
    );
    const b = await cli(["--now", NOW, "examples/teams"]);
    assert.equal(b.stdout, a.stdout);
  });

  await t.step("exit 1 when something is refused; input from standard input", async () => {
    const team = Deno.readTextFileSync(`${ROOT}examples/invalid/team-env-access-outsider.yaml`);
    const r = await cli(["--now", NOW, "-"], team);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /! Team env-access-outsider {2}\(\(stdin\)#1, line \d+\)\n {6}refused by ValidatingAdmissionPolicy butler-team-access: /,
    );
  });

  await t.step("--output json is the resulting objects as a List", async () => {
    const r = await cli(["--now", NOW, "--output", "json", "examples/teams/sandbox.yaml"]);
    assert.equal(r.code, 0, r.stderr);
    const list = JSON.parse(r.stdout);
    assert.equal(list.kind, "List");
    const kinds = new Set(list.items.map((o: { kind: string }) => o.kind));
    assert.deepEqual([...kinds].sort(), [
      "ClusterRole",
      "ClusterRoleBinding",
      "Namespace",
      "RoleBinding",
      "Team",
    ]);
  });

  await t.step("--diff against a live export: what the plan changes", async () => {
    const live = await cli(["--now", NOW, "-o", "yaml", "examples/teams/sandbox.yaml"]);
    const same = await cli(
      ["--now", NOW, "--live", "-", "--diff", "examples/teams/sandbox.yaml"],
      live.stdout,
    );
    assert.equal(same.code, 0, same.stderr);
    assert.match(same.stdout, /= Team sandbox/);
    assert.match(same.stdout, /No changes against the live objects\.\n$/);
    const grown = await cli(
      ["--now", NOW, "--live", "-", "--diff", "examples/teams/sandbox.yaml", "examples/teams/payments.yaml"],
      live.stdout,
    );
    assert.match(grown.stdout, /^\+ Namespace team-payments$/m);
    assert.doesNotMatch(grown.stdout, /^[+~-] \S+ team-sandbox/m, "nothing of the unchanged team changes");
  });

  await t.step("exit 2 with usage for bad options and unreadable input", async () => {
    const unknown = await cli(["--frobnicate", "examples/teams"]);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^plan: unknown option --frobnicate\nusage: main\.ts plan/);
    const format = await cli(["--output", "xml", "examples/teams"]);
    assert.equal(format.code, 2);
    assert.match(format.stderr, /--output must be text, yaml or json, not "xml"/);
    const now = await cli(["--now", "yesterday", "examples/teams"]);
    assert.match(now.stderr, /--now must be an RFC 3339 time, not "yesterday"/);
    const bad = await cli(["-"], "kind: Team\nmetadata: {}\n");
    assert.equal(bad.code, 2);
    assert.match(
      bad.stdout,
      /x \(stdin\)#1 {2}\(\(stdin\)#1, line 1\)\n {6}unreadable: Object 'apiVersion' is missing/,
    );
    const none = await cli([]);
    assert.match(none.stderr, /plan: no manifests given/);
  });

  await t.step("the README's refusal example is refused with no Go tool installed: exit 1", async () => {
    const r = await cli(["--now", NOW, "examples/invalid/aws-without-region.yaml"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stdout,
      /! ProviderConfig butler-system\/aws-without-region {2}\(examples\/invalid\/aws-without-region\.yaml#1, line 12\)\n {6}refused by schema: The ProviderConfig "aws-without-region" is invalid: spec\.aws\.region: Required value: region is required for AWS provider$/m,
    );
    assert.match(r.stdout, /^Result: 1 refused, 0 not Ready, 0 failing sync\(s\)\.$/m);
  });

  await t.step("misspelled fields are named with their line; an unserved version is refused", async () => {
    const typo = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: NetworkPool
metadata: { name: p, namespace: butler-system }
spec:
  cidr: 10.40.0.0/24
  reserved:
    - cidr: 10.40.0.0/28
  tenantAlocation: {}
---
apiVersion: butler.butlerlabs.dev/v1alpha2
kind: NetworkPool
metadata: { name: q, namespace: butler-system }
spec: { cidr: 10.41.0.0/24 }
`;
    const r = await cli(["--now", NOW, "-"], typo);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /\(\(stdin\)#1, line 8\)\n {6}refused by schema: NetworkPool in version "v1alpha1" cannot be handled as a NetworkPool: strict decoding error: unknown field "spec\.tenantAlocation"$/m,
    );
    assert.match(
      r.stdout,
      /refused by API server: no matches for kind "NetworkPool" in version "butler\.butlerlabs\.dev\/v1alpha2"$/m,
    );
  });

  await t.step("admitted but not Ready exits 3; --fail-on chooses what fails", async () => {
    // Secrets are given (another one), so the one it names is missing, not merely left out of the plan.
    const pc = [
      "--now",
      NOW,
      "examples/providerconfigs/aws-us-east.yaml",
      "examples/credentials/gcp-credentials.yaml",
    ];
    const r = await cli(pc);
    assert.equal(r.code, 3);
    assert.match(
      r.stdout,
      /^Not Ready\n {2}ProviderConfig butler-system\/aws-us-east: Ready=False \(CredentialsInvalid\)$/m,
    );
    assert.match(r.stdout, /^Result: 0 refused, 1 not Ready, 0 failing sync\(s\)\.$/m);
    assert.equal((await cli(["--fail-on", "refused", ...pc])).code, 0);
    const refused = ["--now", NOW, "examples/invalid/aws-without-region.yaml"];
    assert.equal((await cli(["--fail-on=refused", ...refused])).code, 1);
    assert.equal((await cli(["--fail-on=none", ...refused])).code, 0);
    const bad = await cli(["--fail-on", "warnings", ...pc]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--fail-on must be refused, not-ready or none, not "warnings"/);
    const json = await cli(["-o", "json", ...pc]);
    assert.equal(json.code, 3);
    assert.match(json.stderr, /^Result: 0 refused, 1 not Ready/);
  });

  await t.step("input errors: where, without the usage; no manifests is an error", async () => {
    const empty = await cli(["--now", NOW, "docs"]);
    assert.equal(empty.code, 2);
    assert.equal(empty.stderr, "plan: no manifests found in docs\n");
    // A repository's .github/ holds workflows, not manifests: the CI example's folder has nothing else.
    const hidden = await cli(["--now", NOW, "examples/ci"]);
    assert.equal(hidden.stderr, "plan: no manifests found in examples/ci\n");
    const quote = await cli(
      ["--now", NOW, "-"],
      'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: "abc\nspec:\n  x: 1\n',
    );
    assert.equal(quote.code, 2);
    assert.match(
      quote.stdout,
      /^ {2}x \(stdin\)#1 {2}\(\(stdin\)#1, line 4\)\n {6}unreadable: Missing closing "quote$/m,
    );
  });

  await t.step("the CI example runs the README's plan command, failing on a refusal", () => {
    const workflow = parse(Deno.readTextFileSync(`${ROOT}examples/ci/.github/workflows/plan.yaml`));
    const steps: { run?: string }[] = workflow.jobs.plan.steps;
    const run = steps.map((s) => s.run ?? "").find((r) => r.includes("task plan"));
    assert.match(run ?? "", /^npx -y deno@2\.9\.6 task plan --fail-on=refused /);
  });
});
