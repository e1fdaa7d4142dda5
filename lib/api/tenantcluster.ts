import { VERSION_PATTERN } from "../version/mod.ts";
import { z } from "zod";
import { SYSTEM_NAMESPACE } from "../butler/mod.ts";
import { NetworkPoolSpec } from "./networkpool.ts";
import { recordOf } from "./grant_record.ts";
import { formatAddress, formatRange } from "../ipam/mod.ts";
import { NetworkConfig, ProviderScope } from "./providerconfig.ts";

const Quantity = z.union([z.string().max(64), z.number()]);

/**
 * What a TenantCluster may hold (issue #46): the CRD's `maxItems` and `maxLength`, mirrored (`tests/crd_bounds_test.ts`).
 * An addon is a name, a version and its values; a cluster with more than a few dozen is a platform, not a cluster.
 */
export const TENANT_CLUSTER_BOUNDS = {
  /** `spec.addons`. */
  addons: 64,
} as const;

/** `TenantCluster.spec` as the hook reads it. */
export const TenantClusterSpec = z.looseObject({
  teamRef: z.looseObject({ name: z.string().min(1).max(253) }).optional(),
  providerConfigRef: z.looseObject({
    name: z.string().min(1).max(253),
    namespace: z.string().min(1).max(63).optional(),
  }).optional(),
  kubernetesVersion: z.string().max(32).regex(new RegExp(VERSION_PATTERN), "must look like v1.31.0 or 1.31.0")
    .optional(),
  workers: z.looseObject({
    replicas: z.number().int().min(1).optional(),
    machineTemplate: z.looseObject({
      cpu: Quantity.optional(),
      memory: Quantity.optional(),
      diskSize: Quantity.optional(),
    })
      .optional(),
  }).optional(),
  networking: z.looseObject({
    lbPoolSize: z.number().int().min(1).optional(),
    nodeIPs: z.number().int().min(1).optional(),
  }).optional(),
  addons: z.array(
    z.looseObject({ name: z.string().min(1).max(253), version: z.string().max(128).optional() }),
  )
    .max(TENANT_CLUSTER_BOUNDS.addons).optional(),
});
/** A TenantCluster's spec. */
export type TenantClusterSpec = z.infer<typeof TenantClusterSpec>;

/** An IPAllocation child as the TenantCluster reads it. */
export const ChildAllocation = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).nullable().optional(),
    annotations: z.record(z.string(), z.string()).nullable().optional().catch(undefined),
    deletionTimestamp: z.string().nullable().optional(),
  }),
  spec: z.looseObject({
    poolRef: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
    type: z.enum(["nodes", "loadbalancer"]),
    count: z.number().int().optional(),
    pinnedRange: z.looseObject({ startAddress: z.string(), endAddress: z.string() }).optional(),
  }),
  status: z.looseObject({
    phase: z.string().optional(),
    cidr: z.string().optional(),
    startAddress: z.string().optional(),
    endAddress: z.string().optional(),
    allocatedCount: z.number().int().optional(),
  }).nullable().optional(),
}).transform(withRecordedGrant);
/** An IPAllocation child. */
export type ChildAllocation = z.infer<typeof ChildAllocation>;

/**
 * An allocation as its grant stands: the grant it records on itself (annotation) is Allocated whatever its status
 * says, so that a status lost, rolled back or restored without status changes nothing a cluster decides; an
 * allocation without a record is read from its status (as written before grants were recorded).
 */
function withRecordedGrant<
  T extends {
    metadata: { annotations?: Record<string, string> | null };
    spec: { poolRef: { name: string; namespace?: string } };
    status?: Record<string, unknown> | null;
  },
>(c: T): T {
  const r = recordOf(c.metadata);
  if (!r || r.pool !== `${c.spec.poolRef.namespace ?? SYSTEM_NAMESPACE}/${c.spec.poolRef.name}`) return c;
  const size = r.range.end - r.range.start + 1n;
  return {
    ...c,
    status: {
      ...c.status,
      phase: "Allocated",
      cidr: formatRange(r.family, r.range),
      startAddress: formatAddress(r.family, r.range.start),
      endAddress: formatAddress(r.family, r.range.end),
      allocatedCount: Number(size > 2147483647n ? 2147483647n : size),
    },
  };
}

/** The ProviderConfig fields the TenantCluster uses (the ProviderConfig hook's own schemas). */
export const ProviderView = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    deletionTimestamp: z.string().nullable().optional(),
  }),
  spec: z.looseObject({
    provider: z.string().optional(),
    scope: ProviderScope.optional(),
    network: NetworkConfig.optional(),
    limits: z.looseObject({
      maxClustersPerTeam: z.number().int().min(1).optional(),
      maxNodesPerTeam: z.number().int().min(1).optional(),
    }).optional(),
  }),
});
/** A ProviderConfig as the TenantCluster sees it. */
export type ProviderView = z.infer<typeof ProviderView>;

/**
 * A NetworkPool as the TenantCluster sees it: its spec (for defaults), its largest free block, and whether it is
 * being deleted (it then grants nothing).
 */
export const PoolView = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    deletionTimestamp: z.string().nullable().optional(),
  }),
  spec: NetworkPoolSpec,
  status: z.looseObject({ largestFreeBlock: z.number().optional() }).optional(),
});
/** A NetworkPool as the TenantCluster sees it. */
export type PoolView = z.infer<typeof PoolView>;

