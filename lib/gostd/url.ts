/**
 * Go's `net/url.ParseRequestURI` (Go 1.25 defaults: `urlstrictcolons=0`), as the `uri` format calls it: whether a
 * text parses as the URI of an HTTP request.
 *
 * @module
 */
import { parseAddr } from "./net.ts";

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);
const hexOf = (c: string) => parseInt(c, 16);
const alnum = (c: string) => /^[A-Za-z0-9]$/.test(c);

/** `shouldEscape(c, encodeHost)` (and `encodeZone`) for an ASCII character. */
function escapedInHost(c: string): boolean {
  if (alnum(c) || "!$&'()*+,;=:[]<>\"".includes(c) || "-_.~".includes(c)) return false;
  return true;
}

type Mode = "path" | "host" | "zone" | "userPassword";

/** `unescape`'s errors: a bad `%` escape, and in a host or zone a character that must be escaped. */
function unescapes(s: string, mode: Mode): { ok: boolean; value: string } {
  let value = "";
  for (let i = 0; i < s.length;) {
    const c = s[i]!;
    if (c === "%") {
      if (i + 2 >= s.length || !isHex(s[i + 1]) || !isHex(s[i + 2])) return { ok: false, value };
      const triple = s.slice(i, i + 3);
      if (mode === "host" && hexOf(s[i + 1]!) < 8 && triple !== "%25") return { ok: false, value };
      const v = String.fromCharCode(hexOf(s.slice(i + 1, i + 3)));
      if (mode === "zone" && triple !== "%25" && v !== " " && (v >= "\x80" || escapedInHost(v))) {
        return { ok: false, value };
      }
      value += v;
      i += 3;
    } else {
      if ((mode === "host" || mode === "zone") && c < "\x80" && escapedInHost(c)) return { ok: false, value };
      value += c;
      i++;
    }
  }
  return { ok: true, value };
}

/** `getScheme`: the scheme and the rest, or `undefined` when the text starts with `:`. */
function scheme(raw: string): [string, string] | undefined {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (/^[A-Za-z]$/.test(c)) continue;
    if (/^[0-9+.-]$/.test(c)) {
      if (i === 0) return ["", raw];
      continue;
    }
    if (c === ":") return i === 0 ? undefined : [raw.slice(0, i), raw.slice(i + 1)];
    return ["", raw];
  }
  return ["", raw];
}

function validOptionalPort(port: string): boolean {
  return port === "" || /^:[0-9]*$/.test(port);
}

function validUserinfo(s: string): boolean {
  return [...s].every((c) => alnum(c) || "-._:~!$&'()*+,;=%@".includes(c));
}

function validHost(host: string): boolean {
  const open = host.lastIndexOf("[");
  if (open > 0) return false;
  if (open === 0) {
    const close = host.lastIndexOf("]");
    if (close < 0) return false;
    const colonPort = host.slice(close + 1);
    if (!validOptionalPort(colonPort) || !unescapes(colonPort, "host").ok) return false;
    const name = host.slice(1, close);
    const zone = name.indexOf("%25");
    const hostPart = unescapes(zone >= 0 ? name.slice(0, zone) : name, "host");
    const zonePart = zone >= 0 ? unescapes(name.slice(zone), "zone") : { ok: true, value: "" };
    if (!hostPart.ok || !zonePart.ok) return false;
    const addr = parseAddr(hostPart.value + zonePart.value);
    return addr.ok && !addr.v4;
  }
  const colon = host.lastIndexOf(":");
  if (colon >= 0 && !validOptionalPort(host.slice(colon))) return false;
  return unescapes(host, "host").ok;
}

function validAuthority(authority: string): boolean {
  const at = authority.lastIndexOf("@");
  if (!validHost(at < 0 ? authority : authority.slice(at + 1))) return false;
  if (at < 0) return true;
  const userinfo = authority.slice(0, at);
  if (!validUserinfo(userinfo)) return false;
  const colon = userinfo.indexOf(":");
  return colon < 0
    ? unescapes(userinfo, "userPassword").ok
    : unescapes(userinfo.slice(0, colon), "userPassword").ok &&
      unescapes(userinfo.slice(colon + 1), "userPassword").ok;
}

/**
 * Whether Go's `url.ParseRequestURI` parses `raw`: an absolute path or an absolute URI, no control characters.
 *
 * @example
 * ```ts
 * parseRequestURI("http://somewhere.com"); // true
 * parseRequestURI("somewhere.com"); // false
 * ```
 */
export function parseRequestURI(raw: string): boolean {
  if ([...raw].some((c) => c < " " || c === "\x7f") || raw === "") return false;
  if (raw === "*") return true;
  const split = scheme(raw);
  if (!split) return false;
  const [sch] = split;
  let rest = split[1];
  if (rest.endsWith("?") && rest.split("?").length === 2) rest = rest.slice(0, -1);
  else if (rest.includes("?")) rest = rest.slice(0, rest.indexOf("?"));
  if (!rest.startsWith("/")) return sch !== "";
  if (sch !== "" && rest.startsWith("//")) {
    let authority = rest.slice(2);
    rest = "";
    const slash = authority.indexOf("/");
    if (slash >= 0) {
      rest = authority.slice(slash);
      authority = authority.slice(0, slash);
    }
    if (!validAuthority(authority)) return false;
  }
  return unescapes(rest, "path").ok;
}
