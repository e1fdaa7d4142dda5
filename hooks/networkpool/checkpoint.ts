/**
 * Whether a pool's ledger can be trusted, and its rebuild when it cannot (docs/design.md#grants-are-recorded-on-their-holders).
 *
 * The ledger in status is an index of the grants recorded on their IPAllocations. Every change of it is written
 * with a new checkpoint, `<serial>/<pool UID>`, both in `status.ledger.checkpoint` and in the pool's annotation
 * `butler.butlerlabs.dev/ledger-checkpoint` (metadata, which backups keep). A ledger whose checkpoint is not the
 * annotation's was lost, rolled back or restored under a new UID: it is rebuilt from the records alone, and the
 * pool grants nothing new until every IPAllocation of it without a record has seen the rebuild (annotation
 * `butler.butlerlabs.dev/ledger-seen`), so that a grant copied from the lost ledger reaches its record, and is
 * taken back, before its addresses could go to anyone else.
 *
 * @module
 */
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import type { StoredLedger } from "../../lib/pool_ledger/mod.ts";
import {
  CHECKPOINT_ANNOTATION,
  checkpointOf,
  checkpointSerial,
  formatCheckpoint,
  LEDGER_SEEN_ANNOTATION,
  ledgerTrusted,
  type ObservedAllocation,
  recordOf,
} from "../../lib/api/mod.ts";

/** How far a pool's ledger is trusted. */
export interface Trust {
  /** `current` (checkpoints agree), `legacy` (written before checkpoints: trusted once, as it is) or `lost`. */
  readonly state: "current" | "legacy" | "lost";
  /** The highest serial seen in the annotation or the status. */
  readonly serial: number;
  /** The checkpoint as stored, when it is current. */
  readonly checkpoint?: string;
  /** The rebuild still waiting for IPAllocations to see it, as stored (`status.ledger.rebuilding`). */
  readonly rebuilding?: string;
}

/** What a pool's metadata and status say of its ledger. */
export function trustOf(
  metadata: { readonly uid?: string; readonly annotations?: Record<string, string> | null },
  status: Readonly<Record<string, unknown>>,
): Trust {
  const annotated = metadata.annotations?.[CHECKPOINT_ANNOTATION];
  const stored = (typeof status.ledger === "object" && status.ledger !== null ? status.ledger : {}) as {
    checkpoint?: unknown;
    rebuilding?: unknown;
  };
  const serial = Math.max(checkpointSerial(annotated), checkpointSerial(stored.checkpoint));
  const uid = metadata.uid ?? "";
  if (annotated === undefined && stored.checkpoint === undefined) {
    const held = status.ledger !== undefined && status.ledger !== null || status.grants !== undefined;
    return { state: held ? "legacy" : "lost", serial };
  }
  // The status one ahead of the annotation is current: Metacontroller writes the status first, and a lost second
  // write is no lost ledger (the IPAllocation hook judges by the same rule, and copies from it).
  const checkpoint = stored.checkpoint;
  if (!ledgerTrusted(annotated, checkpoint) || !checkpointOf(checkpoint, uid)) {
    return { state: "lost", serial };
  }
  return {
    state: "current",
    serial,
    checkpoint: checkpoint as string,
    ...(typeof stored.rebuilding === "string" && checkpointOf(stored.rebuilding, uid)
      ? { rebuilding: stored.rebuilding }
      : {}),
  };
}

/** The pending allocations a rebuilding pool still waits for: no record, and the rebuild not yet seen. */
export function unseen(
  pending: readonly { readonly allocation: ObservedAllocation }[],
  rebuilding: string,
): ObservedAllocation[] {
  return pending.map((p) => p.allocation).filter((a) =>
    !recordOf(a.metadata) && a.metadata.annotations?.[LEDGER_SEEN_ANNOTATION] !== rebuilding
  );
}

/** What a sync writes of the checkpoint: the status fields, and the annotation when it changes. */
export interface CheckpointOut {
  readonly fields: { readonly checkpoint: string; readonly rebuilding?: string };
  readonly annotations: Record<string, string>;
}

/**
 * The checkpoint this sync stores: unchanged while the ledger and the rebuild are, else the next serial (in the
 * status and the annotation alike). `waiting`: whether a rebuild still waits for IPAllocations to see it (a new
 * rebuild, when the ledger was lost, is named by the checkpoint written now).
 */
