import {
  API_VERSION,
  KINDS,
  LABELS,
  requireDelivered,
  statusNumber,
  SYSTEM_NAMESPACE,
} from "../../lib/butler/mod.ts";
import {
  type Condition,
  type ConditionInput,
  conditions,
  listNames,
  PreviousConditions,
  truncate,
} from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  describeIssue,
  formatPath,
  groupKey,
  type RelatedObject,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import {
  type Address,
  Allocator,
  type Capacity,
  type Family,
  familyName,
  formatSpan,
  grantableRanges,
  isOffsetRanges,
  type PoolModel,
  type Range,
  readPoolSpec,
  type SpecProblem,
  toRanges,
} from "../../lib/ipam/mod.ts";
import {
  decodeRecord,
  MAX_GRANTS,
  MAX_LEDGER_BYTES,
  type PoolLedger,
  readLedger,
  recordBound,
  type StoredLedger,
  tokenUid,
  uidToken,
} from "../../lib/pool_ledger/mod.ts";
import {
  DEFAULT_LB_POOL_PER_TENANT,
  DEFAULT_NODES_PER_TENANT,
  type IPAllocationSpec,
  NetworkPoolSpec,
  ObservedAllocation,
} from "../../lib/api/mod.ts";
import { announce, CAPACITY_EVENTS, type CapacityTier, readAnnouncements } from "./capacity_events.ts";
import { firstOverlap, otherPoolSpaces, type Overlap, overlapMessage, poolSpace } from "./overlap.ts";
import { DEFAULT_RELEASE_HISTORY, recordReleases, type ReleaseOutcome, withCooling } from "./releases.ts";

/** Utilisation thresholds of the capacity conditions, in percent (at or above means True). */
export const CAPACITY_THRESHOLDS: readonly { type: CapacityTier; percent: number }[] = (
  Object.keys(CAPACITY_EVENTS) as CapacityTier[]
).map((type) => ({ type, percent: CAPACITY_EVENTS[type].percent }));

/** Seconds until failed allocations are tried again even if nothing else changes (upstream's pool interval). */
export const RETRY_SECONDS = 60;

/** The most failures recorded in status (each message at most {@linkcode MAX_FAILURE_MESSAGE} characters). */
export const MAX_FAILURES = 256;
/** Longest failure message recorded. */
export const MAX_FAILURE_MESSAGE = 256;

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

/** The related rule every pool sync needs: the IPAllocations labelled for this pool, in every namespace. */
function allocationsRule(pool: string) {
  return {
    apiVersion: API_VERSION,
    resource: "ipallocations",
    labelSelector: { matchLabels: { [LABELS.networkPool]: pool } },
  };
}

/**
 * The NetworkPool customize hook: the IPAllocations labelled for this pool, in every namespace, and every other
 * NetworkPool (to see one that overlaps this one).
 */
export function customizeNetworkPool(request: CustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [
      allocationsRule(request.parent.metadata.name),
      { apiVersion: API_VERSION, resource: "networkpools" },
    ],
  };
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

interface Observed {
  /** For each grant of the ledger, whether its IPAllocation still exists (understood or not): kept if so. */
  readonly held: Uint8Array;
  /** Valid allocations of this pool without a grant, with their UID's ledger token. */
  readonly pending: { readonly allocation: ObservedAllocation; readonly token: string }[];
  /** Allocations without a grant whose spec could not be read, with why, by key. */
  readonly invalid: readonly { uid: string; message: string }[];
  /** Holders of grants being deleted: `namespace/name` by UID, for the release history. */
  readonly terminating: Map<string, string>;
}

/**
 * The related IPAllocations against the ledger. Only those without a grant are read through their schema:
 * with thousands related and a handful new, the others need nothing but their UID, which the envelope checked.
 */
