/**
 * A child IPAllocation whose recorded grant its pool refuses (docs/design.md#recorded-grants-its-pool-refuses): the
 * pool's trusted ledger grants those addresses to another holder, as after a restore beside grants made since.
 * The cluster keeps the allocation (its record is evidence, and the pool takes it back once the other grant is
 * released) but uses none of its addresses: it is not Allocated, `NetworkReady` says why, and MetalLB is not told.
 *
 * @module
 */
import { KINDS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { groupKey, type RelatedMap } from "../../lib/contract/mod.ts";
import { GRANT_CONFLICT, recordOf, refusedRecord, refusedRecordMessage } from "../../lib/api/mod.ts";
import type { ObservedChild } from "./plan_draft.ts";

/** A child as the plan reads it once its pool's word is heard: refused records wait, with why. */
export function withPoolsWord(child: ObservedChild, observed: unknown, related: RelatedMap): ObservedChild {
  const why = refusal(child, observed as { metadata?: { uid?: unknown }; status?: unknown }, related);
  if (why === undefined) return child;
  const {
    cidr: _c,
    startAddress: _s,
    endAddress: _e,
    allocatedCount: _n,
    ...rest
  } = child.value.status ?? {};
  return { ...child, value: { ...child.value, status: { ...rest, phase: "Pending" } }, refused: why };
}

/** Why a child's record is refused: its pool's ledger (when related), else its own status's word. */
function refusal(
  child: ObservedChild,
  raw: { metadata?: { uid?: unknown }; status?: unknown },
  related: RelatedMap,
): string | undefined {
  const record = recordOf(child.value.metadata);
  if (!record) return undefined;
  const uid = typeof raw.metadata?.uid === "string" ? raw.metadata.uid : "";
  const ref = child.value.spec.poolRef;
  const pool = related[groupKey(KINDS.NetworkPool)]?.[`${ref.namespace ?? SYSTEM_NAMESPACE}/${ref.name}`];
  const refused = uid ? refusedRecord(pool, uid, record) : undefined;
  if (refused) return refusedRecordMessage(record, refused);
  const conditions = (raw.status as { conditions?: unknown } | null | undefined)?.conditions;
  const ready = Array.isArray(conditions)
    ? conditions.find((c) => (c as { type?: unknown } | null)?.type === "Ready") as
      | { reason?: unknown; message?: unknown }
      | undefined
    : undefined;
  return ready?.reason === GRANT_CONFLICT && typeof ready.message === "string"
    ? ready.message.slice(0, 512)
    : undefined;
}
