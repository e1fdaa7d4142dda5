import { secondsUntil } from "../../lib/time/mod.ts";

/** Upstream's reconcile intervals for a TenantCluster's state, in seconds. */
export function stateInterval(ready: boolean, created: Date | undefined, now: Date): number {
  if (!ready) return 30;
  const age = created ? (now.getTime() - created.getTime()) / 1000 : 0;
  return age < 3600 ? 60 : age < 86400 ? 300 : 900;
}

/**
 * `resyncAfterSeconds`: the earliest of the state interval and every moment a decision falls due (a pending
 * Service crossing 30 s, a grace period ending), so a pending Service is acted on within about 30 s at any age.
 */
export function resyncAfter(interval: number, dueAt: readonly Date[], now: Date): number {
  return Math.max(1, Math.min(interval, ...dueAt.map((d) => secondsUntil(now, d))));
}
