import { butlerPath, keyedItems, LABELS } from "../../lib/butler/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  deletionInUse,
  type StatusCause,
} from "../../lib/contract/mod.ts";
import { type ReadPlan, type Reads, type Staged, staged } from "../../lib/http/mod.ts";
import {
  type Address,
  contains,
  formatAddress,
  parseCidr,
  readPoolSpec,
  subtractRanges,
} from "../../lib/ipam/mod.ts";
import { type DecodedGrant, ledgerHolders, readLedger } from "../../lib/pool_ledger/mod.ts";
import { NetworkPoolSpec } from "../../lib/api/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { firstOverlap, type NamedSpace, otherPoolSpaces, overlapMessage, poolSpace } from "./overlap.ts";
import {
  entryFresh,
  readRegistry,
  REGISTRY_MAX_BYTES,
  REGISTRY_NAME,
  registryObject,
  registryPath,
} from "./registry.ts";
import { poolDeletionBlockedMessage } from "./sync.ts";

interface PoolObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
  readonly spec?: unknown;
  readonly status?: Record<string, unknown> | null;
}

/** The IPAllocation UIDs holding grants in the stored pool a delete would remove. */
function grantedUids(review: AdmissionReviewRequest): string[] {
  if (review.request.operation !== "DELETE") return [];
  return ledgerHolders(review.request.oldObject?.status as Record<string, unknown> | null | undefined);
}

const objectOf = (review: AdmissionReviewRequest) => review.request.object as PoolObject | null | undefined;
const oldObjectOf = (review: AdmissionReviewRequest) =>
  review.request.oldObject as PoolObject | null | undefined;

/** `namespace/name` of the pool under review. */
function poolKey(review: AdmissionReviewRequest): string {
  const m = (objectOf(review) ?? oldObjectOf(review))?.metadata;
  return `${review.request.namespace ?? m?.namespace ?? ""}/${review.request.name ?? m?.name ?? ""}`;
}

/** A create, or an update of the spec: what the overlap, growth and narrowing rules look at. */
function changesSpec(review: AdmissionReviewRequest): boolean {
  const r = review.request;
  return r.operation === "CREATE" ||
    (r.operation === "UPDATE" &&
      JSON.stringify(objectOf(review)?.spec) !== JSON.stringify(oldObjectOf(review)?.spec));
}

/**
 * What a NetworkPool review reads. A delete of a pool with grants: the IPAllocations, to name the holders. A create
 * or a spec update: every NetworkPool and the pool registry, both from the API (pools are few, and the registry
 * is what two racing admissions serialise on); an update that would leave a grant outside the tenant ranges also
 * reads this pool's IPAllocations, to name the holder.
 */
export function networkPoolAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  if (review.request.operation === "DELETE") {
    return grantedUids(review).length
      ? { allocations: { path: butlerPath("ipallocations"), list: true } }
      : {};
  }
  if (!changesSpec(review)) return {};
  const name = objectOf(review)?.metadata?.name ?? review.request.name ?? "";
  return {
    pools: { path: butlerPath("networkpools"), list: true, live: true },
    registry: { path: registryPath(REGISTRY_NAME), cas: true, live: true },
    ...(outsideRanges(review).length
      ? {
        allocations: {
          path: butlerPath("ipallocations"),
          list: true,
          live: true,
          labelSelector: `${LABELS.networkPool}=${name}`,
        },
      }
      : {}),
  };
}

/**
 * NetworkPool admission.
 *
 * - A delete is refused while the pool's ledger (`status.ledger` of the stored object, or `status.grants` of one
 *   not yet migrated) holds grants of IPAllocations that exist and are not being deleted, naming them, with the
 *   message its finalizer reports. A grant whose allocation is gone or terminating is being released: it does not
 *   refuse the delete, and the finalizer holds the pool until the ledger is empty.
 * - A create or a spec update may not take addresses another pool can grant (stored, or admitted in the last
 *   45 s: see the pool registry); its `cidr` may only grow; its tenant ranges may not be narrowed past a grant
 *   whose IPAllocation exists. The deprecated `start`/`end` form is answered with a warning.
 */
