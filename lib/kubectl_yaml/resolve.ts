/**
 * A plain (unquoted) YAML scalar resolved as go-yaml v2 resolves it (YAML 1.1, what `kubectl` and Argo CD read
 * manifests with, through sigs.k8s.io/yaml): `yes`, `on`, `y` are true; `no`, `off`, `n` false; `~` and nothing
 * null; `0x1F`, `017`, `0b101`, `1_000` integers; `1e3`, `.5` floats; `2001-12-14` stays a string.
 *
 * @module
 */

const BOOLS: Readonly<Record<string, boolean>> = Object.fromEntries([
  ...["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"].map((s) => [s, true]),
  ...["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"].map((s) => [s, false]),
]);
const NULLS = new Set(["", "~", "null", "Null", "NULL"]);
const SPECIAL_FLOATS: Readonly<Record<string, number>> = {
  ".nan": NaN,
  ".NaN": NaN,
  ".NAN": NaN,
  ".inf": Infinity,
  ".Inf": Infinity,
  ".INF": Infinity,
  "+.inf": Infinity,
  "+.Inf": Infinity,
  "+.INF": Infinity,
  "-.inf": -Infinity,
  "-.Inf": -Infinity,
  "-.INF": -Infinity,
};
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** Go's decimal float syntax (what `strconv.ParseFloat` takes of a text starting with `.`). */
const GO_DOT_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;

/** A resolved scalar: its value and whether go-yaml typed it as a float (a key prints differently). */
export interface Resolved {
  readonly value: string | number | boolean | null;
  readonly float?: true;
}

const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

/** Go's `strconv.ParseUint(s, 0, 64)` digits after the sign: base prefix, or a leading 0 for octal. */
function parseUnsigned(s: string): bigint | undefined {
  if (!s.length) return undefined;
  let base = 10;
  let digits = s;
  if (s[0] === "0") {
    const p = s[1]?.toLowerCase();
    if (s.length >= 3 && (p === "b" || p === "o" || p === "x")) {
      base = p === "b" ? 2 : p === "o" ? 8 : 16;
      digits = s.slice(2);
    } else {
      base = 8;
      digits = s.slice(1);
    }
  }
  const valid = base === 2
    ? /^[01]*$/
    : base === 8
    ? /^[0-7]*$/
    : base === 10
    ? /^[0-9]*$/
    : /^[0-9a-fA-F]*$/;
  if (!valid.test(digits)) return undefined;
  let n = 0n;
  for (const c of digits) n = n * BigInt(base) + BigInt(parseInt(c, 16));
  return n <= UINT64_MAX ? n : undefined;
}

/** Go's `strconv.ParseInt(s, 0, 64)`. */
function parseInt64(s: string): bigint | undefined {
  const neg = s[0] === "-";
  const n = parseUnsigned(s[0] === "-" || s[0] === "+" ? s.slice(1) : s);
  if (n === undefined) return undefined;
  if (neg) return n <= INT64_MAX + 1n ? -n : undefined;
  return n <= INT64_MAX ? n : undefined;
}

/** A Go float that overflows is an error to `ParseFloat`: the text stays a string. */
function finite(n: number): Resolved | undefined {
  return Number.isFinite(n) ? { value: n, float: true } : undefined;
}

/**
 * The value go-yaml v2 gives a plain scalar (`resolve("", in)`): a bool, null, an integer (as a number; above
 * 2^53 it is rounded), a float, or the text itself.
 *
 * @example
 * ```ts
 * resolvePlain("yes"); // { value: true }
 * resolvePlain("0x1F"); // { value: 31 }
 * resolvePlain("1.0"); // { value: 1, float: true }
 * resolvePlain("2001-12-14"); // { value: "2001-12-14" }
 * ```
 */
export function resolvePlain(text: string): Resolved {
  if (Object.hasOwn(BOOLS, text)) return { value: BOOLS[text]! };
  if (NULLS.has(text)) return { value: null };
  if (Object.hasOwn(SPECIAL_FLOATS, text)) return { value: SPECIAL_FLOATS[text]!, float: true };
  const hint = text[0];
  if (hint === ".") {
    return (GO_DOT_FLOAT.test(text) ? finite(Number(text)) : undefined) ?? { value: text };
  }
  if (hint === undefined || !/[-+0-9]/.test(hint)) return { value: text };
  // A timestamp (2001-12-14, 2001-12-14T21:59:43Z) is kept as its text when decoded into an interface{}.
  const plain = text.replaceAll("_", "");
  const int = parseInt64(plain);
  if (int !== undefined) return { value: Number(int) };
  if (plain[0] !== "-" && plain[0] !== "+") {
    const uint = parseUnsigned(plain);
    if (uint !== undefined) return { value: Number(uint) };
  }
  if (YAML_STYLE_FLOAT.test(plain)) {
    const f = finite(Number(plain));
    if (f) return f;
  }
  if (plain.startsWith("0b")) {
    const n = /^[01]+$/.test(plain.slice(2)) ? BigInt(`0b${plain.slice(2)}`) : undefined;
    if (n !== undefined && n <= UINT64_MAX) return { value: Number(n) };
  } else if (plain.startsWith("-0b")) {
    const n = /^[01]+$/.test(plain.slice(3)) ? BigInt(`0b${plain.slice(3)}`) : undefined;
    if (n !== undefined && n <= INT64_MAX + 1n) return { value: -Number(n) };
  }
  return { value: text };
}
