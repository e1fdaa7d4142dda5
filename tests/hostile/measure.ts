/**
 * What the hostile tier measures with: percentiles, a process's peak resident memory, and its results file.
 *
 * @module
 */

/** The `p`th percentile of `values` (nearest rank); NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

/** The peak resident memory of a process, in bytes (`VmHWM`); NaN once it is gone. */
export function residentPeak(pid: number): number {
  let status: string;
  try {
    status = Deno.readTextFileSync(`/proc/${pid}/status`);
  } catch {
    return NaN;
  }
  return Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

/** Writes one part of the tier's JSON report (`run.ts` gathers them). */
export async function record(name: string, result: unknown): Promise<void> {
  const dir = Deno.env.get("HOSTILE_RESULTS");
  const text = JSON.stringify(result, null, 2);
  console.log(`${name}: ${text}`);
  if (dir) await Deno.writeTextFile(`${dir}/${name}.json`, text);
}