function observe(request: DecoratorRequest, ledger: PoolLedger): Observed {
  const pool = request.object.metadata;
  const group = request.related[groupKey(KINDS.IPAllocation)] ?? {};
  const held = new Uint8Array(ledger.size);
  const pending: { allocation: ObservedAllocation; token: string }[] = [];
  const invalid: { key: string; uid: string; message: string }[] = [];
  const terminating = new Map<string, string>();
  for (const key of Object.keys(group)) {
    const uid = uidOf(group[key]!);
    if (!uid) continue;
    const token = uidToken(uid);
    const i = ledger.indexOf(token);
    if (i >= 0) {
      held[i] = 1;
      if ((group[key]!.metadata as { deletionTimestamp?: unknown }).deletionTimestamp) {
        terminating.set(uid, key);
      }
      continue;
    }
    const parsed = ObservedAllocation.safeParse(group[key]);
    if (!parsed.success) {
      invalid.push({ key, uid, message: `invalid IPAllocation ${key}: ${describeIssue(parsed.error)}` });
      continue;
    }
    const { metadata, spec } = parsed.data;
    const ref = spec.poolRef;
    const ours = ref.name === pool.name && (ref.namespace ?? SYSTEM_NAMESPACE) === (pool.namespace ?? "");
    if (ours && !metadata.deletionTimestamp) pending.push({ allocation: parsed.data, token });
  }
  invalid.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { held, pending, invalid, terminating };
}

/** The UID of a related object, when it has one. */
function uidOf(obj: RelatedObject): string | undefined {
  const uid = (obj.metadata as { uid?: unknown } | null | undefined)?.uid;
  return typeof uid === "string" && uid ? uid : undefined;
}

/** `namespace/name` of the IPAllocations holding `tokens`, for messages; the UID when it is not related. */
function holderNames(request: DecoratorRequest, tokens: readonly string[]): string[] {
  const group = request.related[groupKey(KINDS.IPAllocation)] ?? {};
  const names = new Map<string, string>();
  for (const [key, obj] of Object.entries(group)) {
    const uid = uidOf(obj);
    if (uid) names.set(uidToken(uid), key);
  }
  return tokens.map((t) => names.get(t) ?? tokenUid(t) ?? t).sort();
}

