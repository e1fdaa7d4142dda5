/**
 * Granting a NetworkPool's pending IPAllocations, in FIFO order: best-fit for a count, exactly the range for a
 * pinned one, within the ledger's bounds, and never while the pool overlaps another or holds grants of a family
 * its spec no longer has. Each refusal says why, in the allocation's status.
 *
 * @module
 */
import { KINDS } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { type DecoratorRequest, groupKey } from "../../lib/contract/mod.ts";
import {
  type Address,
  Allocator,
  type Family,
  familyName,
  formatAddress,
  formatSpan,
  grantableRanges,
  isOffsetRanges,
  parseAddress,
  type PoolModel,
  type Range,
  toRanges,
} from "../../lib/ipam/mod.ts";
import {
  MAX_GRANTS,
  MAX_LEDGER_BYTES,
  type PoolLedger,
  recordBound,
  type StoredLedger,
} from "../../lib/pool_ledger/mod.ts";
import {
  DEFAULT_LB_POOL_PER_TENANT,
  DEFAULT_NODES_PER_TENANT,
  type GrantRecord,
  type IPAllocationSpec,
  type NetworkPoolSpec,
  type ObservedAllocation,
  recordOf,
} from "../../lib/api/mod.ts";
import { firstOverlap, otherPoolSpaces, type Overlap, overlapMessage, type poolSpace } from "./overlap.ts";
import { type ReleaseOutcome, withCooling } from "./releases.ts";
import { capacityConditions, type Figures, figuresOf } from "./figures.ts";

/** Why an allocation is refused once the ledger holds {@linkcode MAX_GRANTS} grants. */
export const LEDGER_FULL_MESSAGE =
  `pool ledger is full: a NetworkPool records at most ${MAX_GRANTS} grants; add another pool to the ProviderConfig`;

/** Why an allocation is refused when its record could take the ledger past {@linkcode MAX_LEDGER_BYTES}. */
export const LEDGER_BYTES_FULL_MESSAGE =
  `pool ledger is full: its grants would take more than ${MAX_LEDGER_BYTES} bytes of the pool's status; add another pool to the ProviderConfig`;

/** Why an allocation waits when the pool's spec changed family while grants of the other family remain. */
export function familyChangedMessage(pool: string, held: Family, spec: Family): string {
  return `NetworkPool ${pool} holds ${familyName(held)} grants but its spec is now ${
    familyName(spec)
  }; no new grants until they are released`;
}

/** Why a pool that overlaps another grants nothing new. */
export function overlappingMessage(o: Overlap): string {
  return `${overlapMessage(o)}; no new grants from this pool until one of them is changed or removed`;
}

/** Why an allocation waits in a pool that overlaps another (short: it is copied to the allocation's status). */
export function overlapRefusal(pool: string, o: Overlap): string {
  return `NetworkPool ${pool} overlaps NetworkPool ${o.pool} at ${
    formatSpan(o.family, o.range)
  }; no new grants until one of them is changed or removed`;
}

/**
 * Where this pool's space meets another pool's, from the related NetworkPools. Metacontroller may keep a
 * customize answer from before the pools were related for up to 20 minutes after an upgrade: until the group is
 * delivered, no overlap is known (admission has refused overlapping pools all along).
 */
function overlapOf(
  request: DecoratorRequest,
  space: NonNullable<ReturnType<typeof poolSpace>>,
): Overlap | undefined {
  const group = request.related[groupKey(KINDS.NetworkPool)];
  if (!group) return undefined;
  const self = request.object.metadata;
  return firstOverlap(space, otherPoolSpaces(Object.entries(group), `${self.namespace ?? ""}/${self.name}`));
}

/** How many addresses an allocation asks for: its count, else the pool's default for its type. */
function requestedCount(spec: IPAllocationSpec, pool: NetworkPoolSpec): number {
  const defaults = pool.tenantAllocation?.defaults;
  return spec.count ??
    (spec.type === "nodes"
      ? defaults?.nodesPerTenant ?? DEFAULT_NODES_PER_TENANT
      : defaults?.lbPoolPerTenant ?? DEFAULT_LB_POOL_PER_TENANT);
}