export function admitNetworkPool(
  review: AdmissionReviewRequest,
  context: Pick<HookContext, "now">,
  reads: Reads,
): AdmissionDecision | Staged<AdmissionDecision> {
  const r = review.request;
  if (r.operation === "DELETE") return admitDelete(review, reads);
  if (!changesSpec(review)) return { allowed: true };
  const spec = objectOf(review)?.spec;
  const warnings = deprecationWarnings(spec);
  const space = poolSpace(spec);
  // An invalid spec grants nothing: the CRD's rules refuse most of it, the sync reports the rest (InvalidSpec).
  if (!space) return withWarnings({ allowed: true }, warnings);
  const refusal = r.operation === "UPDATE" ? shrinkOrNarrowing(review, reads) : undefined;
  if (refusal) return withWarnings(refusal, warnings);

  const pool = poolKey(review);
  const old = r.operation === "UPDATE" ? poolSpace(oldObjectOf(review)?.spec) : undefined;
  const added = old && old.family === space.family ? subtractRanges(space.ranges, old.ranges) : space.ranges;
  if (!added.length) return withWarnings({ allowed: true }, warnings);

  const registry = readRegistry(reads.registry);
  const overlap = firstOverlap(
    { family: space.family, ranges: added },
    otherSpaces(pool, reads, registry, context.now),
  );
  if (overlap) {
    return withWarnings(
      forbidden([{ reason: "overlap", field: "spec", message: overlapMessage(overlap) }]),
      warnings,
    );
  }
  const { body, bytes } = registryObject(registry, pool, space, context.now);
  if (bytes > REGISTRY_MAX_BYTES) return withWarnings(REGISTRY_FULL, warnings);
  const write = registry.resourceVersion
    ? { method: "PUT" as const, path: registryPath(REGISTRY_NAME), body }
    : { method: "POST" as const, path: registryPath(), body };
  return staged(withWarnings({ allowed: true }, warnings), write, withWarnings(CONTENDED, warnings));
}

/** Every other pool's space: the stored pools, and those the registry says were admitted and may not be stored yet. */
function otherSpaces(
  pool: string,
  reads: Reads,
  registry: ReturnType<typeof readRegistry>,
  now: Date,
): NamedSpace[] {
  const admitted = [...registry.entries.values()].filter((e) => e.pool !== pool && entryFresh(e, now));
  return [...otherPoolSpaces(keyedItems(reads.pools), pool), ...admitted];
}

const CONTENDED: AdmissionDecision = {
  allowed: false,
  code: 409,
  reason: "Conflict",
  message:
    `too many NetworkPools are being admitted at once: the pool registry (ConfigMap ${REGISTRY_NAME}) kept changing; try again`,
};

const REGISTRY_FULL: AdmissionDecision = {
  allowed: false,
  code: 429,
  reason: "TooManyRequests",
  message:
    `too many NetworkPools are being admitted at once: the pool registry (ConfigMap ${REGISTRY_NAME}) would pass its bound of ${REGISTRY_MAX_BYTES} bytes; try again in 45 s`,
};

/** A refusal as Kubernetes prints field errors (`path: Forbidden: detail`), one cause per rule. */
function forbidden(causes: readonly (StatusCause & { field: string })[]): AdmissionDecision {
  const text = causes.map((c) => `${c.field}: Forbidden: ${c.message}`);
  return {
    allowed: false,
    code: 403,
    reason: "Forbidden",
    message: text.length === 1 ? text[0]! : `[${text.join(", ")}]`,
    causes,
  };
}

function withWarnings(decision: AdmissionDecision, warnings: readonly string[]): AdmissionDecision {
  return warnings.length ? { ...decision, warnings: [...warnings] } : decision;
}

/**
 * The warnings of the deprecated `tenantAllocation.start`/`end` form, as upstream's webhook gives them.
 *
 * @example
 * ```ts
 * deprecationWarnings({ cidr: "10.40.0.0/24", tenantAllocation: { start: "10.40.0.10", end: "10.40.0.99" } });
 * // ['spec.tenantAllocation.start/end are deprecated: use spec.tenantAllocation.ranges: [{start: "10.40.0.10", end: "10.40.0.99"}]']
 * ```
 */
export function deprecationWarnings(spec: unknown): string[] {
  const t = NetworkPoolSpec.safeParse(spec).data?.tenantAllocation;
  if (!t || (t.start === undefined && t.end === undefined)) return [];
  if (t.ranges?.length) {
    return [
      "spec.tenantAllocation.start/end are deprecated and ignored because spec.tenantAllocation.ranges is set; remove them",
    ];
  }
  return [
    `spec.tenantAllocation.start/end are deprecated: use spec.tenantAllocation.ranges: [{start: ${
      JSON.stringify(t.start ?? "")
    }, end: ${JSON.stringify(t.end ?? "")}}]`,
  ];
}

/** Why a pool's CIDR may not change so: it must contain the previous one. */
export function cidrShrinkMessage(next: string, previous: string): string {
  return `new CIDR ${JSON.stringify(next)} does not contain the previous CIDR ${
    JSON.stringify(previous)
  }; shrinking a pool may orphan existing allocations`;
}

