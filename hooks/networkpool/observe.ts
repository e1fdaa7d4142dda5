/**
 * What a pool sync sees of its IPAllocations against its ledger: which entries are still held, which allocations
 * wait (and in which order), which cannot be read, and who holds what, for messages.
 *
 * @module
 */
import { KINDS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import {
  type DecoratorRequest,
  describeIssue,
  groupKey,
  type RelatedObject,
} from "../../lib/contract/mod.ts";
import { decodeRecord, type PoolLedger, tokenUid, uidToken } from "../../lib/pool_ledger/mod.ts";
import { ObservedAllocation, recordOf } from "../../lib/api/mod.ts";

export interface Observed {
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
export function observe(request: DecoratorRequest, ledger: PoolLedger, lost: boolean): Observed {
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
    // An untrusted ledger keeps only what its holder does not contradict: a grant it records goes by the record.
    if (i >= 0 && !(lost && contradicts(group[key]!, ledger, i))) {
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
    // One being deleted asks for nothing new, but a grant it records is still its own until it is gone.
    if (ours && (!metadata.deletionTimestamp || recordOf(metadata))) {
      pending.push({ allocation: parsed.data, token });
    }
  }
  invalid.sort((a, b) => (a.key < b.key ? -1 : 1));
  return { held, pending, invalid, terminating };
}

/** Whether an allocation records another grant than the ledger's entry `i`. */
function contradicts(obj: RelatedObject, ledger: PoolLedger, i: number): boolean {
  const r = recordOf(obj.metadata);
  if (!r) return false;
  const g = decodeRecord(ledger.family!, ledger.base!, ledger.records[i]!);
  return !g || g.family !== r.family || g.range.start !== r.range.start || g.range.end !== r.range.end;
}

/** The UID of a related object, when it has one. */
function uidOf(obj: RelatedObject): string | undefined {
  const uid = (obj.metadata as { uid?: unknown } | null | undefined)?.uid;
  return typeof uid === "string" && uid ? uid : undefined;
}

/** `namespace/name` of the IPAllocations holding `tokens`, for messages; the UID when it is not related. */
export function holderNames(request: DecoratorRequest, tokens: readonly string[]): string[] {
  const group = request.related[groupKey(KINDS.IPAllocation)] ?? {};
  const names = new Map<string, string>();
  for (const [key, obj] of Object.entries(group)) {
    const uid = uidOf(obj);
    if (uid) names.set(uidToken(uid), key);
  }
  return tokens.map((t) => names.get(t) ?? tokenUid(t) ?? t).sort();
}

/** FIFO: creationTimestamp, then namespace/name. */
export function fifo(
  { allocation: a }: { allocation: ObservedAllocation },
  { allocation: b }: { allocation: ObservedAllocation },
): number {
  // Allocations that record a grant go first: they take back what they hold before anything new is handed out.
  const ra = recordOf(a.metadata) ? 2 : a.status ? 1 : 0;
  const rb = recordOf(b.metadata) ? 2 : b.status ? 1 : 0;
  if (ra !== rb) return rb - ra;
  const ta = a.metadata.creationTimestamp ?? "";
  const tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}