/** Why a request that did not fit may fit later: addresses cooling down, and when the first is free again. */
function coolingNote(ips: bigint, released: ReleaseOutcome): string {
  return ` (${ips} released addresses are cooling down; the first are free again in ${released.resyncAfterSeconds} s)`;
}

/**
 * The grant an allocation's status records, taken back when this pool gave it (by name), it is the size asked for
 * and it is free. A pool holds no grant for an allocation that records one only when its ledger was lost (the pool
 * deleted past its finalizer and created again): without this the grant would move, and the old holder would keep
 * using addresses handed to another (docs/design.md#the-pool-is-the-single-writer).
 */
function takenBack(allocator: Allocator, a: ObservedAllocation, pool: string, count: number) {
  const r = a.status;
  if (!r || r.allocatedBy !== pool) return undefined;
  const start = parseAddress(r.startAddress);
  const end = parseAddress(r.endAddress);
  if (!start || !end || start.family !== end.family || end.value - start.value + 1n !== BigInt(count)) {
    return undefined;
  }
  return allocator.pin(r.startAddress, r.endAddress);
}

/** Why a recorded grant is not taken back: its addresses are another grant's, or no longer this pool's to grant. */
export function recordConflictMessage(pool: string, record: GrantRecord, why: string): string {
  const span = formatSpan(record.family, record.range);
  return `IPAllocation records ${span} from NetworkPool ${pool}, which cannot take it back (${why}); it keeps the record and nothing else is granted in its place`;
}

/** The grant an allocation records on itself (annotation) from this pool, if any. */
function ownRecord(a: ObservedAllocation, pool: string): GrantRecord | undefined {
  const r = recordOf(a.metadata);
  return r && r.pool === pool ? r : undefined;
}

/**
 * A recorded grant taken back into the ledger: its holder's, even in a pool being deleted (which then keeps its
 * finalizer), never replaced by another range.
 */
function takeBack(
  allocator: Allocator,
  r: GrantRecord,
  family: Family,
): { range: Range } | { error: string } {
  if (r.family !== family) return { error: `it is IPv${r.family}, the pool IPv${family}` };
  const back = allocator.pin(formatAddress(r.family, r.range.start), formatAddress(r.family, r.range.end));
  return back.ok ? { range: back.value } : { error: back.error.message };
}

/** The allocator over what is held (nothing, for a pool whose spec changed family) and what is cooling. */
function allocatorOf(
  model: Omit<PoolModel, "allocations">,
  ledger: PoolLedger | undefined,
  cooling: NonNullable<ReleaseOutcome["cooling"]>,
): Allocator {
  const grantsNow = ledger?.ranges() ?? [];
  return Allocator.create({
    ...model,
    allocations: ledger && cooling.length
      ? withCooling(isOffsetRanges(grantsNow) ? toRanges(grantsNow) : grantsNow, cooling)
      : grantsNow,
  });
}

/** Why a pool grants nothing new now, if it does not. */
function waitReason(
  finalizing: boolean | undefined,
  poolName: string,
  overlap: Overlap | undefined,
  held: [held: Family, spec: Family] | undefined,
  grants: number,
): string | undefined {
  return finalizing
    ? `NetworkPool ${poolName} is being deleted`
    : overlap
    ? overlapRefusal(poolName, overlap)
    : held
    ? familyChangedMessage(poolName, held[0], held[1])
    : grants >= MAX_GRANTS
    ? LEDGER_FULL_MESSAGE
    : undefined;
}

/** What a pool sync decided of its ledger: the ledger to store, the figures, the capacity conditions and Ready. */
export interface Outcome {
  readonly stored: StoredLedger;
  readonly figures: Partial<Figures>;
  readonly capacity: ConditionInput[];
  readonly ready: ConditionInput;
}

