/**
 * Where a grant is recorded durably (docs/design.md#grants-are-recorded-on-their-holders): on the IPAllocation
 * that holds it, as the annotation `butler.butlerlabs.dev/grant`, which lives exactly as long as the grant and
 * survives what status does not (backups, restores, a move to a new management cluster). The pool's ledger is an
 * index of these records, and two annotations let the pool know when that index can be trusted:
 *
 * - `butler.butlerlabs.dev/ledger-checkpoint` on the NetworkPool: `<serial>/<pool UID>`, written with every change
 *   of the ledger and stored in the ledger too (`status.ledger.checkpoint`). A ledger whose checkpoint is not the
 *   annotation's (status lost, rolled back, restored under a new UID) is rebuilt from the records.
 * - `butler.butlerlabs.dev/ledger-seen` on an IPAllocation without a record: the rebuild (`status.ledger.rebuilding`)
 *   its hook has seen. Until every such allocation of a rebuilding pool has seen the rebuild, the pool grants
 *   nothing new: a grant copied from a ledger that was then lost reaches its record first, and is taken back.
 *
 * @module
 */
import { type Family, formatAddress, parseAddress, type Range } from "../ipam/mod.ts";
import { GROUP } from "../butler/mod.ts";
import { grantOverlapping } from "../pool_ledger/mod.ts";

/** The annotation recording an IPAllocation's grant. */
export const GRANT_ANNOTATION = `${GROUP}/grant`;
/** The annotation naming the pool rebuild an IPAllocation without a grant has seen. */
export const LEDGER_SEEN_ANNOTATION = `${GROUP}/ledger-seen`;
/** The annotation of a NetworkPool naming its ledger's checkpoint. */
export const CHECKPOINT_ANNOTATION = `${GROUP}/ledger-checkpoint`;

/** Longest record read (two IPv6 addresses, a pool's namespace/name and a time fit well within it). */
const MAX_RECORD = 512;

/** A grant as its holder records it. */
export interface GrantRecord {
  /** `namespace/name` of the NetworkPool that granted it. */
  readonly pool: string;
  readonly family: Family;
  readonly range: Range;
  /** When it was granted (RFC 3339, seconds). */
  readonly grantedAt: string;
}

/**
 * The annotation's value: `<pool namespace>/<pool name>:<first>-<last>@<granted at>`.
 *
 * @example
 * ```ts
 * formatGrantRecord({ pool: "butler-system/lab-pool", family: 4, range: { start: 0x0a280100n, end: 0x0a280107n },
 *   grantedAt: "2026-11-21T09:00:00Z" });
 * // "butler-system/lab-pool:10.40.1.0-10.40.1.7@2026-11-21T09:00:00Z"
 * ```
 */
export function formatGrantRecord(r: GrantRecord): string {
  return `${r.pool}:${formatAddress(r.family, r.range.start)}-${
    formatAddress(r.family, r.range.end)
  }@${r.grantedAt}`;
}

/** Reads a record annotation; `undefined` for anything that is not one (never guessed at). */
export function parseGrantRecord(text: unknown): GrantRecord | undefined {
  if (typeof text !== "string" || text.length > MAX_RECORD) return undefined;
  const colon = text.indexOf(":");
  const at = text.lastIndexOf("@");
  if (colon <= 0 || at < colon) return undefined;
  const pool = text.slice(0, colon);
  if (!/^[a-z0-9][a-z0-9.-]*\/[a-z0-9][a-z0-9.-]*$/.test(pool)) return undefined;
  const span = text.slice(colon + 1, at);
  const grantedAt = text.slice(at + 1);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(grantedAt)) return undefined;
  const dash = span.indexOf("-");
  if (dash < 0) return undefined;
  const first = parseAddress(span.slice(0, dash));
  const last = parseAddress(span.slice(dash + 1));
  if (!first || !last || first.family !== last.family || last.value < first.value) return undefined;
  return { pool, family: first.family, range: { start: first.value, end: last.value }, grantedAt };
}

/** The grant an object's metadata records, if it reads. */
export function recordOf(metadata: unknown): GrantRecord | undefined {
  const annotations = (metadata as { annotations?: Record<string, unknown> | null } | null | undefined)
    ?.annotations;
  return annotations ? parseGrantRecord(annotations[GRANT_ANNOTATION]) : undefined;
}

