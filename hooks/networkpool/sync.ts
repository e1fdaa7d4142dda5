import { API_VERSION, LABELS, requireDelivered } from "../../lib/butler/mod.ts";
import {
  type ConditionInput,
  conditions,
  listNames,
  listProblems,
  PreviousConditions,
  truncate,
} from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  formatPath,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { type Address, type PoolModel, readPoolSpec, type SpecProblem } from "../../lib/ipam/mod.ts";
import { decodeRecord, PoolLedger, readLedger, uidToken } from "../../lib/pool_ledger/mod.ts";
import { NetworkPoolSpec, ObservedAllocation } from "../../lib/api/mod.ts";
import {
  carriedRebuilt,
  changedGrants,
  nextCheckpoint,
  rebuiltCondition,
  trustOf,
  waitingFor,
} from "./checkpoint.ts";
import { announce, readAnnouncements } from "./capacity_events.ts";
import { fifo, holderNames, observe, type Observed } from "./observe.ts";
import { DEFAULT_RELEASE_HISTORY, recordReleases, type ReleaseOutcome } from "./releases.ts";
import { carriedCapacityConditions, statusFigures } from "./figures.ts";
import { grantPending, type Outcome } from "./grant.ts";

/** Seconds until failed allocations are tried again even if nothing else changes (upstream's pool interval). */
export const RETRY_SECONDS = 60;

/** The most failures recorded in status (each message at most {@linkcode MAX_FAILURE_MESSAGE} characters). */
export const MAX_FAILURES = 256;
/** Longest failure message recorded. */
export const MAX_FAILURE_MESSAGE = 256;

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

function problemText(problems: readonly SpecProblem[]): string {
  return listProblems(problems.map((p) => `${p.path}: ${p.message}`));
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
  const prevStatus = statusOf(pool.status);
  const previous = PreviousConditions.parse(prevStatus.conditions);
  const poolName = `${pool.metadata.namespace ?? ""}/${pool.metadata.name}`;
  const { spec, model, first, problems } = specProblems(pool.spec);

  // The ledger is an index of the grants recorded on their holders: one that lost its checkpoint is rebuilt.
  const trust = trustOf(pool.metadata, prevStatus);
  const lost = trust.state === "lost";
  const read = ledgerOf(prevStatus, first, lost);
  if (!read.ok) return ledgerUnreadable(read, prevStatus, previous, generation, context.now);
  const observed = observe(request, read.ledger, lost);
  const ledger = read.ledger.retain((i) => observed.held[i] === 1);
  const before = lost ? ledger : read.ledger;
  const released = releasesOf(prevStatus, before, ledger, observed, spec, model, context.now);
  const pending = observed.pending.sort(fifo);
  const uid = pool.metadata.uid ?? "";
  const waiting = waitingFor(trust, pool.metadata, pending);
  const failures: [string, string][] = observed.invalid.map((i) => [i.uid, i.message]);
  const refuse = (uid: string, message: string) => failures.push([uid, message]);
  const outcome: Outcome = problems.length || !spec || !model || !first
    ? invalidSpec(poolName, problems, pending, ledger, prevStatus, previous, refuse)
    : grantPending({
      request,
      now: context.now,
      poolName,
      spec,
      model,
      first,
      ledger,
      pending,
      released,
      refuse,
      recordsOnly: waiting.length > 0,
    });
  const held = outcome.stored.grants.length;
  const checkpoint = nextCheckpoint(
    trust,
    uid,
    changedGrants(prevStatus, outcome.stored),
    waiting.length > 0,
  );
  const rebuilt = rebuiltCondition(trust, held, waiting) ?? carriedRebuilt(prevStatus.conditions);
  const announced = announce(readAnnouncements(prevStatus), outcome.capacity, context.now);
  const resync = [failures.length ? RETRY_SECONDS : undefined, announced.resyncAfterSeconds]
    .concat(released?.resyncAfterSeconds).filter((x): x is number => x !== undefined);
  const status = {
    observedGeneration: generation,
    ...outcome.figures,
    conditions: conditions(
      [readyOf(request, ledger, outcome), ...outcome.capacity, ...(rebuilt ? [rebuilt] : [])],
      previous,
      context.now,
      generation,
    ),
    ledger: { ...outcome.stored, ...checkpoint.fields },
    failures: recordedFailures(failures),
    ...(announced.announcements.length ? { capacityEvents: announced.announcements } : {}),
    ...(released
      ? { releases: released.releases }
      : "releases" in prevStatus
      ? { releases: prevStatus.releases }
      : {}),
  };
  return {
    status,
    annotations: checkpoint.annotations,
    attachments: [],
    ...(resync.length && !request.finalizing ? { resyncAfterSeconds: Math.min(...resync) } : {}),
    ...(request.finalizing ? { finalized: held === 0 } : {}),
  };
}