export function nextCheckpoint(trust: Trust, uid: string, changed: boolean, waiting: boolean): CheckpointOut {
  if (trust.state === "current" && !changed && waiting === (trust.rebuilding !== undefined)) {
    return {
      fields: { checkpoint: trust.checkpoint!, ...(waiting ? { rebuilding: trust.rebuilding! } : {}) },
      annotations: { [CHECKPOINT_ANNOTATION]: trust.checkpoint! },
    };
  }
  const checkpoint = formatCheckpoint(trust.serial + 1, uid);
  const rebuilding = !waiting ? undefined : trust.state === "lost" ? checkpoint : trust.rebuilding;
  return {
    fields: { checkpoint, ...(rebuilding ? { rebuilding } : {}) },
    annotations: { [CHECKPOINT_ANNOTATION]: checkpoint },
  };
}

/** `LedgerRebuilt`: what was rebuilt and what it still waits for; carried as it was when nothing is rebuilt. */
export function rebuiltCondition(
  trust: Trust,
  records: number,
  waiting: readonly ObservedAllocation[],
): ConditionInput | undefined {
  if (trust.state !== "lost" && trust.rebuilding === undefined) return undefined;
  const names = waiting.slice(0, 5).map((a) => `${a.metadata.namespace}/${a.metadata.name}`);
  const more = waiting.length > names.length ? ` and ${waiting.length - names.length} more` : "";
  return {
    type: "LedgerRebuilt",
    status: "True",
    reason: waiting.length ? "WaitingForAllocations" : "Rebuilt",
    message: waiting.length
      ? `no new grants until ${waiting.length} IPAllocation(s) without a grant have seen the rebuilt ledger: ${
        names.join(", ")
      }${more}`
      : trust.state === "lost" && trust.serial === 0
      ? `a new ledger (no checkpoint yet) starts from the ${records} grant(s) recorded on its IPAllocations`
      : trust.state === "lost"
      ? `status.ledger did not match the pool's checkpoint (status lost, rolled back or restored): rebuilt with ${records} grant(s): those recorded on their IPAllocations, and those of the old ledger whose IPAllocations exist and record nothing else`
      : "the ledger was rebuilt from the grants recorded on their IPAllocations; granting again",
  };
}

/** Whether the grants stored differ from those the status held. */
export function changedGrants(prev: Readonly<Record<string, unknown>>, stored: StoredLedger): boolean {
  const before = prev.ledger as { grants?: unknown; base?: unknown } | null | undefined;
  const grants = Array.isArray(before?.grants) ? before.grants : undefined;
  if (!grants || grants.length !== stored.grants.length || before?.base !== stored.base) return true;
  return grants.some((g, i) => g !== stored.grants[i]);
}

/** A `LedgerRebuilt` condition from an earlier rebuild, kept once the rebuild is done (what happened stays said). */
export function carriedRebuilt(prev: unknown): ConditionInput | undefined {
  const c = Array.isArray(prev)
    ? prev.find((x) => (x as { type?: unknown } | null)?.type === "LedgerRebuilt") as
      | { reason?: unknown; message?: unknown }
      | undefined
    : undefined;
  if (!c) return undefined;
  return {
    type: "LedgerRebuilt",
    status: "True",
    reason: "Rebuilt",
    message: c.reason === "Rebuilt" && typeof c.message === "string"
      ? c.message
      : "the ledger was rebuilt from the grants recorded on their IPAllocations; granting again",
  };
}

/** The allocations a rebuild still waits for: every one without a record while the ledger is lost, else unseen ones. */
export function waitingFor(
  trust: Trust,
  pool: { readonly uid?: string; readonly creationTimestamp?: string | null },
  pending: readonly { readonly allocation: ObservedAllocation }[],
): ObservedAllocation[] {
  const rebuild = trust.state === "lost"
    ? formatCheckpoint(trust.serial + 1, pool.uid ?? "")
    : trust.rebuilding;
  if (rebuild === undefined) return [];
  const waiting = unseen(pending, rebuild);
  // A pool that never had a checkpoint (new, or recreated under its name) can only have had a grant copied by an
  // allocation older than itself: one created after it never saw another ledger of this name. (Created in the same
  // second counts as after: a pool deleted past its finalizer and created again within it is not a case to stall a
  // burst of new allocations for.)
  // (A pool without a creation time is no object of an API server: nothing of it can be in flight.)
  if (!rebuild.startsWith("1/")) return waiting;
  const born = pool.creationTimestamp;
  return waiting.filter((a) =>
    born && (!a.metadata.creationTimestamp || a.metadata.creationTimestamp < born)
  );
}
