/**
 * How Go prints values in the API server's messages: `strconv.Quote` (`%q`), `encoding/json`'s `Marshal` and
 * `%v` of a float64, so that a field error's value reads as the API server writes it.
 *
 * @module
 */

/** Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

const QUOTE_ESCAPES: Readonly<Record<string, string>> = {
  "\x07": "\\a",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\v": "\\v",
  "\\": "\\\\",
  '"': '\\"',
};

const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");

/**
 * Go's `strconv.Quote` (and `%q` of a string): printable runes as they are, the C escapes, `\xNN` below U+0080 and
 * `\uNNNN`/`\UNNNNNNNN` above; a lone surrogate (invalid UTF-8 to Go) is `\ufffd`'s replacement.
 *
 * @example
 * ```ts
 * quote('a"b\n'); // '"a\\"b\\n"'
 * quote("\u00a0"); // '"\\u00a0"'
 * ```
 */
export function quote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (QUOTE_ESCAPES[ch]) out += QUOTE_ESCAPES[ch];
    else if (cp >= 0xd800 && cp <= 0xdfff) out += "\ufffd";
    else if (PRINTABLE.test(ch)) out += ch;
    else if (cp < 0x80) out += `\\x${hex(cp, 2)}`;
    else if (cp < 0x10000) out += `\\u${hex(cp, 4)}`;
    else out += `\\U${hex(cp, 8)}`;
  }
  return out + '"';
}

/** encoding/json's escapes: `<`, `>`, `&`, U+2028, U+2029 and control characters. */
function jsonString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch === "\b") out += "\\b";
    else if (ch === "\f") out += "\\f";
    else if (cp < 0x20 || ch === "<" || ch === ">" || ch === "&" || cp === 0x2028 || cp === 0x2029) {
      out += `\\u${hex(cp, 4)}`;
    } else if (cp >= 0xd800 && cp <= 0xdfff) out += "\ufffd";
    else out += ch;
  }
  return out + '"';
}

/** A float64 as encoding/json writes it (`'f'` format, `'e'` below 1e-6 and from 1e21). */
function jsonNumber(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) return n.toExponential().replace(/e([+-])(\d)$/, "e$10$2");
  return String(n);
}

/**
 * Go's `json.Marshal` of a decoded JSON value: map keys sorted, HTML characters escaped, numbers as Go writes a
 * float64 (an integer as its digits).
 *
 * @example
 * ```ts
 * marshalJSON({ b: "<x>", a: 1 }); // '{"a":1,"b":"\\u003cx\\u003e"}'
 * ```
 */
export function marshalJSON(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return jsonString(value);
  if (typeof value === "number") return jsonNumber(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return `[${value.map(marshalJSON).join(",")}]`;
  const record = value as Record<string, unknown>;
  return `{${
    Object.keys(record).sort().filter((k) => record[k] !== undefined).map((k) =>
      `${jsonString(k)}:${marshalJSON(record[k])}`
    ).join(",")
  }}`;
}

/**
 * `%v` of a float64 (`%g` with the shortest digits): exponent form when the exponent is below -4 or at least 6,
 * with at least two exponent digits.
 *
 * @example
 * ```ts
 * formatFloatV(1.5); // "1.5"
 * formatFloatV(1e6); // "1e+06"
 * ```
 */
export function formatFloatV(f: number): string {
  if (Number.isNaN(f)) return "NaN";
  if (!Number.isFinite(f)) return f > 0 ? "+Inf" : "-Inf";
  if (f === 0) return Object.is(f, -0) ? "-0" : "0";
  const [mantissa, exponent] = f.toExponential().split("e") as [string, string];
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6) {
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(f);
}

/**
 * Whether a decoded JSON number is an int64 to the API server (its JSON decoder keeps a number that parses as
 * int64 as one, and every other as a float64).
 *
 * @example
 * ```ts
 * isInt64(3); // true
 * isInt64(1e300); // false
 * ```
 */
export function isInt64(n: number): boolean {
  return Number.isInteger(n) && Math.abs(n) < 2 ** 63;
}
