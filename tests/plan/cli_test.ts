import assert from "node:assert/strict";
import type { CommandRun } from "../../lib/testing/mod.ts";
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
    assert.match(a.stdout, /Schemas and CEL rules: NOT checked \(kubectl-validate not found/);
    assert.match(a.stdout, /Result: everything is admitted and the controllers converge\.\n$/);
    const b = await cli(["--now", NOW, "examples/teams"]);
    assert.equal(b.stdout, a.stdout);
  });

  await t.step("exit 1 when something is refused; input from standard input", async () => {
    const team = Deno.readTextFileSync(`${ROOT}examples/invalid/team-env-access-outsider.yaml`);
    const r = await cli(["--now", NOW, "-"], team);
    assert.equal(r.code, 1);
    assert.match(
      r.stdout,
      /! Team env-access-outsider {2}\(\(stdin\)#1\)\n {6}refused by ValidatingAdmissionPolicy butler-team-access: /,
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
    assert.match(bad.stderr, /\(stdin\)#1: apiVersion: /);
    const none = await cli([]);
    assert.match(none.stderr, /plan: no manifests given/);
  });
});
