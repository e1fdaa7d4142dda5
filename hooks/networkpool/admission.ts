import { butlerPath, keyedItems } from "../../lib/butler/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  deletionInUse,
} from "../../lib/contract/mod.ts";
import type { ReadPlan, Reads } from "../../lib/http/mod.ts";
import { ledgerHolders } from "../../lib/pool_ledger/mod.ts";
import { poolDeletionBlockedMessage } from "./sync.ts";

/** The IPAllocation UIDs holding grants in the stored pool a delete would remove. */
function grantedUids(review: AdmissionReviewRequest): string[] {
  if (review.request.operation !== "DELETE") return [];
  return ledgerHolders(review.request.oldObject?.status as Record<string, unknown> | null | undefined);
}

/** A delete of a pool with grants reads the IPAllocations, to name the holders. */
export function networkPoolAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  return grantedUids(review).length ? { allocations: { path: butlerPath("ipallocations"), list: true } } : {};
}

/**
 * NetworkPool admission: a delete is refused while the pool's ledger (`status.ledger` of the stored object, or
 * `status.grants` of one not yet migrated) holds grants of IPAllocations that exist and are not being deleted,
 * naming them, with the message its finalizer reports. A grant whose allocation is gone or terminating is being
 * released: it does not refuse the delete (a `kubectl delete -f` of allocations and pool together goes through),
 * and the finalizer holds the pool until the ledger is empty.
 */
export function admitNetworkPool(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const uids = grantedUids(review);
  if (uids.length === 0) return { allowed: true };
  const live = new Map(
    keyedItems(reads.allocations).flatMap(([key, a]) => {
      const m = (a as { metadata: { uid?: string; deletionTimestamp?: string | null } }).metadata;
      return m.deletionTimestamp ? [] : [[m.uid, key] as const];
    }),
  );
  const blocking = uids.flatMap((uid) => live.has(uid) ? [live.get(uid)!] : []).sort();
  if (blocking.length === 0) return { allowed: true };
  const message = poolDeletionBlockedMessage(blocking);
  return deletionInUse(message);
}
