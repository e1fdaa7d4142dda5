/**
 * A closed loop of clients for the load scripts: latencies, answers, and the CPU each process spent per call,
 * read from /proc, so every figure comes with where the time went.
 *
 * @module
 */
import { cpuSeconds } from "./proc.ts";

/** What one loop measured. */
export interface Run {
  readonly latencies: number[];
  readonly statuses: Record<string, number>;
  readonly seconds: number;
  /** CPU milliseconds per call, by process. */
  readonly cpuMs: Record<string, number>;
}

/** The `p`th percentile of `values` (nearest rank), NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

const round = (v: number, digits = 1) => Number(v.toFixed(digits));

/**
 * `concurrency` clients sharing `total` calls of `send`, each answering a label (`"201"`, `"denied"`); the CPU of
 * each process of `pids` (undefined: not found, reported NaN) is read before and after.
 */
export async function drive(
  total: number,
  concurrency: number,
  pids: Record<string, number | undefined>,
  send: (i: number) => Promise<string>,
): Promise<Run> {
  const before = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [k, pid ? cpuSeconds(pid) ?? NaN : NaN]),
  );
  const wall = performance.now();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < total; i = next++) {
      const begin = performance.now();
      const status = await send(i);
      latencies.push(performance.now() - begin);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  const seconds = (performance.now() - wall) / 1000;
  const cpuMs = Object.fromEntries(
    Object.entries(pids).map((
      [k, pid],
    ) => [k, pid ? round((((cpuSeconds(pid) ?? NaN) - before[k]!) / total) * 1000, 3) : NaN]),
  );
  return { latencies, statuses, seconds, cpuMs };
}

/** A run's figures: calls per second, p50, p99 and max latency, answers, CPU per call. */
export function summary(r: Run): {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  answers: Record<string, number>;
  cpuMsPerCall: Record<string, number>;
} {
  return {
    perSecond: round(r.latencies.length / r.seconds),
    p50Ms: round(percentile(r.latencies, 50)),
    p99Ms: round(percentile(r.latencies, 99)),
    maxMs: round(Math.max(...r.latencies)),
    answers: r.statuses,
    cpuMsPerCall: r.cpuMs,
  };
}
