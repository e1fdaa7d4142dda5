/**
 * When a tenant's kubeconfig Secret is read again. Reading it is the only way to notice a rotation whose old
 * credentials still work, but every read is a request to the management API server for every tenant: a healthy
 * tenant waits the configured period; one that cannot be read with what the Secret holds is the likely sign of a
 * new, fixed or moved kubeconfig, and looks again soon.
 *
 * @module
 */

/** How a tenant stands with its kubeconfig. */
export type KubeconfigTrouble =
  /** Read with it. */
  | "none"
  /** The Secret is missing, invalid or unreadable, or the tenant unreachable with it. */
  | "troubled"
  /** The tenant refuses the credentials (401, 403): a rotation is the likely cause. */
  | "refused";

/** How soon a troubled tenant's Secret is read again at most (ms). */
export const TROUBLED_RECHECK_MS = 60_000;
/** How soon after a refusal (ms). */
export const REFUSED_RECHECK_MS = 2000;

/**
 * Milliseconds until the Secret is read again: the period when all is well, at most
 * {@linkcode TROUBLED_RECHECK_MS} in trouble and {@linkcode REFUSED_RECHECK_MS} after a refusal.
 *
 * @example
 * ```ts
 * recheckDelayMs("none", 300); // 300000
 * recheckDelayMs("troubled", 300); // 60000
 * recheckDelayMs("refused", 300); // 2000
 * ```
 */
export function recheckDelayMs(trouble: KubeconfigTrouble, periodSeconds: number): number {
  const period = periodSeconds * 1000;
  return trouble === "refused"
    ? Math.min(period, REFUSED_RECHECK_MS)
    : trouble === "troubled"
    ? Math.min(period, TROUBLED_RECHECK_MS)
    : period;
}
