/**
 * What a smoke run checks of a benchmark or load run's output: that it gave a result, never how fast it was.
 *
 * @module
 */

/** A benchmark in `deno bench --json`'s output. */
interface BenchEntry {
  readonly origin?: string;
  readonly name?: string;
  readonly results?: readonly Record<string, unknown>[];
}

/**
 * Why a `deno bench --json` report falls short, file by file: for every bench file given, its benchmarks that gave
 * no `ok` result, or that it registered none. An empty map means every file ran and every benchmark has a result.
 *
 * @example
 * ```ts
 * benchProblems(JSON.parse(stdout), ["file:///repo/bench/allocator_bench.ts"]);
 * // Map { "file:///repo/bench/allocator_bench.ts" => ["no benchmark ran"] }
 * ```
 */
export function benchProblems(report: unknown, files: readonly string[]): Map<string, string[]> {
  const benches = (report as { benches?: BenchEntry[] } | null)?.benches;
  const list = Array.isArray(benches) ? benches : [];
  const problems = new Map<string, string[]>();
  for (const file of files) {
    const mine = list.filter((b) => b.origin === file);
    const failed = mine.filter((b) => !b.results?.length || b.results.some((r) => !("ok" in r)))
      .map((b) => `${b.name}: ${JSON.stringify(b.results ?? []).slice(0, 300)}`);
    const found = mine.length ? failed : ["no benchmark ran"];
    if (found.length) problems.set(file, found);
  }
  return problems;
}

/** The value at a dotted `path` (`variants.base.p99Ms`) of a parsed JSON value, else `undefined`. */
function at(value: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>(
    (v, key) => v !== null && typeof v === "object" ? (v as Record<string, unknown>)[key] : undefined,
    value,
  );
}

/**
 * The figures a load run's JSON result lacks: each of `paths` must hold a finite number (a NaN is written as
 * `null`, so a figure nothing was measured for shows here). `text` is the file's content, or `undefined` when the
 * run wrote none.
 *
 * @example
 * ```ts
 * missingFigures('{"creates":{"p99Ms":null}}', ["creates.p99Ms", "overshoot"]);
 * // ["creates.p99Ms: null", "overshoot: missing"]
 * ```
 */
export function missingFigures(text: string | undefined, paths: readonly string[]): string[] {
  if (text === undefined) return ["no result written"];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return [`the result is not JSON: ${(err as Error).message}`];
  }
  return paths.flatMap((p) => {
    const v = at(parsed, p);
    if (typeof v === "number" && Number.isFinite(v)) return [];
    return [`${p}: ${v === undefined ? "missing" : JSON.stringify(v)}`];
  });
}
