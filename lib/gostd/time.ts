/**
 * Go's time parsing as the `date`, `date-time` and `duration` formats call it: `time.Parse("2006-01-02", …)`,
 * kube-openapi's `IsDateTime` (a date, `t`, and a time of day matched by a pattern) and `time.ParseDuration` with
 * kube-openapi's fallback (`3 days`, `1 week`).
 *
 * @module
 */

const isLeap = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * Whether `time.Parse("2006-01-02", s)` succeeds: a year of four characters (a sign and three digits will do, as
 * Go's `atoi` reads them), a two-digit month and a two-digit day that the month has.
 *
 * @example
 * ```ts
 * isDate("2024-02-29"); // true
 * isDate("2023-02-29"); // false
 * ```
 */
export function isDate(s: string): boolean {
  const m = /^([+-]\d{3}|\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12) return false;
  const days = month === 2 && isLeap(year) ? 29 : DAYS[month - 1]!;
  return day >= 1 && day <= days;
}

/** kube-openapi's `DateTimePattern`, its `.` any character but a newline. */
const TIME_OF_DAY = /^([0-9]{2}):([0-9]{2}):([0-9]{2})([^\n][0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/u;

/**
 * kube-openapi's `IsDateTime`: lower-cased and split at every `t`, the first part a date ({@linkcode isDate}) and
 * the second a time of day of at most 23:59:59, with a zone (`z` or `±hh:mm`).
 *
 * @example
 * ```ts
 * isDateTime("2026-11-23T10:00:00Z"); // true
 * isDateTime("yesterday"); // false
 * ```
 */
export function isDateTime(str: string): boolean {
  if (new TextEncoder().encode(str).length < 4) return false;
  const parts = str.toLowerCase().split("t");
  if (parts.length < 2 || !isDate(parts[0]!)) return false;
  const m = TIME_OF_DAY.exec(parts[1]!);
  return m !== null && m[1]! <= "23" && m[2]! <= "59" && m[3]! <= "59";
}

const UNITS: Readonly<Record<string, bigint>> = {
  ns: 1n,
  us: 1000n,
  "\u00b5s": 1000n,
  "\u03bcs": 1000n,
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};
const MAX = 1n << 63n;

/** Go's `time.ParseDuration`: whether `text` is a duration such as `1h30m`, `-1.5s` or `0`. */
export function isGoDuration(text: string): boolean {
  let s = text;
  let neg = false;
  if (s[0] === "-" || s[0] === "+") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return true;
  if (s === "") return false;
  let d = 0n;
  while (s !== "") {
    if (!/^[.0-9]/.test(s)) return false;
    const int = /^[0-9]*/.exec(s)![0];
    let v = 0n;
    for (const c of int) {
      if (v > MAX / 10n) return false;
      v = v * 10n + BigInt(c);
      if (v > MAX) return false;
    }
    s = s.slice(int.length);
    let f = 0n;
    let scale = 1;
    let post = false;
    if (s[0] === ".") {
      const frac = /^[0-9]*/.exec(s.slice(1))![0];
      let overflow = false;
      for (const c of frac) {
        if (overflow) continue;
        if (f > (MAX - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const y = f * 10n + BigInt(c);
        if (y > MAX) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      post = frac.length > 0;
      s = s.slice(1 + frac.length);
    }
    if (!int.length && !post) return false;
    const u = /^[^.0-9]*/.exec(s)![0];
    if (!u) return false;
    s = s.slice(u.length);
    const unit = UNITS[u];
    if (unit === undefined || v > MAX / unit) return false;
    v *= unit;
    if (f > 0n) {
      v += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (v > MAX) return false;
    }
    d += v;
    if (d > MAX) return false;
  }
  return neg || d <= MAX - 1n;
}

const FALLBACK_UNITS: readonly (readonly string[])[] = [
  ["ns", "nano"],
  ["us", "\u00b5s", "micro"],
  ["ms", "milli"],
  ["s", "sec"],
  ["m", "min"],
  ["h", "hr", "hour"],
  ["d", "day"],
  ["w", "wk", "week"],
];

/**
 * kube-openapi's `IsDuration`: Go's duration ({@linkcode isGoDuration}), or any number followed by a unit it
 * knows by name anywhere in the text (`3 days`, `1 week`), as its fallback parser reads it.
 *
 * @example
 * ```ts
 * isDuration("1h30m"); // true
 * isDuration("3 days"); // true
 * isDuration("soon"); // false
 * ```
 */
export function isDuration(text: string): boolean {
  if (isGoDuration(text)) return true;
  let ok = false;
  for (const m of text.matchAll(/([0-9]+)[\t\n\f\r ]*([A-Za-z\u00b5]+)/gu)) {
    if (BigInt(m[1]!) > MAX - 1n) return false;
    const unit = m[2]!.toLowerCase();
    for (const variants of FALLBACK_UNITS) {
      const last = variants.length - 1;
      variants.forEach((variant, i) => {
        if ((i === last && unit.startsWith(variant)) || variant.toLowerCase() === unit) ok = true;
      });
    }
  }
  return ok;
}

const RFC3339 = "2006-01-02T15:04:05Z07:00";

/** The time package's own `quote`: `"` and `\` escaped, bytes outside printable ASCII as `\xNN`. */
function timeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x80 || cp < 0x20) {
      for (const b of new TextEncoder().encode(ch)) out += `\\x${b.toString(16).padStart(2, "0")}`;
    } else out += ch === '"' || ch === "\\" ? `\\${ch}` : ch;
  }
  return out + '"';
}

/** `getnum`: one or two digits (two when `fixed`), the value and the rest, or `undefined`. */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigitAt(s, 0)) return undefined;
  if (!isDigitAt(s, 1)) return fixed ? undefined : [Number(s[0]), s.slice(1)];
  return [Number(s.slice(0, 2)), s.slice(2)];
}

const isDigitAt = (s: string, i: number) => s.length > i && s[i]! >= "0" && s[i]! <= "9";

/**
 * Why Go's `time.Parse(time.RFC3339, value)` fails, in its words (`parsing time "x" as
 * "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`), or `undefined` when it parses: how the API server
 * reads a `metav1.Time` such as `metadata.creationTimestamp`.
 *
 * @example
 * ```ts
 * rfc3339Error("2026-11-23T10:00:00Z"); // undefined
 * rfc3339Error("2026-13-01T00:00:00Z"); // 'parsing time "2026-13-01T00:00:00Z": month out of range'
 * ```
 */
export function rfc3339Error(value: string): string | undefined {
  const head = `parsing time ${timeQuote(value)}`;
  const cannot = (rest: string, elem: string) =>
    `${head} as ${timeQuote(RFC3339)}: cannot parse ${timeQuote(rest)} as ${timeQuote(elem)}`;
  const range = (what: string) => `${head}: ${what} out of range`;
  let v = value;
  const skip = (literal: string): boolean => {
    for (const c of literal) {
      if (!v.length || v[0] !== c) return false;
      v = v.slice(1);
    }
    return true;
  };
  if (v.length < 4 || !isDigitAt(v, 0) || !/^[0-9]{4}/.test(v)) return cannot(v, "2006");
  const year = Number(v.slice(0, 4));
  v = v.slice(4);
  const fields: [string, string, boolean, number, string][] = [
    ["-", "01", true, 13, "month"],
    ["-", "02", true, 100, ""],
    ["T", "15", false, 24, "hour"],
    [":", "04", true, 60, "minute"],
    [":", "05", true, 60, "second"],
  ];
  const got: number[] = [];
  for (const [literal, elem, fixed, limit, what] of fields) {
    if (!skip(literal)) return cannot(v, literal);
    const hold = v;
    const n = getnum(v, fixed);
    if (!n) return cannot(hold, elem);
    if (n[0] >= limit || (what === "month" && n[0] === 0)) return range(what);
    got.push(n[0]);
    v = n[1];
  }
  if (v.length >= 2 && (v[0] === "." || v[0] === ",") && isDigitAt(v, 1)) v = v.replace(/^[.,][0-9]+/, "");
  const tz = v;
  if (v[0] === "Z") v = v.slice(1);
  else {
    if (v.length < 6 || v[3] !== ":") return cannot(tz, "Z07:00");
    const hh = getnum(v.slice(1, 3), true);
    const mm = hh && getnum(v.slice(4, 6), true);
    if (!hh || !mm) return cannot(tz, "Z07:00");
    if (mm[0] > 60) return range("time zone offset minute");
    if (hh[0] > 24) return range("time zone offset hour");
    if (v[0] !== "+" && v[0] !== "-") return cannot(tz, "Z07:00");
    v = v.slice(6);
  }
  if (v.length) return `${head}: extra text: ${timeQuote(v)}`;
  const [month, day] = got as [number, number];
  const days = month === 2 && isLeap(year) ? 29 : DAYS[month - 1]!;
  return day < 1 || day > days ? `${head}: day out of range` : undefined;
}