/** What granting reads: the pool (valid spec), its ledger of kept grants, and the allocations waiting, in order. */
export interface GrantInput {
  readonly request: DecoratorRequest;
  readonly now: Date;
  /** `namespace/name` of the pool, for messages. */
  readonly poolName: string;
  readonly spec: NetworkPoolSpec;
  readonly model: Omit<PoolModel, "allocations">;
  /** The pool's first address: where a new ledger's offsets count from. */
  readonly first: Address;
  readonly ledger: PoolLedger;
  readonly pending: readonly { readonly allocation: ObservedAllocation; readonly token: string }[];
  readonly released: ReleaseOutcome | undefined;
  /** Records why an allocation was not granted. */
  readonly refuse: (uid: string, message: string) => void;
  /** While a rebuilt ledger waits to be seen: only recorded grants are taken back, nothing new is granted. */
  readonly recordsOnly?: boolean;
}

/** Grants what can be granted, refuses the rest with why, and says what the pool now holds. */
export function grantPending(g: GrantInput): Outcome {
  const { request, now, poolName, spec, model, first, ledger, released, refuse } = g;
  const family: Family = model.family;
  // A pool whose spec changed family keeps the other family's grants until they go, and grants nothing new.
  const held = ledger.size && ledger.family !== family ? ledger.family : undefined;
  const allocator = allocatorOf(model, held ? undefined : ledger, released?.cooling ?? []);
  const coolingIPs = held ? 0n : released?.coolingIPs ?? 0n;
  const base = held || ledger.base === undefined ? first.value : ledger.base;
  const last = model.allocatable[model.allocatable.length - 1]!.end;
  const overlap = overlapOf(request, { family, ranges: grantableRanges(model) });
  const added: { range: Range; token: string; at?: Date }[] = [];
  let bytes: number | undefined;
  for (const { allocation: a, token } of g.pending) {
    const uid = a.metadata.uid;
    const record = ownRecord(a, poolName);
    if (record) {
      const why = ledger.size + added.length >= MAX_GRANTS ? LEDGER_FULL_MESSAGE : undefined;
      const back = why ? undefined : takeBack(allocator, record, family);
      if (back && "range" in back) added.push({ range: back.range, token, at: new Date(record.grantedAt) });
      else refuse(uid, why ?? recordConflictMessage(poolName, record, back!.error));
      continue;
    }
    if (g.recordsOnly) continue;
    const waits = waitReason(
      request.finalizing,
      poolName,
      overlap,
      held && [held, family],
      ledger.size + added.length,
    );
    if (waits) {
      refuse(uid, waits);
      continue;
    }
    const pin = a.spec.pinnedRange;
    const count = pin ? undefined : requestedCount(a.spec, spec);
    const bound = recordBound(base, last, count === undefined ? undefined : BigInt(count), now, token);
    bytes ??= ledger.bytes();
    if (bytes + bound > MAX_LEDGER_BYTES) {
      refuse(uid, LEDGER_BYTES_FULL_MESSAGE);
      continue;
    }
    const kept = pin ? undefined : takenBack(allocator, a, `NetworkPool ${poolName}`, count!);
    const result = pin
      ? allocator.pin(pin.startAddress, pin.endAddress)
      : kept?.ok
      ? kept
      : allocator.allocate(count!);
    if (!result.ok) {
      refuse(
        uid,
        coolingIPs ? `${result.error.message}${coolingNote(coolingIPs, released!)}` : result.error.message,
      );
      continue;
    }
    added.push({ range: result.value, token });
    bytes += bound;
  }
  const c = allocator.capacity();
  const grants = ledger.size + added.length;
  return {
    stored: ledger.withGrants(added, now, family),
    figures: figuresOf(c, grants, coolingIPs, (spec.releaseCooldownSeconds ?? 0) > 0),
    capacity: capacityConditions(c),
    ready: overlap
      ? { type: "Ready", status: "False", reason: "Overlapping", message: overlappingMessage(overlap) }
      : {
        type: "Ready",
        status: "True",
        reason: "Ready",
        message: `${c.available}/${c.total} IPs available (${grants} allocations)`,
      },
  };
}
