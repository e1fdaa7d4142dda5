/**
 * resourceVersions compared as what the API server makes them: etcd revisions, decimal numbers. Kubernetes calls
 * them opaque; anything that is not one is never taken as ordered, and its callers then fall back to the API.
 * Pure: the watch cache and admission's quota ledger (a hook's pure decision) share it.
 *
 * @module
 */

/** Whether `v` is a resourceVersion that can be ordered (a decimal etcd revision). */
export function isRevision(v: string | undefined): v is string {
  return v !== undefined && /^\d{1,30}$/.test(v);
}

/**
 * Whether resourceVersion `have` is at least `want`. Both must be revisions; otherwise the answer is "no".
 *
 * @example
 * ```ts
 * reached("120", "99"); // true
 * reached("abc", "1"); // false
 * ```
 */
export function reached(have: string | undefined, want: string): boolean {
  return isRevision(have) && isRevision(want) && BigInt(have) >= BigInt(want);
}

/**
 * The later of two resourceVersions: the one given when the other is absent, `undefined` when either is not a
 * revision.
 *
 * @example
 * ```ts
 * laterRevision("7", "12"); // "12"
 * laterRevision(undefined, "12"); // "12"
 * laterRevision("7", "x"); // undefined
 * ```
 */
export function laterRevision(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return isRevision(a) ? a : isRevision(b) ? b : undefined;
  if (!isRevision(a) || !isRevision(b)) return undefined;
  return BigInt(a) >= BigInt(b) ? a : b;
}
