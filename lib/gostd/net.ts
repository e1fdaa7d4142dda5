/**
 * Go's address parsers as the OpenAPI formats call them: `net.ParseIP` (through `netip.ParseAddr`, no zone),
 * `k8s.io/utils/net`'s `ParseIPSloppy` and `ParseCIDRSloppy` (Go's parsers from before 1.17, which take leading
 * zeros) and `net.ParseMAC`. Each answers whether the text parses; bytes are compared as Go compares them.
 *
 * @module
 */

const BIG = 0xffffff;

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

function hexValue(c: string | undefined): number {
  if (c === undefined) return -1;
  if (c >= "0" && c <= "9") return c.charCodeAt(0) - 48;
  if (c >= "a" && c <= "f") return c.charCodeAt(0) - 87;
  if (c >= "A" && c <= "F") return c.charCodeAt(0) - 55;
  return -1;
}

/** Go's `dtoi`: decimal digits at the start of `s`, how many, and whether there were some and it stayed small. */
function dtoi(s: string): [number, number, boolean] {
  let n = 0;
  let i = 0;
  for (; i < s.length && isDigit(s[i]); i++) {
    n = n * 10 + (s.charCodeAt(i) - 48);
    if (n >= BIG) return [BIG, i, false];
  }
  return i === 0 ? [0, 0, false] : [n, i, true];
}

/** Go's `xtoi`: hexadecimal digits at the start of `s`. */
function xtoi(s: string): [number, number, boolean] {
  let n = 0;
  let i = 0;
  for (; i < s.length; i++) {
    const v = hexValue(s[i]);
    if (v < 0) break;
    n = n * 16 + v;
    if (n >= BIG) return [0, i, false];
  }
  return i === 0 ? [0, 0, false] : [n, i, true];
}

/** The forked (sloppy) `parseIPv4`: four decimal fields of at most 255, leading zeros allowed. */
function sloppyIPv4(s: string): boolean {
  let rest = s;
  for (let i = 0; i < 4; i++) {
    if (!rest.length) return false;
    if (i > 0) {
      if (rest[0] !== ".") return false;
      rest = rest.slice(1);
    }
    const [n, c, ok] = dtoi(rest);
    if (!ok || n > 0xff) return false;
    rest = rest.slice(c);
  }
  return rest.length === 0;
}

/** The forked (sloppy) `parseIPv6`. */
function sloppyIPv6(text: string): boolean {
  let s = text;
  let ellipsis = -1;
  if (s.startsWith("::")) {
    ellipsis = 0;
    s = s.slice(2);
    if (!s.length) return true;
  }
  let i = 0;
  while (i < 16) {
    const [n, c, ok] = xtoi(s);
    if (!ok || n > 0xffff) return false;
    if (c < s.length && s[c] === ".") {
      if (ellipsis < 0 && i !== 12) return false;
      if (i + 4 > 16) return false;
      if (!sloppyIPv4(s)) return false;
      s = "";
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(c);
    if (!s.length) break;
    if (s[0] !== ":" || s.length === 1) return false;
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) return false;
      ellipsis = i;
      s = s.slice(1);
      if (!s.length) break;
    }
  }
  if (s.length) return false;
  return i < 16 ? ellipsis >= 0 : ellipsis < 0;
}

/**
 * `ParseIPSloppy` (k8s.io/utils/net): whether `s` is an IPv4 or IPv6 address, IPv4 fields with leading zeros
 * allowed, no zone.
 *
 * @example
 * ```ts
 * parseIPSloppy("010.0.0.1"); // true
 * ```
 */
export function parseIPSloppy(s: string): boolean {
  for (const c of s) {
    if (c === ".") return sloppyIPv4(s);
    if (c === ":") return sloppyIPv6(s);
  }
  return false;
}

/**
 * `ParseCIDRSloppy` (k8s.io/utils/net): an address as {@linkcode parseIPSloppy} reads it, `/`, and a decimal prefix
 * length no longer than the address.
 *
 * @example
 * ```ts
 * parseCIDRSloppy("10.0.0.0/8"); // true
 * parseCIDRSloppy("10.0.0.0/33"); // false
 * ```
 */
export function parseCIDRSloppy(s: string): boolean {
  const slash = s.indexOf("/");
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const mask = s.slice(slash + 1);
  const bits = sloppyIPv4(addr) ? 32 : sloppyIPv6(addr) ? 128 : 0;
  const [n, i, ok] = dtoi(mask);
  return bits > 0 && ok && i === mask.length && n <= bits;
}

