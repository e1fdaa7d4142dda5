import type { DecoratorRequest, DecoratorResponse } from "../../lib/contract/mod.ts";
import type { Signal } from "../../lib/signals/mod.ts";
import { capacityEvent, readAnnouncements } from "./capacity_events.ts";
import { statusFigures } from "./figures.ts";

/**
 * The signals of a NetworkPool sync: the pool's figures for metrics (or `gone` once finalized), and one Event per
 * announcement the response makes that the request's status did not hold.
 */
export function networkPoolSignals(request: DecoratorRequest, response: DecoratorResponse): Signal[] {
  const { metadata } = request.object;
  const pool = { namespace: metadata.namespace ?? "", name: metadata.name };
  if (response.finalized) return [{ signal: "pool", ...pool, gone: true }];
  const status = (response.status ?? {}) as Record<string, unknown>;
  const before = readAnnouncements(request.object.status);
  const events = readAnnouncements(status)
    .filter((a) => !before.some((b) => b.type === a.type && b.time === a.time && b.status === a.status))
    .map((a) => capacityEvent(a, { ...pool, uid: metadata.uid ?? "" }, status));
  const failures = status.failures;
  const pendingAllocations = typeof failures === "object" && failures !== null
    ? Object.keys(failures).length
    : 0;
  const total = (status.releases as { total?: unknown } | undefined)?.total;
  const releasedGrants = typeof total === "number" ? { releasedGrants: total } : {};
  return [
    { signal: "pool", ...pool, ...statusFigures(status), pendingAllocations, ...releasedGrants },
    ...events,
  ];
}
