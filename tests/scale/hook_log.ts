/**
 * What the hook service's request log says of a run: calls per route, answered and refused (429), so the scale
 * tier can report where Metacontroller sent its work.
 *
 * @module
 */

/** Calls of one route: answered (any status but 429) and refused busy (429). */
export interface RouteCalls {
  readonly answered: number;
  readonly busy: number;
}

/** Counts the `"msg":"request"` lines of JSON logs by route; lines that are not such records are skipped. */
export function hookCalls(logText: string): Record<string, RouteCalls> {
  const counts: Record<string, { answered: number; busy: number }> = {};
  for (const line of logText.split("\n")) {
    if (!line.includes('"msg":"request"')) continue;
    let record: { route?: unknown; status?: unknown };
    try {
      record = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof record.route !== "string" || !record.route.startsWith("/hooks/")) continue;
    const c = counts[record.route] ??= { answered: 0, busy: 0 };
    if (record.status === 429) c.busy++;
    else c.answered++;
  }
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => (a < b ? -1 : 1)));
}
