/**
 * `npx -y deno@2.9.6 bench hooks/team/sync_bench.ts`
 *
 * A Team sync through the HTTP route with 1,000 TenantClusters related: the `payments`-style team (two
 * environments, quotas on every dimension), clusters spread over both environments and 20 owners.
 */
import { HOOK_ROUTES } from "../mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const CLUSTERS = 1000;
const ns = "team-payments";
const related: Record<string, unknown> = {};
for (let i = 0; i < CLUSTERS; i++) {
  related[`${ns}/tc-${i}`] = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: {
      name: `tc-${i}`,
      namespace: ns,
      uid: `uid-${i}`,
      labels: { "butler.butlerlabs.dev/environment": i % 3 ? "dev" : "prod" },
      annotations: { "butler.butlerlabs.dev/owner": `user${i % 20}@example.com` },
    },
    spec: {
      providerConfigRef: { name: "harvester-prod" },
      ...(i % 2
        ? {
          workers: { replicas: 1 + (i % 5), machineTemplate: { cpu: "2", memory: "8Gi", diskSize: "50Gi" } },
        }
        : {}),
    },
  };
}
const body = JSON.stringify({
  controller: { metadata: { name: "butler-team" } },
  parent: {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "Team",
    metadata: { name: "payments", uid: "team-uid", generation: 1 },
    spec: {
      access: {
        users: Array.from(
          { length: 20 },
          (_, i) => ({ name: `user${i}@example.com`, role: i ? "operator" : "admin" }),
        ),
        groups: [{ name: "payments-devs", role: "operator" }],
      },
      resourceLimits: {
        maxClusters: 2000,
        maxTotalNodes: 5000,
        maxCPUCores: "10000",
        maxMemory: "40Ti",
        maxStorage: "200Ti",
        maxNodesPerCluster: 10,
      },
      clusterDefaults: { kubernetesVersion: "v1.31.0", workerCount: 2, workerCPU: 2, workerMemoryGi: 4 },
      environments: [
        { name: "dev", limits: { maxClustersPerMember: 100 }, clusterDefaults: { workerMemoryGi: 2 } },
        {
          name: "prod",
          limits: { maxClusters: 600, maxClustersPerMember: 50 },
          clusterDefaults: { workerCount: 3 },
        },
      ],
    },
  },
  children: {},
  related: { "TenantCluster.butler.butlerlabs.dev/v1alpha1": related },
  finalizing: false,
});
const { app } = createTestApp(HOOK_ROUTES);

Deno.bench(
  `Team sync over HTTP: ${CLUSTERS} TenantClusters (${(body.length / 1e6).toFixed(1)} MB request)`,
  async () => {
    const res = await app.request("/hooks/team/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  },
);
