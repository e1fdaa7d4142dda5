/**
 * A simulation worker: runs the seeds the main thread hands it, one at a time, and answers each with its result.
 *
 * @module
 */
import { generateOps, simulate } from "./simulate.ts";

/** What the main thread sends: a seed and its number of operations, or `null` to stop. */
export type SeedJob = { readonly seed: number; readonly ops: number } | null;

const scope = self as unknown as Worker;
scope.onmessage = async (e: MessageEvent<SeedJob>) => {
  if (e.data === null) {
    self.close();
    return;
  }
  const { seed, ops } = e.data;
  const result = await simulate(generateOps(seed, ops));
  scope.postMessage({ seed, result });
};
