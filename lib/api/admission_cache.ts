/**
 * What admission's watch cache keeps of each kind it reads, and nothing more: the fields the decisions use, as
 * projections (`lib/foreign/project.ts`), so that what a team stores beside them (free-form addon values, large
 * annotations, labels by the thousand) is skipped in the bytes, never parsed, whatever its shape. Each kept value
 * is bounded too: an object stored before a bound (or while the webhook was away) costs the cache no more than one
 * stored after it. So 10,000 clusters fit the webhook's memory (docs/performance.md), and no object can keep the
 * cache from syncing.
 *
 * @module
 */
import { API_OBJECT_EVENT_BYTES, type CachedCollection } from "../kube/mod.ts";
import { bounded, each, members, type Projection, WHOLE } from "../foreign/mod.ts";
import { CREATOR_ANNOTATION, GROUP, LABELS, MIGRATION_ANNOTATION, OWNER_ANNOTATIONS } from "../butler/mod.ts";

/**
 * The longest annotation value admission reads (an owner's identity, the migration flag); the identity policy
 * refuses longer ones on TenantClusters, and the cache keeps {@linkcode OVER_BOUND} in place of one stored before.
 */
export const MAX_READ_ANNOTATION_BYTES = 1024;

/** What the cache keeps of a value past its bound: a string no identity, environment or flag can equal. */
export const OVER_BOUND = "\u0000(over its bound)";

/** The most of one spec member (or kept status member) the cache reads: the CRDs bound each far below it. */
const MAX_MEMBER_BYTES = 64 * 1024;

const READ_LABELS = new Set<string>(Object.values(LABELS));
const READ_ANNOTATIONS = new Set<string>([...OWNER_ANNOTATIONS, CREATOR_ANNOTATION, MIGRATION_ANNOTATION]);

/** An object's identity and the labels and annotations admission reads, each bounded. */
const METADATA: Projection = members({
  name: bounded(253),
  namespace: bounded(253),
  uid: bounded(64),
  resourceVersion: bounded(64),
  generation: bounded(32),
  creationTimestamp: bounded(64),
  deletionTimestamp: bounded(64),
  labels: members({}, (k) => READ_LABELS.has(k) ? bounded(63 + 2, OVER_BOUND) : undefined),
  annotations: members(
    {},
    (k) => READ_ANNOTATIONS.has(k) ? bounded(6 * MAX_READ_ANNOTATION_BYTES + 2, OVER_BOUND) : undefined,
  ),
});

const MEMBER = bounded(MAX_MEMBER_BYTES, OVER_BOUND);

/** Every member of a spec, each bounded, but those `skip` names (free-form, or not read). */
function specWithout(skip: Readonly<Record<string, Projection | undefined>>): Projection {
  return members({}, (k) => Object.hasOwn(skip, k) ? skip[k] : MEMBER);
}

/**
 * A TenantCluster: its identity, its spec without the addons' free-form `values` (their names and versions kept),
 * and the shape its status recorded (`status.effective`).
 */
export const TENANT_CLUSTER_PROJECTION: Projection = members({
  metadata: METADATA,
  spec: specWithout({ addons: each(members({ name: bounded(253 + 2), version: bounded(128 + 2) }), 64) }),
  status: members({ effective: MEMBER }),
});

/** A Team: its identity and spec, without the namespace quotas (free-form, the platform's, not read here). */
export const TEAM_PROJECTION: Projection = members({
  metadata: METADATA,
  spec: specWithout({ namespaceQuota: undefined }),
});

/** A ProviderConfig, an IPAllocation or a NetworkPool: its identity and spec (no status: ledgers are large). */
export const SPEC_PROJECTION: Projection = members({ metadata: METADATA, spec: specWithout({}) });

/** The quota ledger: its identity and its data (written by the webhook alone). */
export const LEDGER_PROJECTION: Projection = members({ metadata: METADATA, data: WHOLE });

const BUTLER = `/apis/${GROUP}/v1alpha1`;

/**
 * The longest pause between the admission cache's failed lists or watches. Reviews that read a collection not yet
 * listed answer 503 (the webhook's failurePolicy then refuses), so the wait after the RBAC or CRDs appear (an
 * install applying them after the pods start, a control plane coming back) must stay short: the watch's default
 * of 30 s left TenantCluster creates refused for half a minute after an install in the real controller tier.
 * Four collections per replica listing every 5 s at worst is little for an API server that is failing anyway.
 */
export const ADMISSION_CACHE_MAX_BACKOFF_MS = 5_000;

/**
 * How the admission cache's watches retry and read: every collection waits at most
 * {@link ADMISSION_CACHE_MAX_BACKOFF_MS}, and reads an event as large as any object the API server stores (a team
 * may store one past 1 MiB: a watch that could not read its event would relist on every change of it).
 */
export const ADMISSION_CACHE_WATCH = Object.freeze({
  maxBackoffMs: ADMISSION_CACHE_MAX_BACKOFF_MS,
  maxEventBytes: API_OBJECT_EVENT_BYTES,
});

/**
 * The collections admission reads from its cache: TenantClusters, Teams, ProviderConfigs, IPAllocations and
 * NetworkPools (so that no review, whoever sends it, makes the webhook list them from the API), and the quota
 * ledgers (ConfigMaps named `butler-quota-ledger` only, which is all RBAC lets the webhook list).
 */
export const ADMISSION_CACHE: readonly CachedCollection[] = [
  { prefix: BUTLER, resource: "tenantclusters", projection: TENANT_CLUSTER_PROJECTION },
  { prefix: BUTLER, resource: "teams", projection: TEAM_PROJECTION },
  { prefix: BUTLER, resource: "providerconfigs", projection: SPEC_PROJECTION },
  { prefix: BUTLER, resource: "ipallocations", projection: SPEC_PROJECTION },
  { prefix: BUTLER, resource: "networkpools", projection: SPEC_PROJECTION },
  { prefix: "/api/v1", resource: "configmaps", name: "butler-quota-ledger", projection: LEDGER_PROJECTION },
];