/** FIFO: creationTimestamp, then namespace/name. */
function fifo(
  { allocation: a }: { allocation: ObservedAllocation },
  { allocation: b }: { allocation: ObservedAllocation },
): number {
  const ta = a.metadata.creationTimestamp ?? "";
  const tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function requestedCount(spec: IPAllocationSpec, pool: NetworkPoolSpec): number {
  const defaults = pool.tenantAllocation?.defaults;
  return spec.count ??
    (spec.type === "nodes"
      ? defaults?.nodesPerTenant ?? DEFAULT_NODES_PER_TENANT
      : defaults?.lbPoolPerTenant ?? DEFAULT_LB_POOL_PER_TENANT);
}

/** The pool's figures in its status. */
export interface Figures {
  totalIPs: number;
  allocatedIPs: number;
  availableIPs: number;
  allocationCount: number;
  fragmentationPercent: number;
  largestFreeBlock: number;
  /** Released addresses still cooling down (only with `spec.releaseCooldownSeconds`). */
  coolingIPs?: number;
}

function figuresOf(c: Capacity, grants: number, cooling: bigint, cooldown: boolean): Figures {
  return {
    totalIPs: statusNumber(c.total),
    allocatedIPs: statusNumber(c.allocated - cooling),
    availableIPs: statusNumber(c.available),
    allocationCount: grants,
    fragmentationPercent: c.fragmentationPercent,
    largestFreeBlock: statusNumber(c.largestFreeBlock),
    ...(cooldown ? { coolingIPs: statusNumber(cooling) } : {}),
  };
}

const FIGURE_KEYS = [
  "totalIPs",
  "allocatedIPs",
  "availableIPs",
  "allocationCount",
  "fragmentationPercent",
  "largestFreeBlock",
  "coolingIPs",
] as const;

/** The figures a pool status holds (those that are numbers). */
export function statusFigures(status: Record<string, unknown>): Partial<Figures> {
  return Object.fromEntries(
    FIGURE_KEYS.flatMap((k) => (typeof status[k] === "number" ? [[k, status[k]]] : [])),
  ) as Partial<Figures>;
}

function capacityConditions(c: Capacity): ConditionInput[] {
  const percent = c.total === 0n ? 100 : Number((c.allocated * 100n) / c.total);
  const message = `Pool utilization is ${percent}% (${c.allocated}/${c.total} IPs)`;
  return CAPACITY_THRESHOLDS.map(({ type, percent: threshold }) => {
    const above = c.total === 0n || c.allocated * 100n >= BigInt(threshold) * c.total;
    return {
      type,
      status: above ? "True" : "False",
      reason: above ? "UtilizationAboveThreshold" : "UtilizationBelowThreshold",
      message,
    };
  });
}

/** Capacity conditions when figures cannot be computed: the previous ones, else Unknown. */
function carriedCapacityConditions(
  previous: PreviousConditions,
  raw: unknown,
  why: string,
): ConditionInput[] {
  const prior = Array.isArray(raw) ? (raw as Partial<Condition>[]) : [];
  return CAPACITY_THRESHOLDS.map(({ type }) => {
    const p = prior.find((c) => c?.type === type);
    const known = previous.find((c) => c.type === type);
    return known && p && typeof p.reason === "string" && typeof p.message === "string"
      ? { type, status: known.status, reason: p.reason, message: p.message }
      : { type, status: "Unknown", reason: why, message: "capacity unknown until the spec is valid" };
  });
}

function problemText(problems: readonly SpecProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join("; ");
}

function specProblems(spec: unknown): {
  spec?: NetworkPoolSpec;
  model?: Omit<PoolModel, "allocations">;
  /** The pool's first address: where the offsets of a new ledger count from. */
  first?: Address;
  problems: SpecProblem[];
} {
  const parsed = NetworkPoolSpec.safeParse(spec);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((i) => ({
        path: formatPath(["spec", ...i.path]),
        message: i.message,
      })),
    };
  }
  const read = readPoolSpec(parsed.data);
  return read.ok
    ? {
      spec: parsed.data,
      model: read.pool,
      first: { family: read.cidr.family, value: read.cidr.start },
      problems: [],
    }
    : {
      spec: parsed.data,
      problems: read.problems.map((p) => ({ path: `spec.${p.path}`, message: p.message })),
    };
}

/**
 * This sync's release bookkeeping ({@linkcode recordReleases}): the grants dropped, decoded, and the holders seen
 * terminating. `undefined` while there is nothing to remember, or no family to read ranges in (an invalid spec
 * and an empty ledger): the previous `status.releases`, if any, is kept as it is.
 */
function releasesOf(
  prev: Readonly<Record<string, unknown>>,
  before: PoolLedger,
  after: PoolLedger,
  observed: Observed,
  spec: NetworkPoolSpec | undefined,
  model: Omit<PoolModel, "allocations"> | undefined,
  now: Date,
): ReleaseOutcome | undefined {
  const family = model?.family ?? before.family;
  const dropped = before.size === after.size
    ? []
    : before.records.flatMap((record, i) =>
      observed.held[i] === 1 ? [] : [decodeRecord(before.family!, before.base!, record)!]
    );
  const cooldownSeconds = spec?.releaseCooldownSeconds ?? 0;
  if (family === undefined || (!dropped.length && !observed.terminating.size && !("releases" in prev))) {
    return undefined;
  }
  return recordReleases({
    status: prev,
    family,
    dropped: dropped.filter((g) => g.family === family),
    holds: (uid) => after.indexOf(uidToken(uid)) >= 0,
    terminating: observed.terminating,
    allocatable: model && model.family === family ? model.allocatable : [],
    cooldownSeconds,
    historyLimit: spec?.releaseHistoryLimit ?? DEFAULT_RELEASE_HISTORY,
    now,
  });
}

