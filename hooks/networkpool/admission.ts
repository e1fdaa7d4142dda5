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
 * `status.grants` of one not yet migrated) holds grants, naming the allocations (their UID when no longer listed), with the
 * message its finalizer reports. The finalizer stays as the second line of defence.
 */
export function admitNetworkPool(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const uids = grantedUids(review);
  if (uids.length === 0) return { allowed: true };
  const names = new Map(
    keyedItems(reads.allocations).map((
      [key, a],
    ) => [(a as { metadata: { uid?: string } }).metadata.uid, key]),
  );
  const blocking = uids.map((uid) => names.get(uid) ?? uid).sort();
  const message = poolDeletionBlockedMessage(blocking);
  return deletionInUse(message);
}
