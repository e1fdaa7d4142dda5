/**
 * What `plan` says of kubectl-validate: "agrees" only when it ran and agreed; otherwise why it did not run. A stand-in
 * kubectl-validate (tests/plan/kubectl_validate_stand_in.sh) answers as the real one does, so "agrees" shows it ran.
 */
import assert from "node:assert/strict";
import { NOW, planCli, ROOT } from "./helpers.ts";

const STAND_IN = `${ROOT}tests/plan/kubectl_validate_stand_in.sh`;
const DEPLOYMENT = "apiVersion: apps/v1\nkind: Deployment\nmetadata: { name: web, namespace: default }\n";
const TEAM = `apiVersion: butler.butlerlabs.dev/v1alpha1
kind: Team
metadata: { name: opinions }
spec:
  displayName: Opinions
  access:
    users: [{ name: ann@example.com, role: admin }]
`;

Deno.test("plan's second opinion line", async (t) => {
  await t.step("kubectl-validate absent: never 'agrees', whatever the input", async () => {
    for (const input of [DEPLOYMENT, TEAM]) {
      const r = await planCli(["--now", NOW, "-"], {
        stdin: input,
        env: { KUBECTL_VALIDATE: "/nonexistent/kubectl-validate", NO_COLOR: "1" },
      });
      assert.doesNotMatch(r.stdout, /agrees/);
      assert.match(r.stdout, /kubectl-validate not found; optional/);
    }
  });

  await t.step("installed, but nothing it checks in the input: not run, and said so", async () => {
    const r = await planCli(["--now", NOW, "-"], {
      stdin: DEPLOYMENT,
      env: { KUBECTL_VALIDATE: STAND_IN, NO_COLOR: "1" },
    });
    assert.doesNotMatch(r.stdout, /agrees/);
    assert.match(
      r.stdout,
      /^Second opinion \(kubectl-validate\): not run \(no object of the core, RBAC or Butler's kinds\)\.$/m,
    );
  });

  await t.step("installed and run: 'agrees' when it agrees", async () => {
    const r = await planCli(["--now", NOW, "-"], {
      stdin: TEAM,
      env: { KUBECTL_VALIDATE: STAND_IN, NO_COLOR: "1" },
    });
    assert.match(
      r.stdout,
      /^Second opinion \(kubectl-validate\): agrees; core and RBAC kinds checked by it\.$/m,
    );
  });
});