/** Why a request that did not fit may fit later: addresses cooling down, and when the first is free again. */
function coolingNote(ips: bigint, released: ReleaseOutcome): string {
  return ` (${ips} released addresses are cooling down; the first are free again in ${released.resyncAfterSeconds} s)`;
}

/** Why a NetworkPool may not go yet: its finalizer's condition and the admission denial say the same. */
export function poolDeletionBlockedMessage(allocations: readonly string[]): string {
  return `cannot delete NetworkPool: ${allocations.length} allocation(s) still hold addresses: ${
    listNames(allocations)
  }`;
}

/**
 * The NetworkPool sync and finalize hook: the pool's status is the allocation ledger, and this is the only
 * place where ranges are chosen.
 *
 * It keeps every grant whose IPAllocation still exists, drops the others, and (unless the pool is being
 * deleted or its spec is invalid) grants pending allocations in FIFO order with best-fit, or exactly their
 * pinned range. A grant never moves. Metacontroller writes a decorator's status with the resourceVersion the
 * hook saw, so a decision made on a stale ledger is rejected and retried on fresh data.
 */
export function syncNetworkPool(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const pool = request.object;
  requireDelivered(request, [allocationsRule(pool.metadata.name)]);
  const generation = pool.metadata.generation;
  const prevStatus = (typeof pool.status === "object" && pool.status !== null ? pool.status : {}) as Record<
    string,
    unknown
  >;
  const previous = PreviousConditions.parse(prevStatus.conditions);
  const poolName = `${pool.metadata.namespace ?? ""}/${pool.metadata.name}`;
  const { spec, model, first, problems } = specProblems(pool.spec);

  const read = readLedger(prevStatus, first);
  if (!read.ok) {
    // Never guess at what is allocated: keep the status as it is, grant nothing, say why.
    const conds = conditions(
      [
        {
          type: "Ready",
          status: "False",
          reason: "LedgerUnreadable",
          message: `${read.field} has entries that cannot be read (${
            listNames(read.unreadable)
          }); no new grants until they are fixed or removed`,
        },
        ...carriedCapacityConditions(previous, prevStatus.conditions, "LedgerUnreadable"),
      ],
      previous,
      context.now,
      generation,
    );
    return {
      status: { ...prevStatus, observedGeneration: generation, conditions: conds },
      attachments: [],
      finalized: false,
    };
  }

  const observed = observe(request, read.ledger);
  const ledger = read.ledger.retain((i) => observed.held[i] === 1);
  const released = releasesOf(prevStatus, read.ledger, ledger, observed, spec, model, context.now);
  const pending = observed.pending.sort(fifo);
  const failures: [string, string][] = observed.invalid.map((i) => [i.uid, i.message]);
  const refuse = (uid: string, message: string) => failures.push([uid, message]);
  const added: { range: Range; token: string }[] = [];
  let stored: StoredLedger;
  let figures: Partial<Figures>;
  let capacity: ConditionInput[];
  let ready: ConditionInput;

  if (problems.length || !spec || !model || !first) {
    for (const { allocation } of pending) {
      refuse(allocation.metadata.uid, `NetworkPool ${poolName} has an invalid spec`);
    }
    stored = ledger.toStatus();
    figures = { ...statusFigures(prevStatus), allocationCount: ledger.size };
    capacity = carriedCapacityConditions(previous, prevStatus.conditions, "InvalidSpec");
    ready = { type: "Ready", status: "False", reason: "InvalidSpec", message: problemText(problems) };
  } else {
    const family: Family = model.family;
    // A pool whose spec changed family keeps the other family's grants until they go, and grants nothing new.
    const held = ledger.size && ledger.family !== family ? ledger.family : undefined;
    const cooling = released?.cooling ?? [];
    const grantsNow = ledger.ranges();
    const allocator = Allocator.create({
      ...model,
      allocations: held
        ? []
        : cooling.length
        ? withCooling(isOffsetRanges(grantsNow) ? toRanges(grantsNow) : grantsNow, cooling)
        : grantsNow,
    });
    const coolingIPs = held ? 0n : released?.coolingIPs ?? 0n;
    const base = held || ledger.base === undefined ? first.value : ledger.base;
    const last = model.allocatable[model.allocatable.length - 1]!.end;
    const overlap = overlapOf(request, { family, ranges: grantableRanges(model) });
    let bytes: number | undefined;
    for (const { allocation: a, token } of pending) {
      const uid = a.metadata.uid;
      if (request.finalizing) {
        refuse(uid, `NetworkPool ${poolName} is being deleted`);
        continue;
      }
      if (overlap) {
        refuse(uid, overlapRefusal(poolName, overlap));
        continue;
      }
      if (held) {
        refuse(uid, familyChangedMessage(poolName, held, family));
        continue;
      }
      if (ledger.size + added.length >= MAX_GRANTS) {
        refuse(uid, LEDGER_FULL_MESSAGE);
        continue;
      }
      const pin = a.spec.pinnedRange;
      const count = pin ? undefined : requestedCount(a.spec, spec);
      const bound = recordBound(
        base,
        last,
        count === undefined ? undefined : BigInt(count),
        context.now,
        token,
      );
      bytes ??= ledger.bytes();
      if (bytes + bound > MAX_LEDGER_BYTES) {
        refuse(uid, LEDGER_BYTES_FULL_MESSAGE);
        continue;
      }
      const result = pin ? allocator.pin(pin.startAddress, pin.endAddress) : allocator.allocate(count!);
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
    stored = ledger.withGrants(added, context.now, family);
    const c = allocator.capacity();
    const grants = ledger.size + added.length;
    figures = figuresOf(c, grants, coolingIPs, (spec.releaseCooldownSeconds ?? 0) > 0);
    capacity = capacityConditions(c);
    ready = overlap
      ? { type: "Ready", status: "False", reason: "Overlapping", message: overlappingMessage(overlap) }
      : {
        type: "Ready",
        status: "True",
        reason: "Ready",
        message: `${c.available}/${c.total} IPs available (${grants} allocations)`,
      };
  }

  if (request.finalizing && ledger.size) {
    const blocking = holderNames(request, ledger.tokens);
    ready = {
      type: "Ready",
      status: "False",
      reason: "DeletionBlocked",
      message: poolDeletionBlockedMessage(blocking),
    };
  }

  const announced = announce(readAnnouncements(prevStatus), capacity, context.now);
  const resync = [
    ...(failures.length ? [RETRY_SECONDS] : []),
    ...(announced.resyncAfterSeconds === undefined ? [] : [announced.resyncAfterSeconds]),
    ...(released?.resyncAfterSeconds === undefined ? [] : [released.resyncAfterSeconds]),
  ];
  const recorded = failures.slice(0, MAX_FAILURES).map(([uid, m]) => [uid, truncate(m, MAX_FAILURE_MESSAGE)]);
  const status = {
    observedGeneration: generation,
    ...figures,
    conditions: conditions([ready, ...capacity], previous, context.now, generation),
    ledger: stored,
    failures: Object.fromEntries(recorded),
    ...(announced.announcements.length ? { capacityEvents: announced.announcements } : {}),
    ...(released
      ? { releases: released.releases }
      : "releases" in prevStatus
      ? { releases: prevStatus.releases }
      : {}),
  };
  return {
    status,
    attachments: [],
    ...(resync.length && !request.finalizing ? { resyncAfterSeconds: Math.min(...resync) } : {}),
    ...(request.finalizing ? { finalized: ledger.size === 0 } : {}),
  };
}
