/**
 * The README's walk-through, with real Metacontroller: its step 3 block runs as written (`kubectl apply` of the
 * planned setup, then `kubectl wait` for every object to be Ready), against the tier's install. Its step 1 (installing
 * cert-manager, Metacontroller and Butler) is the tier's own set-up; what can be checked of it without a kubelet or
 * the network is checked by the real API server tier (tests/api/variants.api.ts).
 */
import assert from "node:assert/strict";
import { cluster, getObject, kubectl, ROOT } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

Deno.test("the README's walk-through ends with every object Ready", async (t) => {
  const readme = Deno.readTextFileSync(`${ROOT}/README.md`);
  const block = /<!-- test:e2e runs this block -->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, "the README marks its walk-through block");
  try {
    await t.step("its block runs as written: applied, and every wait passes", async () => {
      const run = await new Deno.Command("bash", {
        args: ["-euo", "pipefail", "-c", block],
        cwd: ROOT,
        env: { KUBECONFIG: cluster().kubeconfig },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const out = new TextDecoder().decode(run.stdout) + new TextDecoder().decode(run.stderr);
      assert.equal(run.code, 0, out);
      assert.match(out, /tenantcluster\.butler\.butlerlabs\.dev\/prod-cluster condition met/);
    });
    await t.step("the cluster holds its addresses from the pool", async () => {
      const tc = await getObject("tenantcluster", "prod-cluster", "team-platform") as Obj;
      assert.equal(tc.status.phase, "Ready");
      assert.deepEqual(tc.status.loadBalancer.addresses, ["10.40.1.0-10.40.1.7"]);
    });
  } finally {
    await kubectl([
      "delete",
      "-f",
      "examples/tenantclusters/prod-cluster.yaml",
      "--ignore-not-found",
      "--wait=true",
    ]);
    await eventually(
      "prod-cluster gone",
      async () => (await getObject("tenantcluster", "prod-cluster", "team-platform")) ? undefined : true,
      120,
    );
    await kubectl([
      "delete",
      "-f",
      "examples/teams/platform.yaml",
      "--ignore-not-found",
      "--wait=true",
      "--timeout=120s",
    ]);
    await kubectl([
      "delete",
      "-f",
      "examples/ipam/single-pool/",
      "--ignore-not-found",
      "--wait=true",
      "--timeout=120s",
    ]);
  }
});
