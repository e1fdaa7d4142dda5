/**
 * The benchmarks' smoke mode. With `BENCH_SMOKE=1` (set by `deno task test:smoke`, tests/smoke/run.ts), every
 * benchmark runs on small data and as few times as `deno bench` allows: the run proves that each one still
 * builds its data, runs and gives a result, in seconds. Figures come only from full runs (docs/performance.md).
 *
 * @example
 * ```ts
 * import { RUNS, sized } from "./smoke.ts";
 * const grants = sized(10_000, 100);
 * Deno.bench(`allocate among ${grants} grants`, { ...RUNS }, () => {});
 * ```
 *
 * @module
 */

/** Whether `BENCH_SMOKE=1` is set; a run not allowed to read it (no `--allow-env`) is a full run. */
function smokeRequested(): boolean {
  const { state } = Deno.permissions.querySync({ name: "env", variable: "BENCH_SMOKE" });
  return state === "granted" && Deno.env.get("BENCH_SMOKE") === "1";
}

/** Whether this is a smoke run. */
export const SMOKE: boolean = smokeRequested();

/** `full` in a measuring run, `smoke` in a smoke run: the size of a benchmark's data. */
export function sized<T>(full: T, smoke: T): T {
  return SMOKE ? smoke : full;
}

/**
 * `Deno.bench` options for a smoke run: one warm-up and one measured iteration (`deno bench` still spends its
 * half-second budget on a benchmark faster than that). Empty in a measuring run.
 */
export const RUNS: { readonly n?: number; readonly warmup?: number } = SMOKE ? { n: 1, warmup: 1 } : {};

/** A count as the benchmarks' names print it: `10,000`. */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}