/**
 * The ledger a sync starts from. A lost one (rolled back, restored, emptied) keeps the entries of holders that
 * exist and agree (see `observe`), and forgets the rest without calling them released; a lost one that does not
 * read is no index to keep.
 */
function ledgerOf(prevStatus: Record<string, unknown>, first: Address | undefined, lost: boolean) {
  const stored = readLedger(prevStatus, first);
  return lost && !stored.ok ? { ok: true as const, ledger: PoolLedger.empty(first) } : stored;
}

/** The failures status records: at most {@linkcode MAX_FAILURES}, each message cut. */
function recordedFailures(failures: readonly [string, string][]): Record<string, string> {
  return Object.fromEntries(
    failures.slice(0, MAX_FAILURES).map(([uid, m]) => [uid, truncate(m, MAX_FAILURE_MESSAGE)]),
  );
}

/** A status as a record (none reads as empty). */
function statusOf(status: unknown): Record<string, unknown> {
  return (typeof status === "object" && status !== null ? status : {}) as Record<string, unknown>;
}

/** Ready: a pool being deleted that still holds grants says who holds them; else what granting decided. */
function readyOf(request: DecoratorRequest, ledger: PoolLedger, outcome: Outcome): ConditionInput {
  return request.finalizing && ledger.size
    ? {
      type: "Ready",
      status: "False",
      reason: "DeletionBlocked",
      message: poolDeletionBlockedMessage(holderNames(request, ledger.tokens)),
    }
    : outcome.ready;
}

/** A ledger that cannot be read: the status kept as it is, nothing granted, and why. */
function ledgerUnreadable(
  read: { readonly field: string; readonly unreadable: readonly string[] },
  prevStatus: Record<string, unknown>,
  previous: PreviousConditions,
  generation: number | undefined,
  now: Date,
): DecoratorResponse {
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
    now,
    generation,
  );
  return {
    status: { ...prevStatus, observedGeneration: generation, conditions: conds },
    attachments: [],
    finalized: false,
  };
}

/** An invalid spec: every pending allocation refused, the kept grants stored, the last figures carried. */
function invalidSpec(
  poolName: string,
  problems: readonly SpecProblem[],
  pending: readonly { readonly allocation: ObservedAllocation }[],
  ledger: PoolLedger,
  prevStatus: Record<string, unknown>,
  previous: PreviousConditions,
  refuse: (uid: string, message: string) => void,
): Outcome {
  for (const { allocation } of pending) {
    refuse(allocation.metadata.uid, `NetworkPool ${poolName} has an invalid spec`);
  }
  return {
    stored: ledger.toStatus(),
    figures: { ...statusFigures(prevStatus), allocationCount: ledger.size },
    capacity: carriedCapacityConditions(previous, prevStatus.conditions, "InvalidSpec"),
    ready: { type: "Ready", status: "False", reason: "InvalidSpec", message: problemText(problems) },
  };
}
