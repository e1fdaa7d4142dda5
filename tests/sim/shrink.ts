/**
 * The shortest trace that still fails: chunks of operations removed while the run still breaks the same
 * invariant (delta debugging), each candidate cut at its own violation. Operations resolve against the state they
 * meet, so every sub-list is a valid run.
 *
 * @module
 */
import { type Op, type SimOptions, type SimResult, simulate } from "./simulate.ts";

/** What shrinking found: the operations, the run they give, and how many runs it took. */
export interface Shrunk {
  readonly ops: readonly Op[];
  readonly result: SimResult;
  readonly runs: number;
}

/**
 * Shrinks a failing list of operations to a shorter one that breaks the same invariant, within `budget` runs.
 *
 * @example
 * ```ts
 * const { ops } = await shrink(failing, 200);
 * ```
 */
export async function shrink(
  failing: readonly Op[],
  budget: number,
  options: SimOptions = {},
): Promise<Shrunk> {
  let result = await simulate(failing, options);
  const invariant = result.violation?.invariant;
  if (!invariant) throw new Error("shrink: the operations do not fail");
  let ops = failing.slice(0, result.ops);
  let runs = 1;
  for (let chunk = Math.ceil(ops.length / 2); chunk >= 1 && runs < budget; chunk = Math.floor(chunk / 2)) {
    for (let i = 0; i < ops.length && runs < budget;) {
      const candidate = [...ops.slice(0, i), ...ops.slice(i + chunk)];
      const r = await simulate(candidate, options);
      runs++;
      if (r.violation?.invariant === invariant) {
        ops = candidate.slice(0, r.ops);
        result = r;
      } else i += chunk;
    }
  }
  return { ops, result, runs };
}
