/**
 * A ProviderConfig deleted right after a TenantCluster that uses it was created, on a real API server: the
 * webhook's watch cache has not read the cluster yet (here it lags two seconds, as a slow watch does), and still
 * the delete is refused — for now, "try again", because one live page of one TenantCluster counts more clusters
 * than the cache holds — and once the cache has read it, refused naming the cluster. The page is bounded whatever
 * the cluster holds: no review makes the webhook list what grows with the cluster.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { createKubeCache, createKubeClient } from "../../lib/kube/mod.ts";
import { ADMISSION_CACHE } from "../../lib/api/mod.ts";
import {
  applyObject,
  cluster,
  hookService,
  installManifests,
  kubectl,
  kubectlOk,
  serveHookTls,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";
import { lagging } from "./lagging.ts";

const NS = "team-pcdelete";
const PC = "pcdelete-harvester";

Deno.test("a ProviderConfig deleted just after a cluster that uses it was created is refused", async (t) => {
  await installManifests();
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=1h"]))
    .trim();
  const client = createKubeClient({ server: cluster().server, token: () => token });
  const cache = createKubeCache({ client: lagging(client, 2000), collections: ADMISSION_CACHE });
  const service = hookService(cache);
  const server = serveHookTls((req, info) => service.app.fetch(req, info));
  try {
    await applyObject({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { "butler.butlerlabs.dev/team": "pcdelete" } },
    });
    await applyObject({
      apiVersion: API,
      kind: "Team",
      metadata: { name: "pcdelete" },
      spec: { access: { users: [{ name: "alice@example.com", role: "admin" }] } },
    });
    await applyObject({
      apiVersion: API,
      kind: "ProviderConfig",
      metadata: { name: PC, namespace: "butler-system" },
      spec: {
        provider: "harvester",
        credentialsRef: { name: "harvester-kubeconfig" },
        harvester: { namespace: "default", networkName: "default/vlan40" },
      },
    });
    await applyObject(await shippedWebhooks(`https://127.0.0.1:${server.addr.port}`));
    // The cache has listed (and the listed objects are current) before the cluster is created.
    cache.start();
    for (let i = 0; i < 100 && !cache.synced; i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(cache.synced, "the admission cache listed");
    const deletePc = () =>
      kubectl(["delete", "providerconfig", PC, "-n", "butler-system", "--dry-run=server"]);

    await t.step("at once: refused for now, the cache has not read the new cluster", async () => {
      await applyObject({
        apiVersion: API,
        kind: "TenantCluster",
        metadata: { name: "fresh", namespace: NS },
        spec: { providerConfigRef: { name: PC, namespace: "butler-system" } },
      });
      const r = await deletePc();
      assert.notEqual(r.code, 0, `the delete was allowed: ${r.stdout}`);
      assert.match(
        r.stderr,
        /cannot delete ProviderConfig "pcdelete-harvester" yet: 1 TenantCluster\(s\) that may use it were created a moment ago and admission has not read them yet; try again/,
      );
    });

    await t.step("once the cache has read it: refused, naming the cluster", async () => {
      const message = `cannot delete ProviderConfig "${PC}": TenantCluster ${NS}/fresh still references it`;
      const r = await untilRun(deletePc, (r) => r.stderr.includes(message), { timeoutMs: 15_000 });
      assert.ok(r.stderr.includes(message), r.stderr);
    });
  } finally {
    await server.shutdown();
    await cache.stop();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
    await kubectl(["delete", "team", "pcdelete", "--ignore-not-found", "--wait=false"]);
    await kubectl([
      "delete",
      "providerconfig",
      PC,
      "-n",
      "butler-system",
      "--ignore-not-found",
      "--wait=false",
    ]);
  }
});