/** `netip`'s IPv4 fields from `s`: four decimal octets, no leading zeros. */
function strictIPv4(s: string): boolean {
  let val = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (isDigit(c)) {
      if (digits === 1 && val === 0) return false;
      val = val * 10 + (c.charCodeAt(0) - 48);
      digits++;
      if (val > 255) return false;
    } else if (c === ".") {
      if (i === 0 || i === s.length - 1 || s[i - 1] === ".") return false;
      if (dots === 3) return false;
      dots++;
      val = 0;
      digits = 0;
    } else return false;
  }
  return dots === 3;
}

/** `netip`'s `parseIPv6`, zone included (the caller refuses one). */
function strictIPv6(text: string): { ok: boolean; zone: string } {
  let s = text;
  let zone = "";
  const pct = s.indexOf("%");
  if (pct >= 0) {
    zone = s.slice(pct + 1);
    s = s.slice(0, pct);
    if (!zone) return { ok: false, zone };
  }
  let ellipsis = -1;
  if (s.startsWith("::")) {
    ellipsis = 0;
    s = s.slice(2);
    if (!s.length) return { ok: true, zone };
  }
  let i = 0;
  while (i < 16) {
    let off = 0;
    let acc = 0;
    for (; off < s.length; off++) {
      const v = hexValue(s[off]);
      if (v < 0) break;
      acc = acc * 16 + v;
      if (off > 3 || acc > 0xffff) return { ok: false, zone };
    }
    if (off === 0) return { ok: false, zone };
    if (off < s.length && s[off] === ".") {
      if (ellipsis < 0 && i !== 12) return { ok: false, zone };
      if (i + 4 > 16) return { ok: false, zone };
      if (!strictIPv4(s)) return { ok: false, zone };
      s = "";
      i += 4;
      break;
    }
    i += 2;
    s = s.slice(off);
    if (!s.length) break;
    if (s[0] !== ":" || s.length === 1) return { ok: false, zone };
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) return { ok: false, zone };
      ellipsis = i;
      s = s.slice(1);
      if (!s.length) break;
    }
  }
  if (s.length) return { ok: false, zone };
  return { ok: i < 16 ? ellipsis >= 0 : ellipsis < 0, zone };
}

/**
 * Go's `netip.ParseAddr`: whether `s` is an address, whether an IPv4 one, and its IPv6 zone.
 *
 * @example
 * ```ts
 * parseAddr("fe80::1%eth0"); // { ok: true, v4: false, zone: "eth0" }
 * ```
 */
export function parseAddr(s: string): { ok: boolean; v4: boolean; zone: string } {
  for (const c of s) {
    if (c === ".") return { ok: strictIPv4(s), v4: true, zone: "" };
    if (c === ":") return { ...strictIPv6(s), v4: false };
    if (c === "%") return { ok: false, v4: false, zone: "" };
  }
  return { ok: false, v4: false, zone: "" };
}

/**
 * Go's `net.ParseIP`: `netip.ParseAddr` without a zone (no leading zeros in IPv4 fields).
 *
 * @example
 * ```ts
 * parseIP("::ffff:10.0.0.1"); // true
 * parseIP("010.0.0.1"); // false
 * ```
 */
export function parseIP(s: string): boolean {
  const addr = parseAddr(s);
  return addr.ok && addr.zone === "";
}

/** Go's `xtoi2`: two hex digits at the start of `s`, followed by `e` (or the end). */
function xtoi2(s: string, e: string): boolean {
  if (s.length > 2 && s[2] !== e) return false;
  return hexValue(s[0]) >= 0 && hexValue(s[1]) >= 0;
}

/**
 * Go's `net.ParseMAC`: 6, 8 or 20 octets as `00:00:5e:00:53:01`, `00-00-5e-00-53-01`, `0000.5e00.5301` or
 * `00005e005301`.
 *
 * @example
 * ```ts
 * parseMAC("01:02:03:04:05:06"); // true
 * ```
 */
export function parseMAC(s: string): boolean {
  if (s.length < 12) return false;
  const octets = (n: number) => n === 6 || n === 8 || n === 20;
  if (s[2] === ":" || s[2] === "-") {
    if ((s.length + 1) % 3 !== 0 || !octets((s.length + 1) / 3)) return false;
    for (let x = 0; x < s.length; x += 3) if (!xtoi2(s.slice(x), s[2])) return false;
    return true;
  }
  if (s[4] === ".") {
    if ((s.length + 1) % 5 !== 0 || !octets((2 * (s.length + 1)) / 5)) return false;
    for (let x = 0; x < s.length; x += 5) {
      if (!xtoi2(s.slice(x, x + 2), "") || !xtoi2(s.slice(x + 2), ".")) return false;
    }
    return true;
  }
  if (s.length % 2 !== 0 || !octets(s.length / 2)) return false;
  for (let x = 0; x < s.length; x += 2) if (!xtoi2(s.slice(x, x + 2), "")) return false;
  return true;
}