/** Why tenant ranges may not be narrowed: an IPAllocation holds an address outside them. */
export function narrowingMessage(allocation: string, address: string): string {
  return `cannot narrow tenant allocation ranges: IPAllocation ${
    JSON.stringify(allocation)
  } has address ${address} outside the proposed ranges. Migrate or delete affected allocations first`;
}

/** Grants left outside, by review: the read plan asks on every round of reads, and the decision once more. */
const OUTSIDE = new WeakMap<AdmissionReviewRequest, readonly { grant: DecodedGrant; first: Address }[]>();

/**
 * The grants of the stored pool that the proposed tenant ranges would leave outside, with their first such address;
 * decoded once per review (a ledger may hold 20,000 grants).
 */
function outsideRanges(review: AdmissionReviewRequest): readonly { grant: DecodedGrant; first: Address }[] {
  let outside = OUTSIDE.get(review);
  if (!outside) OUTSIDE.set(review, outside = grantsOutside(review));
  return outside;
}

function grantsOutside(review: AdmissionReviewRequest): { grant: DecodedGrant; first: Address }[] {
  if (review.request.operation !== "UPDATE") return [];
  const next = NetworkPoolSpec.safeParse(objectOf(review)?.spec);
  const read = next.success ? readPoolSpec(next.data) : undefined;
  if (!read?.ok) return [];
  const status = oldObjectOf(review)?.status;
  const ledger = status ? readLedger(status) : undefined;
  if (!ledger?.ok || !ledger.ledger.size) return [];
  return ledger.ledger.decode().flatMap((grant) => {
    if (grant.family !== read.pool.family) return [];
    if (read.pool.allocatable.some((a) => contains(a, grant.range))) return [];
    const outside = subtractRanges([grant.range], read.pool.allocatable)[0]!;
    return [{ grant, first: { family: grant.family, value: outside.start } }];
  });
}

/** A spec update that shrinks the CIDR, or narrows the tenant ranges past a grant whose IPAllocation exists. */
function shrinkOrNarrowing(review: AdmissionReviewRequest, reads: Reads): AdmissionDecision | undefined {
  const nextSpec = NetworkPoolSpec.safeParse(objectOf(review)?.spec).data;
  const nextText = nextSpec?.cidr;
  const prevText = NetworkPoolSpec.safeParse(oldObjectOf(review)?.spec).data?.cidr;
  const next = nextText ? parseCidr(nextText) : undefined;
  const prev = prevText ? parseCidr(prevText) : undefined;
  if (
    next?.ok && prev?.ok && (next.value.family !== prev.value.family || !contains(next.value, prev.value))
  ) {
    return forbidden([{
      reason: "cidrShrink",
      field: "spec.cidr",
      message: cidrShrinkMessage(nextText!, prevText!),
    }]);
  }
  const outside = outsideRanges(review);
  if (!outside.length) return undefined;
  // A grant whose IPAllocation is gone or terminating is being released: it does not hold the ranges.
  const live = liveHolders(reads);
  const held = outside.find(({ grant }) => live.has(grant.uid));
  if (!held) return undefined;
  const field = nextSpec?.tenantAllocation?.ranges?.length
    ? "spec.tenantAllocation.ranges"
    : "spec.tenantAllocation";
  return forbidden([{
    reason: "narrowing",
    field,
    message: narrowingMessage(live.get(held.grant.uid)!, formatAddress(held.first.family, held.first.value)),
  }]);
}

/** A delete, refused while the pool's grants are held by IPAllocations that exist and are not being deleted. */
function admitDelete(review: AdmissionReviewRequest, reads: Reads): AdmissionDecision {
  const uids = grantedUids(review);
  if (uids.length === 0) return { allowed: true };
  const live = liveHolders(reads);
  const blocking = uids.flatMap((uid) => live.has(uid) ? [live.get(uid)!] : []).sort();
  if (blocking.length === 0) return { allowed: true };
  return deletionInUse(poolDeletionBlockedMessage(blocking));
}

/** The IPAllocations read that exist and are not being deleted: `namespace/name` by UID. */
function liveHolders(reads: Reads): Map<string | undefined, string> {
  return new Map(
    keyedItems(reads.allocations).flatMap(([key, a]) => {
      const m = (a as { metadata: { uid?: string; deletionTimestamp?: string | null } }).metadata;
      return m.deletionTimestamp ? [] : [[m.uid, key] as const];
    }),
  );
}