/** What the TenantCluster keeps in `status.ipam` between syncs. */
export const IpamMemory = z.looseObject({
  nextGrowthIndex: z.number().int().min(1).optional(),
  unusedSince: z.record(z.string(), z.string()).optional(),
  failedPools: z.record(z.string(), z.array(z.string())).optional(),
  /** Growth allocations asked for but not observed yet (the child cache can lag): re-requested, counted in flight. */
  requested: z.record(z.string(), z.looseObject({ pool: z.string(), count: z.number().int().min(1) }))
    .optional(),
  /** Growth allocations released and still observed: kept out until they are gone (the cache can lag). */
  released: z.array(z.string()).optional(),
}).catch({});
/** Status memory of the IPAM decisions. */
export type IpamMemory = z.infer<typeof IpamMemory>;

/** The ProviderConfig a TenantCluster spec names (namespace default butler-system), if it names one. */
export function providerRefOf(spec: unknown): { name: string; namespace: string } | undefined {
  const ref = (spec as { providerConfigRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.providerConfigRef;
  if (typeof ref?.name !== "string" || !ref.name) return undefined;
  return {
    name: ref.name,
    namespace: typeof ref.namespace === "string" && ref.namespace ? ref.namespace : SYSTEM_NAMESPACE,
  };
}

/**
 * The Team a TenantCluster belongs to: `spec.teamRef.name`, else the team whose namespace (`team-{name}`) it is in.
 *
 * @example
 * ```ts
 * teamNameOf("team-payments", {}); // "payments"
 * ```
 */
export function teamNameOf(namespace: string, spec: unknown): string | undefined {
  const ref = (spec as { teamRef?: { name?: unknown } } | undefined)?.teamRef?.name;
  if (typeof ref === "string" && ref) return ref;
  return namespace.startsWith("team-") && namespace.length > 5 ? namespace.slice(5) : undefined;
}

/** A ProviderConfig reference with its namespace resolved. */
export interface ProviderRef {
  readonly name: string;
  readonly namespace: string;
}

/** The ProviderConfig a TenantCluster uses, where the reference came from, and where it was looked for. */
export interface ProviderChoice {
  readonly ref: ProviderRef;
  readonly source: "explicit" | "team";
  /** The Team default as recorded at the cluster's first sync (not the Team's current one). */
  readonly recorded?: true;
  /** What was looked for, for a "not found" message. */
  readonly looked: string;
}

/**
 * Where a Team's default provider (`spec.providerConfigRef.name`) is looked up, in order: the team namespace
 * (the seed's Team CRD says so), then `butler-system` (where the seed's examples keep the ProviderConfigs they
 * name).
 *
 * @example
 * ```ts
 * teamProviderNamespaces("team-payments"); // ["team-payments", "butler-system"]
 * ```
 */
export function teamProviderNamespaces(clusterNamespace: string): string[] {
  return clusterNamespace === SYSTEM_NAMESPACE ? [SYSTEM_NAMESPACE] : [clusterNamespace, SYSTEM_NAMESPACE];
}

/**
 * The Team default a cluster was given when it was first synced (`status.effective.providerConfigRef` with
 * source `team`): a later change of the Team's default does not move it.
 *
 * @example
 * ```ts
 * recordedProviderRef({ effective: { providerConfigRef: { value: { name: "h", namespace: "butler-system" }, source: "team" } } });
 * // { name: "h", namespace: "butler-system" }
 * ```
 */
export function recordedProviderRef(status: unknown): ProviderRef | undefined {
  const r = (status as { effective?: { providerConfigRef?: { value?: unknown; source?: unknown } } } | null)
    ?.effective?.providerConfigRef;
  const v = r?.value as { name?: unknown; namespace?: unknown } | undefined;
  return r?.source === "team" && typeof v?.name === "string" && v.name && typeof v.namespace === "string" &&
      v.namespace
    ? { name: v.name, namespace: v.namespace }
    : undefined;
}

/**
 * The ProviderConfig a TenantCluster uses, exactly as the controller, admission and the finalizers resolve it:
 * its own `providerConfigRef`; else the Team default it was given at its first sync (`recorded`, from
 * {@linkcode recordedProviderRef}); else its Team's default, the first of {@linkcode teamProviderNamespaces} where
 * `exists` finds it (the last one when none does, so a default created later is found where it will be looked
 * for). `undefined` when neither the cluster nor its Team names one.
 *
 * @example
 * ```ts
 * resolveProviderRef("team-a", {}, { team: "a", defaultName: "harvester" }, () => false);
 * // { ref: { name: "harvester", namespace: "butler-system" }, source: "team", looked: ... }
 * ```
 */
export function resolveProviderRef(
  namespace: string,
  spec: unknown,
  team: { readonly team?: string | undefined; readonly defaultName?: string | undefined },
  exists: (ref: ProviderRef) => boolean,
  recorded?: ProviderRef | undefined,
): ProviderChoice | undefined {
  const own = providerRefOf(spec);
  if (own) return { ref: own, source: "explicit", looked: `${own.namespace}/${own.name}` };
  if (recorded) {
    return {
      ref: recorded,
      source: "team",
      recorded: true,
      looked: `${providerKey(recorded)} (recorded in status.effective)`,
    };
  }
  const name = team.defaultName;
  if (!team.team || !name) return undefined;
  const candidates = teamProviderNamespaces(namespace).map((ns) => ({ name, namespace: ns }));
  return {
    ref: candidates.find(exists) ?? candidates.at(-1)!,
    source: "team",
    looked: `"${name}" (team "${team.team}"'s providerConfigRef) in ${
      candidates.map((c) => c.namespace).join(" or ")
    }`,
  };
}

/** `namespace/name` of a provider reference: how ledgers, usage and related maps key it. */
export function providerKey(ref: ProviderRef): string {
  return `${ref.namespace}/${ref.name}`;
}