/** A pool's checkpoint: `<serial>/<pool UID>`. */
export function formatCheckpoint(serial: number, uid: string): string {
  return `${serial}/${uid}`;
}

/** The serial of a checkpoint (0 when it does not read). */
export function checkpointSerial(checkpoint: unknown): number {
  const m = typeof checkpoint === "string" ? /^(\d{1,15})\//.exec(checkpoint) : null;
  return m ? Number(m[1]) : 0;
}

/** Whether a checkpoint names the pool of `uid`. */
export function checkpointOf(checkpoint: unknown, uid: string): boolean {
  return typeof checkpoint === "string" && checkpoint.endsWith(`/${uid}`) && checkpointSerial(checkpoint) > 0;
}

/**
 * Whether a pool's ledger may be read as the truth: its checkpoint is the annotation's, or the next one
 * (Metacontroller writes a decorator's status before its metadata: the status runs one ahead until the annotation
 * lands). A lost, rolled-back or restored ledger (no checkpoint, an older one, another UID) is not. Both absent: a
 * ledger from before checkpoints. The NetworkPool hook and every reader of its ledger judge by this one rule.
 *
 * @example
 * ```ts
 * ledgerTrusted("7/3f0c", "8/3f0c"); // true: the status one ahead
 * ledgerTrusted("7/3f0c", "6/3f0c"); // false: rolled back
 * ```
 */
export function ledgerTrusted(annotated: unknown, stored: unknown): boolean {
  if (annotated === stored) return true;
  if (typeof annotated !== "string" || typeof stored !== "string") return false;
  const slash = annotated.indexOf("/");
  if (slash < 0) return false;
  const uid = annotated.slice(slash);
  return stored.endsWith(uid) && checkpointSerial(stored) === checkpointSerial(annotated) + 1;
}

/** A recorded grant its pool refuses: the pool's trusted ledger grants (some of) its addresses to another holder. */
export interface RefusedRecord {
  /** The UID of the IPAllocation the ledger grants them to. */
  readonly holder: string;
  /** That holder's grant. */
  readonly range: Range;
}

/**
 * Whether the pool (a NetworkPool object as related) refuses the grant `record` of the IPAllocation `uid`: its
 * ledger, trusted by {@linkcode ledgerTrusted}, grants an address of the record to another holder. Such a record
 * (restored beside grants made since its holder was deleted) is not served: no status, TenantCluster, MetalLB
 * configuration or IPAddress uses its addresses. A ledger that is lost or being rebuilt from records is not read
 * against a record: the record stands until the pool says otherwise.
 */
export function refusedRecord(pool: unknown, uid: string, record: GrantRecord): RefusedRecord | undefined {
  if (typeof pool !== "object" || pool === null) return undefined;
  const { metadata, status } = pool as { metadata?: { annotations?: unknown }; status?: unknown };
  if (typeof status !== "object" || status === null) return undefined;
  const annotations = metadata?.annotations;
  const annotated = typeof annotations === "object" && annotations !== null
    ? (annotations as Record<string, unknown>)[CHECKPOINT_ANNOTATION]
    : undefined;
  const ledger = (status as { ledger?: { checkpoint?: unknown } | null }).ledger;
  if (
    !ledgerTrusted(annotated, typeof ledger === "object" && ledger !== null ? ledger.checkpoint : undefined)
  ) {
    return undefined;
  }
  return grantOverlapping(status as Record<string, unknown>, record.family, record.range, uid);
}

/** The `Ready` reason of an IPAllocation whose record its pool refuses, and of what waits on it. */
export const GRANT_CONFLICT = "GrantConflict";

/** Why a refused record is not served (bounded: a record, a pool name and a UID of the pool's own ledger). */
export function refusedRecordMessage(record: GrantRecord, refused: RefusedRecord): string {
  return `IPAllocation records ${formatAddress(record.family, record.range.start)}-${
    formatAddress(record.family, record.range.end)
  } from NetworkPool ${record.pool}, whose ledger grants ${
    formatAddress(record.family, refused.range.start)
  }-${formatAddress(record.family, refused.range.end)} to IPAllocation UID ${
    refused.holder.slice(0, 64)
  }: those addresses are not used here; the record is kept, and taken back once that grant is released`;
}
