/**
 * The one door foreign bytes take into a value: every parse of bytes a team, a tenant or an unauthenticated caller
 * controls is charged to its isolate's {@linkcode HeapBudget} before `JSON.parse` runs, whole
 * ({@linkcode parseForeign}) or member by member along a projection ({@linkcode projectForeign}, which never
 * parses what it skips). `tools/foreign_parse_check.ts` fails CI on a parse of foreign bytes anywhere else.
 *
 * @module
 */
import { type HeapBudget, type HeapCharge, type HeapRefusal, isHeapRefusal } from "./heap_budget.ts";
import { type BuildCharge, type ObjectMembers, project, type Projection, projectUntil } from "./project.ts";

/** Bytes whose parse the budget cannot hold: `never` when they could not fit an empty heap either. */
export class ForeignRefused extends Error {
  override readonly name = "ForeignRefused";
  constructor(readonly refusal: HeapRefusal, readonly length: number) {
    super(
      refusal.tooDeep
        ? `${length} bytes of JSON nested too deep to read`
        : `${length} bytes of JSON whose parse could need ${
          Number.isFinite(refusal.need) ? `${mib(refusal.need)} MiB` : `more than ${mib(refusal.limit)} MiB`
        } of heap, ${mib(refusal.available)} MiB free${
          refusal.never ? " (more than it may ever spend)" : ""
        }`,
    );
  }
}

function mib(n: number): string {
  return (n / (1024 * 1024)).toFixed(1);
}

const utf8 = new TextDecoder();

/**
 * Parses `bytes` (UTF-8 JSON) once `budget` has taken what the parse could cost; throws {@linkcode ForeignRefused}
 * when it cannot, and `SyntaxError` (with its offset only: V8's message quotes the text) when it is not JSON.
 *
 * @example
 * ```ts
 * const status = parseForeign(await bytesOf(response), budget) as { reason?: string };
 * ```
 */
export function parseForeign(bytes: Uint8Array, budget: HeapBudget): unknown {
  const charge = take(budget, bytes);
  try {
    return parseText(bytes);
  } finally {
    charge.release();
  }
}

/**
 * Parses `bytes` like {@linkcode parseForeign}, but holds the charge until `release` is called: for a request
 * whose value lives while it is answered (a hook call, an admission review).
 *
 * @example
 * ```ts
 * const { value, release } = parseForeignHeld(body, budget);
 * try { answer(value); } finally { release(); }
 * ```
 */
export function parseForeignHeld(bytes: Uint8Array, budget: HeapBudget): { value: unknown; release(): void } {
  const charge = take(budget, bytes);
  try {
    return { value: parseText(bytes), release: () => charge.release() };
  } catch (err) {
    charge.release();
    throw err;
  }
}

/**
 * What `projection` keeps of the JSON in `bytes`: each member kept is charged to `budget` before it is parsed,
 * and what is skipped is never parsed. The charges are given back once the value is built: from then on it is part
 * of the heap the budget reads. Throws {@linkcode ForeignRefused} when a member's parse cannot be charged, and
 * `SyntaxError` where the bytes are not JSON.
 *
 * @example
 * ```ts
 * const names = projectForeign(page, members({ items: each(members({ metadata: WHOLE })) }), budget);
 * ```
 */
export function projectForeign(bytes: Uint8Array, projection: Projection, budget: HeapBudget): unknown {
  const charges: HeapCharge[] = [];
  try {
    return project(bytes, projection, (from, to) => {
      const slice = bytes.subarray(from, to);
      charges.push(take(budget, slice));
      return parseText(slice);
    }, builder(budget, charges, bytes.length));
  } finally {
    for (const c of charges) c.release();
  }
}

/**
 * {@linkcode projectForeign} of a top-level object's members up to the first that `wanted` names (see
 * `projectUntil`): the rest of the bytes is not even scanned.
 */
export function projectForeignUntil(
  bytes: Uint8Array,
  projection: ObjectMembers,
  wanted: readonly string[],
  budget: HeapBudget,
): Record<string, unknown> | undefined {
  const charges: HeapCharge[] = [];
  try {
    return projectUntil(bytes, projection, wanted, (from, to) => {
      const slice = bytes.subarray(from, to);
      charges.push(take(budget, slice));
      return parseText(slice);
    }, builder(budget, charges, bytes.length));
  } finally {
    for (const c of charges) c.release();
  }
}

/** The largest share of what a projection builds taken from the budget at once. */
const BUILD_CHUNK_MAX = 256 * 1024;

/**
 * Charges what a projection builds, in reservations that double up to {@linkcode BUILD_CHUNK_MAX} (a small
 * projection asks a small budget for little; 2.8 million objects ask about a thousand times, not millions), each
 * added to `charges`.
 */
function builder(budget: HeapBudget, charges: HeapCharge[], length: number): BuildCharge {
  let credit = 0;
  let chunk = 1024;
  return (bytes) => {
    if (credit >= bytes) {
      credit -= bytes;
      return;
    }
    let c = budget.reserve(chunk);
    if (isHeapRefusal(c)) c = budget.reserve(bytes);
    if (isHeapRefusal(c)) throw new ForeignRefused(c, length);
    charges.push(c);
    credit += c.bytes - bytes;
    chunk = Math.min(chunk * 2, BUILD_CHUNK_MAX);
  };
}

function take(budget: HeapBudget, bytes: Uint8Array): HeapCharge {
  const charge = budget.charge(bytes);
  if (isHeapRefusal(charge)) throw new ForeignRefused(charge, bytes.length);
  return charge;
}

function parseText(bytes: Uint8Array): unknown {
  const text = utf8.decode(bytes);
  try {
    return JSON.parse(text);
  } catch (err) {
    // V8's message quotes the text around the error, which can be a Secret's value: only the offset is kept.
    const at = /position (\d+)/.exec(String((err as Error)?.message))?.[1];
    throw new SyntaxError(
      at === undefined
        ? `malformed JSON: the body (${text.length} characters) is not a JSON document`
        : `malformed JSON at character ${at} of ${text.length}`,
    );
  }
}

/** Whether an error is the door's refusal. */
export function isForeignRefused(err: unknown): err is ForeignRefused {
  return err instanceof ForeignRefused;
}
