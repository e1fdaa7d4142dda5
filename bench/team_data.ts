/**
 * The request of the Team benchmarks and load runs: the `payments`-style team (two environments, quotas on every
 * dimension) with `clusters` TenantClusters related, spread over both environments and 20 owners. Every child
 * group is present (empty), as Metacontroller sends them. {@linkcode teamShapeSyncBody} builds a Team of any
 * size, with the children a previous sync asked for observed (the steady state Metacontroller resyncs).
 *
 * @module
 */
import { groupKey, type KubeObject, objectKey } from "../lib/contract/mod.ts";
import { CHILD_TYPES } from "../hooks/team/rbac.ts";
import { syncTeam } from "../hooks/team/sync.ts";
import { DEFAULT_HOOK_CONFIG } from "../lib/hook_context/mod.ts";
import type { CompositeRequest } from "../lib/contract/mod.ts";

const NS = "team-payments";

function relatedClusters(clusters: number): Record<string, unknown> {
  const related: Record<string, unknown> = {};
  for (let i = 0; i < clusters; i++) {
    related[`${NS}/tc-${i}`] = {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "TenantCluster",
      metadata: {
        name: `tc-${i}`,
        namespace: NS,
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
  return related;
}

const LIMITS = {
  maxClusters: 2000,
  maxTotalNodes: 5000,
  maxCPUCores: "10000",
  maxMemory: "40Ti",
  maxStorage: "200Ti",
  maxNodesPerCluster: 10,
};

/** A Team sync request body with `clusters` TenantClusters related. */
export function teamSyncBody(clusters: number): string {
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
        resourceLimits: LIMITS,
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
      "TenantCluster.butler.butlerlabs.dev/v1alpha1": relatedClusters(clusters),
      "ConfigMap.v1": {},
      "ProviderConfig.butler.butlerlabs.dev/v1alpha1": {},
    },
    finalizing: false,
  });
}

/** How large a Team {@linkcode teamShapeSyncBody} builds. */
export interface TeamShape {
  readonly users: number;
  readonly groups: number;
  readonly environments: number;
  /** Users and groups each environment's access names (the first ones of the team, as operators). */
  readonly environmentUsers: number;
  readonly environmentGroups: number;
  /** Length of every user and group name (padded), to measure names at their bound. */
  readonly nameLength?: number;
}

const pad = (base: string, length: number | undefined) =>
  length && base.length < length ? `${base}${"x".repeat(length - base.length)}` : base;

/**
 * A Team of the given shape with `clusters` TenantClusters related, and the children its own sync asks for
 * observed (as Metacontroller sends them once they exist): the request of every resync.
 */
export function teamShapeSyncBody(shape: TeamShape, clusters: number): string {
  const user = (i: number) => pad(`user${i}@example.com`, shape.nameLength);
  const group = (i: number) => pad(`group-${i}`, shape.nameLength);
  const request = {
    controller: { metadata: { name: "butler-team" } },
    parent: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: "payments", uid: "team-uid", generation: 1 },
      spec: {
        access: {
          users: Array.from(
            { length: shape.users },
            (_, i) => ({ name: user(i), role: i ? "viewer" : "admin" }),
          ),
          groups: Array.from({ length: shape.groups }, (_, i) => ({ name: group(i), role: "viewer" })),
        },
        resourceLimits: LIMITS,
        clusterDefaults: { kubernetesVersion: "v1.31.0", workerCount: 2, workerCPU: 2, workerMemoryGi: 4 },
        environments: Array.from({ length: shape.environments }, (_, e) => ({
          name: e === 0 ? "dev" : e === 1 ? "prod" : `env-${e}`,
          limits: { maxClustersPerMember: 100 },
          access: {
            users: Array.from({ length: Math.min(shape.environmentUsers, shape.users) }, (_, i) => ({
              name: user(i),
              role: "operator",
            })),
            groups: Array.from({ length: Math.min(shape.environmentGroups, shape.groups) }, (_, i) => ({
              name: group(i),
              role: "operator",
            })),
          },
        })),
      },
    },
    children: Object.fromEntries(Object.values(CHILD_TYPES).map((t) => [groupKey(t), {}])) as Record<
      string,
      Record<string, KubeObject>
    >,
    related: {
      "TenantCluster.butler.butlerlabs.dev/v1alpha1": relatedClusters(clusters),
      "ConfigMap.v1": {},
      "ProviderConfig.butler.butlerlabs.dev/v1alpha1": {},
    },
    finalizing: false,
  };
  // The steady state: every child the syncs ask for is observed, as the API server stores it (namespaced children
  // are asked for once the Namespace is observed, so twice).
  for (let round = 0; round < 2; round++) {
    const answer = syncTeam(request as unknown as CompositeRequest, {
      now: new Date("2026-01-01T00:00:00Z"),
      config: DEFAULT_HOOK_CONFIG,
    });
    for (const child of answer.children ?? []) {
      const observed = {
        ...child,
        metadata: { ...child.metadata, uid: `uid-${objectKey(child)}`, resourceVersion: "1" },
      } as KubeObject;
      request.children[groupKey(child)]![objectKey(child)] = observed;
    }
  }
  return JSON.stringify(request);
}
