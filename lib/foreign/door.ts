/**
 * The one door foreign bytes take into a value: every parse of bytes a team, a tenant or an unauthenticated caller
 * controls is charged to its isolate's {@linkcode HeapBudget} before `JSON.parse` runs, whole
 * ({@linkcode parseForeign}) or member by member along a projection ({@linkcode projectForeign}, which never
 * parses what it skips). `tools/foreign_parse_check.ts` fails CI on a parse of foreign bytes anywhere else.
 *
 * @module
 */
import { QUOTE } from "./json_bytes.ts";
import {
  type HeapBudget,
  type HeapCharge,
  type HeapRefusal,
  isHeapRefusal,
  JSON_WORST_PER_BYTE,
} from "./heap_budget.ts";
import { jsonParseCost } from "./json_cost.ts";
import { type ObjectMembers, project, type Projection, projectUntil } from "./project.ts";

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
  const drawn = new Drawn(budget, bytes.length);
  try {
    return project(bytes, projection, (from, to) => {
      const slice = bytes.subarray(from, to);
      drawn.take(slice);
      return parseText(slice);
    }, (n) => drawn.build(n));
  } finally {
    drawn.release();
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
  const drawn = new Drawn(budget, bytes.length);
  try {
    return projectUntil(bytes, projection, wanted, (from, to) => {
      const slice = bytes.subarray(from, to);
      drawn.take(slice);
      return parseText(slice);
    }, (n) => drawn.build(n));
  } finally {
    drawn.release();
  }
}

/** What a projection draws from the budget at once: its members are many and small, the budget's check is not. */
const DRAW_BYTES = 1024 * 1024;
/** A member this short is charged the most its bytes could cost, unscanned. */
const UNSCANNED_BYTES = 256;

/**
 * The charges of one projection: drawn from the budget {@linkcode DRAW_BYTES} at a time (or a member's own cost,
 * when larger), each member's parse and each object the projection builds taken from what was drawn, everything
 * given back at the end. A budget's check reads the heap's statistics, which costs more than parsing a name;
 * drawing ahead keeps it to one a megabyte (2.8 million kept `{}` ask about 180 times, not millions).
 */
class Drawn {
  readonly #budget: HeapBudget;
  readonly #length: number;
  readonly #charges: HeapCharge[] = [];
  #left = 0;

  /** `length`: the document's, named when a build is refused. */
  constructor(budget: HeapBudget, length: number) {
    this.#budget = budget;
    this.#length = length;
  }

  /** Charges the parse of `slice`, or throws {@linkcode ForeignRefused}. */
  take(slice: Uint8Array): void {
    const need = slice.length <= UNSCANNED_BYTES
      ? (JSON_WORST_PER_BYTE + 2) * slice.length
      : jsonParseCost(slice, Math.max(this.#left, this.#budget.limit));
    if (!Number.isFinite(need)) {
      throw new ForeignRefused(
        { need, available: this.#left, limit: this.#budget.limit, never: true },
        slice.length,
      );
    }
    this.#spend(need, slice.length);
  }

  /** Charges `bytes` the projection is about to build (see `BuildCharge`), or throws {@linkcode ForeignRefused}. */
  build(bytes: number): void {
    this.#spend(bytes, this.#length);
  }

  #spend(need: number, length: number): void {
    if (need > this.#left) {
      const charge = this.#budget.reserve(Math.max(need - this.#left, DRAW_BYTES));
      const exact = isHeapRefusal(charge) ? this.#budget.reserve(need - this.#left) : charge;
      if (isHeapRefusal(exact)) throw new ForeignRefused(exact, length);
      this.#charges.push(exact);
      this.#left += exact.bytes;
    }
    this.#left -= need;
  }

  release(): void {
    for (const c of this.#charges) c.release();
  }
}

function take(budget: HeapBudget, bytes: Uint8Array): HeapCharge {
  const charge = budget.charge(bytes);
  if (isHeapRefusal(charge)) throw new ForeignRefused(charge, bytes.length);
  return charge;
}

function parseText(bytes: Uint8Array): unknown {
  const simple = simpleScalar(bytes);
  if (simple !== NOT_SIMPLE) return simple;
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

const NOT_SIMPLE = Symbol("not simple");

/**
 * A short string of plain ASCII (no escape, no control character) or `true`, `false`, `null`, read without a
 * decoder and a parse: most members a projection keeps are names, versions and flags, and a call each of
 * `TextDecoder` and `JSON.parse` costs more than they do. Anything else is {@linkcode NOT_SIMPLE}.
 */
function simpleScalar(bytes: Uint8Array): unknown {
  const n = bytes.length;
  if (n > 66 || n < 2) return NOT_SIMPLE;
  if (bytes[0] === QUOTE) {
    if (bytes[n - 1] !== QUOTE) return NOT_SIMPLE;
    let text = "";
    for (let i = 1; i < n - 1; i++) {
      const b = bytes[i]!;
      if (b === 0x5c || b === QUOTE || b < 0x20 || b >= 0x80) return NOT_SIMPLE;
      text += String.fromCharCode(b);
    }
    return text;
  }
  if (n === 4 && bytes[0] === 0x74 && bytes[1] === 0x72 && bytes[2] === 0x75 && bytes[3] === 0x65) {
    return true;
  }
  if (n === 4 && bytes[0] === 0x6e && bytes[1] === 0x75 && bytes[2] === 0x6c && bytes[3] === 0x6c) {
    return null;
  }
  return NOT_SIMPLE;
}

/** Whether an error is the door's refusal. */
export function isForeignRefused(err: unknown): err is ForeignRefused {
  return err instanceof ForeignRefused;
}
