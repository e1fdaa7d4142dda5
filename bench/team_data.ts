/**
 * The request of the Team benchmarks and load runs: the `payments`-style team (two environments, quotas on every
 * dimension) with `clusters` TenantClusters related, spread over both environments and 20 owners. Every child
 * group is present (empty), as Metacontroller sends them.
 *
 * @module
 */
import { groupKey } from "../lib/contract/mod.ts";
import { CHILD_TYPES } from "../hooks/team/rbac.ts";

/** A Team sync request body with `clusters` TenantClusters related. */
export function teamSyncBody(clusters: number): string {
  const ns = "team-payments";
  const related: Record<string, unknown> = {};
  for (let i = 0; i < clusters; i++) {
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
            workers: {
              replicas: 1 + (i % 5),
              machineTemplate: { cpu: "2", memory: "8Gi", diskSize: "50Gi" },
            },
          }
          : {}),
      },
    };
  }
  return JSON.stringify({
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
    children: Object.fromEntries(Object.values(CHILD_TYPES).map((t) => [groupKey(t), {}])),
    related: {
      "TenantCluster.butler.butlerlabs.dev/v1alpha1": related,
      "ProviderConfig.butler.butlerlabs.dev/v1alpha1": {},
    },
    finalizing: false,
  });
}
