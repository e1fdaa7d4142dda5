/**
 * Issue #55: the ProviderConfig webhook's count (64 in a namespace) is a per-review check against its cache, and
 * creates sent at once pass it (160 in parallel stored 151). The hard bound docs/operations.md#limits gives
 * platform admins is a ResourceQuota object count in the Team's `namespaceQuota`: here, on a real API server, with
 * no webhook at all (as while it is down, failing open), 160 parallel creates by a team admin store exactly 64.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { api, applyObject, ensureNamespaces, installManifests } from "./cluster.ts";

const NS = "team-pccount";
const QUOTA = "butler-object-counts";
const COUNTED = "count/providerconfigs.butler.butlerlabs.dev";

const providerConfig = (name: string) => ({
  apiVersion: API,
  kind: "ProviderConfig",
  metadata: { name, namespace: NS },
  spec: {
    provider: "harvester",
    credentialsRef: { name: "harvester-kubeconfig" },
    harvester: { namespace: "default", networkName: "default/vlan40" },
  },
});

Deno.test("a ResourceQuota object count holds a namespace's ProviderConfigs under 160 racing creates", async () => {
  await installManifests();
  await ensureNamespaces([NS]);
  await applyObject({
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: QUOTA, namespace: NS },
    spec: { hard: { [COUNTED]: "64" } },
  });
  // A cluster's quota controller counts a new quota within seconds; the test control plane runs none, so its
  // first count (nothing yet) is written here as it would write it. From then on the API server counts alone.
  const path = `/api/v1/namespaces/${NS}/resourcequotas/${QUOTA}`;
  const quota = (await api("GET", path)).body;
  quota.status = { hard: { [COUNTED]: "64" }, used: { [COUNTED]: "0" } };
  assert.equal((await api("PUT", `${path}/status`, quota)).status, 200);

  const created = await Promise.all(
    Array.from(
      { length: 160 },
      (_, i) =>
        api("POST", `/apis/${API}/namespaces/${NS}/providerconfigs`, providerConfig(`pc-${i}`), {
          as: { user: "alice@example.com", groups: ["system:masters"] },
        }),
    ),
  );
  const stored = (await api("GET", `/apis/${API}/namespaces/${NS}/providerconfigs`)).body.items as unknown[];
  assert.equal(stored.length, 64);
  assert.equal(created.filter((r) => r.status === 201).length, 64);
  for (const r of created.filter((r) => r.status !== 201)) {
    assert.ok(r.status === 403 || r.status === 409, `${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
    if (r.status === 403) assert.match(String(r.body.message), new RegExp(`exceeded quota: ${QUOTA}`));
  }
  assert.equal(
    ((await api("GET", path)).body.status as { used: Record<string, string> }).used[COUNTED],
    "64",
  );
});
