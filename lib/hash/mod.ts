/**
 * FNV-1a, 32 bits: a short, stable, dependency-free hash for names and identities. The one home of its constants;
 * `lib/pool_ledger/uid.ts` folds the same loop into its token check, on its hot path.
 *
 * @module
 */

/** FNV-1a's 32-bit offset basis. */
export const FNV_OFFSET_32 = 0x811c9dc5;
/** FNV-1a's 32-bit prime. */
export const FNV_PRIME_32 = 0x01000193;

/**
 * 32-bit FNV-1a over code units: a string's UTF-16 units, or bytes. Starts from `seed` (the offset basis unless
 * given: a different seed gives an independent hash of the same text).
 *
 * @example
 * ```ts
 * fnv1a32("a"); // 0xe40c292c
 * fnv1a32(new TextEncoder().encode("é")); // over the two UTF-8 bytes
 * ```
 */
export function fnv1a32(units: string | Iterable<number>, seed: number = FNV_OFFSET_32): number {
  let h = seed >>> 0;
  if (typeof units === "string") {
    for (let i = 0; i < units.length; i++) h = Math.imul(h ^ units.charCodeAt(i), FNV_PRIME_32) >>> 0;
  } else {
    for (const u of units) h = Math.imul(h ^ u, FNV_PRIME_32) >>> 0;
  }
  return h;
}
