/**
 * Kubernetes resource quantities (`500m`, `4`, `16Gi`, `2Ti`, `1.5e3`) as exact integers of nano-units, so
 * sums, products and comparisons never round. Parsing follows the Kubernetes grammar; values finer than a
 * nano-unit are rounded up, as Kubernetes does.
 *
 * @example
 * ```ts
 * const cpu = parseQuantity("500m");      // { ok: true, value: { nanos: 500000000n, binary: false } }
 * formatQuantity(multiply(cpu.value, 3));  // "1500m"
 * ```
 *
 * @module
 */

/** An exact quantity: `nanos` is the value times 10^9; `binary` remembers a binary-SI input for formatting. */
export interface Quantity {
  readonly nanos: bigint;
  readonly binary: boolean;
}

const NANO = 1_000_000_000n;
const BINARY: Record<string, bigint> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };

const GRAMMAR = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)|[eE]([+-]?\d+))?$/;

function pow10(e: number): bigint {
  return 10n ** BigInt(e);
}

/** Divides rounding up (towards +infinity for positive values), as Kubernetes rounds sub-nano precision. */
function divCeil(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b === 0n ? q : a > 0n ? q + 1n : q;
}

/**
 * Parses a quantity given as a string or a number (the CRD's int-or-string fields).
 *
 * @example
 * ```ts
 * parseQuantity("16Gi").ok;  // true
 * parseQuantity("16GB").ok;  // false
 * ```
 */
export function parseQuantity(
  input: string | number,
): { ok: true; value: Quantity } | { ok: false; message: string } {
  const text = typeof input === "number" ? String(input) : input.trim();
  const m = GRAMMAR.exec(text);
  if (!m || (typeof input === "number" && !Number.isFinite(input))) {
    return { ok: false, message: `invalid quantity ${JSON.stringify(input)}` };
  }
  const [, sign, number, suffix = "", exponent] = m;
  const [whole = "0", fraction = ""] = number!.split(".");
  const digits = BigInt((whole || "0") + fraction);
  const scale = -fraction.length; // value = digits * 10^scale
  let nanos: bigint;
  let binary = false;
  if (suffix in BINARY) {
    binary = true;
    const num = digits * BINARY[suffix]! * NANO;
    nanos = scale < 0 ? divCeil(num, pow10(-scale)) : num * pow10(scale);
  } else {
    const e = scale + (exponent !== undefined ? Number(exponent) : DECIMAL[suffix]!) + 9;
    if (Math.abs(e) > 60) return { ok: false, message: `quantity ${JSON.stringify(input)} is out of range` };
    nanos = e >= 0 ? digits * pow10(e) : divCeil(digits, pow10(-e));
  }
  return { ok: true, value: { nanos: sign === "-" ? -nanos : nanos, binary } };
}

/** The sum of quantities; binary if any operand was binary. */
export function add(...qs: readonly Quantity[]): Quantity {
  return { nanos: qs.reduce((n, q) => n + q.nanos, 0n), binary: qs.some((q) => q.binary) };
}

/** A quantity times a whole number (per-node value × replicas). */
export function multiply(q: Quantity, times: number | bigint): Quantity {
  return { nanos: q.nanos * BigInt(times), binary: q.binary };
}

/** Zero, decimal. */
export const ZERO: Quantity = Object.freeze({ nanos: 0n, binary: false });

/** A whole count (clusters, nodes) as a quantity, to compare with limits the same way as CPU or memory. */
export function fromCount(n: number): Quantity {
  return { nanos: BigInt(n) * 1_000_000_000n, binary: false };
}

/** A limit as read: none (unset), a limit (0 included), or text that is not a quantity. */
export type Limit =
  | { readonly ok: true; readonly limit?: Quantity }
  | { readonly ok: false; readonly message: string };

/**
 * A limit as Team and environment quotas read it. Only an unset limit is not enforced (the seeds: "When a limit
 * is not set, no enforcement is applied"); `0` is a limit of zero, so a platform admin can freeze a team. Text
 * that is not a quantity is an error, never "no limit": callers refuse or report it (fail closed).
 *
 * @example
 * ```ts
 * readLimit("24");      // { ok: true, limit: { nanos: 24000000000n, binary: false } }
 * readLimit(0);         // { ok: true, limit: { nanos: 0n, binary: false } }
 * readLimit(undefined); // { ok: true }
 * readLimit("480GB").ok; // false
 * ```
 */
export function readLimit(v: string | number | undefined): Limit {
  if (v === undefined) return { ok: true };
  const p = parseQuantity(v);
  if (!p.ok) return p;
  if (p.value.nanos < 0n) return { ok: false, message: `negative quantity ${JSON.stringify(v)}` };
  return { ok: true, limit: p.value };
}

/**
 * The limit to enforce, or `undefined` when none is set or it cannot be read (the caller has reported that
 * through {@linkcode readLimit}).
 *
 * @example
 * ```ts
 * limitOf(0); // { nanos: 0n, binary: false }
 * ```
 */
export function limitOf(v: string | number | undefined): Quantity | undefined {
  const l = readLimit(v);
  return l.ok ? l.limit : undefined;
}

/** -1, 0 or 1. */
export function compare(a: Quantity, b: Quantity): number {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** Whether `used` is strictly above `percent` % of `limit` (exact). */
export function above(used: Quantity, limit: Quantity, percent: number): boolean {
  return used.nanos * 100n > limit.nanos * BigInt(percent);
}

/** `floor(used * 100 / limit)`; 0 when the limit is zero or negative and nothing is used, else 100+ . */
export function percentOf(used: Quantity, limit: Quantity): number {
  if (limit.nanos <= 0n) return used.nanos > 0n ? 100 : 0;
  return Number((used.nanos * 100n) / limit.nanos);
}

/**
 * Canonical text: binary quantities with the largest binary suffix that divides them exactly (`2Ti`,
 * `1536Mi`), decimal ones with the largest decimal suffix (`120`, `500m`, `2k`, `1500m`).
 *
 * @example
 * ```ts
 * formatQuantity(add(parse("16Gi"), parse("16Gi"))); // "32Gi"
 * ```
 */
export function formatQuantity(q: Quantity): string {
  const sign = q.nanos < 0n ? "-" : "";
  const n = q.nanos < 0n ? -q.nanos : q.nanos;
  if (n === 0n) return "0";
  if (q.binary && n % NANO === 0n) {
    const units = n / NANO;
    for (const [suffix, size] of BINARY_LARGEST_FIRST) {
      if (units % size === 0n) return `${sign}${units / size}${suffix}`;
    }
    return `${sign}${units}`;
  }
  for (const [suffix, size] of DECIMAL_LARGEST_FIRST) {
    if (n % size === 0n) return `${sign}${n / size}${suffix}`;
  }
  return `${sign}${n}n`;
}

// Computed once: formatting runs for every figure of every status (a Team's usage formats dozens per sync).
const BINARY_LARGEST_FIRST = Object.entries(BINARY).reverse();
const DECIMAL_LARGEST_FIRST = Object.entries(DECIMAL).sort((a, b) => b[1] - a[1]).map(([suffix, e]) =>
  [suffix, pow10(e + 9)] as const
);
