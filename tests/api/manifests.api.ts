/** `kubectl apply --server-side -k manifests/` on a real API server, with strict field validation. */
import assert from "node:assert/strict";
import { installManifests, kubectl, kubectlOk, ROOT } from "./cluster.ts";

Deno.test("manifests/ installs on a real API server", async (t) => {
  await t.step("kubectl apply --server-side --validate=strict -k manifests/", async () => {
    await installManifests();
  });
  await t.step("every Butler CRD is established and served", async () => {
    const names = (await kubectlOk(["get", "crd", "-o", "name"])).trim().split("\n")
      .filter((n) => n.endsWith(".butler.butlerlabs.dev")).sort();
    assert.deepEqual(names, [
      "customresourcedefinition.apiextensions.k8s.io/ipallocations.butler.butlerlabs.dev",
      "customresourcedefinition.apiextensions.k8s.io/loadbalancerinventories.butler.butlerlabs.dev",
      "customresourcedefinition.apiextensions.k8s.io/networkpools.butler.butlerlabs.dev",
      "customresourcedefinition.apiextensions.k8s.io/providerconfigs.butler.butlerlabs.dev",
      "customresourcedefinition.apiextensions.k8s.io/teams.butler.butlerlabs.dev",
      "customresourcedefinition.apiextensions.k8s.io/tenantclusters.butler.butlerlabs.dev",
    ]);
    const resources = await kubectlOk(["api-resources", "--api-group=butler.butlerlabs.dev", "-o", "name"]);
    assert.equal(resources.trim().split("\n").length, 6);
    const all = await kubectl(["get", "butler", "-A"]);
    assert.equal(all.code, 0, all.stderr);
  });
  await t.step("applying the same manifests again changes nothing", async () => {
    const r = await kubectlOk([
      "apply",
      "--server-side",
      "--validate=strict",
      "-k",
      "manifests/",
      "--dry-run=server",
    ]);
    assert.doesNotMatch(r, /configured|created/);
  });
  await t.step("the controllers and the hook service objects exist", async () => {
    const cc = await kubectlOk(["get", "compositecontrollers", "-o", "name"]);
    const dc = await kubectlOk(["get", "decoratorcontrollers", "-o", "name"]);
    assert.equal(cc.trim().split("\n").length, 2);
    assert.equal(dc.trim().split("\n").length, 3);
    await kubectlOk(["get", "-n", "butler-system", "deployment/butler-hooks", "service/butler-hooks"]);
  });
  await t.step(
    "strict validation refuses the ProviderConfig CRD as it was (commas in a flow mapping)",
    async () => {
      const crd = Deno.readTextFileSync(`${ROOT}/manifests/crds/providerconfigs.yaml`);
      const quoted = '"Configuration and credentials complete and, in ipam mode, a pool has room."';
      assert.ok(crd.includes(quoted));
      const broken = crd.replace(quoted, quoted.slice(1, -1));
      const r = await kubectl(
        ["apply", "--server-side", "--validate=strict", "--dry-run=server", "-f", "-"],
        {
          stdin: broken,
        },
      );
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /ready\.(in ipam mode|a pool has room\.): field not declared in schema/);
    },
  );
});
