/**
 * What admission's watch cache keeps of each kind it reads, and nothing more: the fields the decisions use. A
 * TenantCluster keeps its name, namespace, uid, resourceVersion, labels, Butler's annotations and deletion
 * timestamp, its spec, and the shape its status recorded (`status.effective`); managed fields, conditions and
 * `kubectl apply`'s last-applied copy are dropped, so 10,000 clusters fit the webhook's memory (docs/performance.md).
 *
 * @module
 */
import type { CachedCollection } from "../kube/mod.ts";
import { GROUP } from "../butler/mod.ts";

// deno-lint-ignore no-explicit-any
type Raw = { metadata?: Record<string, any>; spec?: unknown; status?: Record<string, unknown> } | null;

const BUTLER_PREFIX = `${GROUP}/`;

function metadataOf(raw: Raw): Record<string, unknown> {
  const m = raw?.metadata ?? {};
  const annotations = Object.fromEntries(
    Object.entries((m.annotations ?? {}) as Record<string, string>).filter(([k]) =>
      k.startsWith(BUTLER_PREFIX)
    ),
  );
  return {
    name: m.name,
    ...(m.namespace ? { namespace: m.namespace } : {}),
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    ...(m.labels ? { labels: m.labels } : {}),
    ...(Object.keys(annotations).length ? { annotations } : {}),
    ...(m.deletionTimestamp ? { deletionTimestamp: m.deletionTimestamp } : {}),
  };
}

/**
 * A TenantCluster as the cache keeps it.
 *
 * @example
 * ```ts
 * admissionTenantCluster({ metadata: { name: "a", managedFields: [] }, spec: {}, status: { conditions: [] } });
 * // { metadata: { name: "a", uid: undefined, resourceVersion: undefined }, spec: {} }
 * ```
 */
export function admissionTenantCluster(raw: unknown): unknown {
  const r = raw as Raw;
  const effective = r?.status?.effective;
  return {
    metadata: metadataOf(r),
    ...(r?.spec !== undefined ? { spec: r.spec } : {}),
    ...(effective !== undefined ? { status: { effective } } : {}),
  };
}

/** A Team, ProviderConfig or ledger ConfigMap as the cache keeps it: whole but for managed fields. */
function withoutManagedFields(raw: unknown): unknown {
  const r = raw as Raw & Record<string, unknown>;
  const { managedFields: _, ...metadata } = r?.metadata ?? {};
  const annotations = { ...(metadata.annotations ?? {}) } as Record<string, string>;
  delete annotations["kubectl.kubernetes.io/last-applied-configuration"];
  return { ...r, metadata: { ...metadata, ...(metadata.annotations ? { annotations } : {}) } };
}

const BUTLER = `/apis/${GROUP}/v1alpha1`;

/**
 * The longest pause between the admission cache's failed lists or watches. Reviews that read a collection not yet
 * listed answer 503 (the webhook's failurePolicy then refuses), so the wait after the RBAC or CRDs appear (an
 * install applying them after the pods start, a control plane coming back) must stay short: the watch's default
 * of 30 s left TenantCluster creates refused for half a minute after an install in the real controller tier.
 * Four collections per replica listing every 5 s at worst is little for an API server that is failing anyway.
 */
export const ADMISSION_CACHE_MAX_BACKOFF_MS = 5_000;

/** How the admission cache's watches retry: every collection waits at most {@link ADMISSION_CACHE_MAX_BACKOFF_MS}. */
export const ADMISSION_CACHE_WATCH = Object.freeze({ maxBackoffMs: ADMISSION_CACHE_MAX_BACKOFF_MS });

/**
 * The collections admission reads from its cache: TenantClusters, Teams, ProviderConfigs, and the quota ledgers
 * (ConfigMaps named `butler-quota-ledger` only, which is all RBAC lets the webhook list). IPAllocations are read
 * from the API: only a NetworkPool change reads them.
 */
export const ADMISSION_CACHE: readonly CachedCollection[] = [
  { prefix: BUTLER, resource: "tenantclusters", select: admissionTenantCluster },
  { prefix: BUTLER, resource: "teams", select: withoutManagedFields },
  { prefix: BUTLER, resource: "providerconfigs", select: withoutManagedFields },
  { prefix: "/api/v1", resource: "configmaps", name: "butler-quota-ledger", select: withoutManagedFields },
];
