/**
 * The pool judges its ledger's checkpoint as the IPAllocation hook does (issue #56): Metacontroller writes a
 * decorator's status before its annotations, so a status one checkpoint ahead of the annotation (the second write
 * lost) is the current ledger, not a lost one; anything else that differs is lost.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { trustOf } from "../../hooks/networkpool/checkpoint.ts";
import { CHECKPOINT_ANNOTATION, ledgerTrusted } from "../../lib/api/mod.ts";

const UID = "pool-uid";
const pool = (annotated: string | undefined): { uid: string; annotations: Record<string, string> } => ({
  uid: UID,
  annotations: annotated === undefined ? {} : { [CHECKPOINT_ANNOTATION]: annotated },
});
const status = (stored: string | undefined) => ({
  ledger: { version: 2, grants: [], ...(stored === undefined ? {} : { checkpoint: stored }) },
});

Deno.test("the status one checkpoint ahead of the annotation is current, and is what the next sync keeps", () => {
  const trust = trustOf(pool(`7/${UID}`), status(`8/${UID}`));
  assert.equal(trust.state, "current");
  assert.equal(trust.checkpoint, `8/${UID}`);
  assert.equal(trustOf(pool(`7/${UID}`), status(`7/${UID}`)).state, "current");
});

Deno.test("behind, two ahead, another pool's or unreadable: lost", () => {
  for (const stored of [`6/${UID}`, `9/${UID}`, `8/other`, "8", undefined]) {
    assert.equal(trustOf(pool(`7/${UID}`), status(stored)).state, "lost", String(stored));
  }
  assert.equal(trustOf(pool(undefined), status(`1/${UID}`)).state, "lost");
});

Deno.test("the pool trusts a ledger exactly when an IPAllocation may copy from it", () => {
  const checkpoint = fc.oneof(
    fc.constant(undefined),
    fc.tuple(fc.integer({ min: 0, max: 12 }), fc.constantFrom(UID, "other")).map(([n, u]) => `${n}/${u}`),
    fc.constantFrom("x", "", "3"),
  );
  fc.assert(
    fc.property(checkpoint, checkpoint, (annotated, stored) => {
      if (annotated === undefined && stored === undefined) return; // before checkpoints: judged by its ledger
      const pooled = trustOf(pool(annotated), status(stored)).state === "current";
      const copied = ledgerTrusted(annotated, stored) && typeof stored === "string" &&
        stored.endsWith(`/${UID}`) && !stored.startsWith("0/");
      assert.equal(pooled, copied, `${annotated} / ${stored}`);
    }),
    { numRuns: 2000 },
  );
});
