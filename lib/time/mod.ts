/**
 * Kubernetes time values: RFC 3339 with whole seconds in UTC, as `metav1.Time` serialises them.
 *
 * @module
 */

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/**
 * Formats a time as Kubernetes does: `2026-11-21T09:00:00Z` (sub-second part dropped).
 *
 * @example
 * ```ts
 * formatTime(new Date("2026-11-21T09:00:00.750Z")); // "2026-11-21T09:00:00Z"
 * ```
 */
export function formatTime(time: Date): string {
  return time.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * Parses an RFC 3339 time, or returns `undefined` when the text is not one.
 *
 * @example
 * ```ts
 * parseTime("2026-11-21T09:00:00Z")?.getTime(); // 1795251600000
 * parseTime("yesterday"); // undefined
 * ```
 */
export function parseTime(text: string | null | undefined): Date | undefined {
  if (!text || !RFC3339.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** Whole seconds from `from` to `to`, rounded up, so a resync never fires before its moment. */
export function secondsUntil(from: Date, to: Date): number {
  return Math.max(0, Math.ceil((to.getTime() - from.getTime()) / 1000));
}
