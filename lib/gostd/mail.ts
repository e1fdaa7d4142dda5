/**
 * Go's `net/mail.ParseAddress`, as the `email` format calls it: whether a text is one RFC 5322 address
 * (`gf@example.com`, `Gogh Fir <gf@example.com>`, a group of one). RFC 2047 encoded words in a display name are
 * decoded as Go's `mime.WordDecoder` does, and one in a charset it does not know fails the address.
 *
 * @module
 */
import { parseIP } from "./net.ts";

class Invalid extends Error {}

const isVchar = (cp: number) => (cp >= 0x21 && cp <= 0x7e) || cp >= 0x80;
const isWSP = (cp: number) => cp === 0x20 || cp === 0x09;
const SPECIALS = new Set([...'()<>[]:;@\\,"'].map((c) => c.codePointAt(0)!));
const isAtext = (cp: number, dot: boolean) => cp === 0x2e ? dot : !SPECIALS.has(cp) && isVchar(cp);
const isQtext = (cp: number) => cp !== 0x5c && cp !== 0x22 && isVchar(cp);
const isDtext = (cp: number) => cp !== 0x5b && cp !== 0x5d && cp !== 0x5c && isVchar(cp);

const STD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** `mime.WordDecoder.Decode` with no charset reader: `"ok"`, `"invalid"` (not an encoded word) or `"charset"`. */
function decodeWord(word: string): "ok" | "invalid" | "charset" {
  if (word.length < 8 || !word.startsWith("=?") || !word.endsWith("?=") || word.split("?").length !== 5) {
    return "invalid";
  }
  const [charset, encoding, text] = word.slice(2, -2).split("?") as [string, string, string];
  if (!charset || encoding.length !== 1) return "invalid";
  if (encoding === "B" || encoding === "b") {
    if (!STD_BASE64.test(text.replace(/[\r\n]/g, ""))) return "invalid";
  } else if (encoding === "Q" || encoding === "q") {
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (c === "=") {
        if (i + 2 >= text.length || !/^[0-9A-Fa-f]{2}$/.test(text.slice(i + 1, i + 3))) return "invalid";
        i += 2;
      } else if (!(c === "_" || (c >= " " && c <= "~") || c === "\n" || c === "\r" || c === "\t")) {
        return "invalid";
      }
    }
  } else return "invalid";
  return ["utf-8", "iso-8859-1", "us-ascii"].includes(charset.toLowerCase()) ? "ok" : "charset";
}

/** The parser's state: what is left of the address. */
class Parser {
  constructor(public s: string) {}

  empty(): boolean {
    return this.s.length === 0;
  }
  peek(): string {
    return this.s[0]!;
  }
  consume(c: string): boolean {
    if (this.empty() || this.peek() !== c) return false;
    this.s = this.s.slice(1);
    return true;
  }
  skipSpace(): void {
    this.s = this.s.replace(/^[ \t]+/, "");
  }
  skipCFWS(): boolean {
    this.skipSpace();
    while (this.consume("(")) {
      if (this.comment() === undefined) return false;
      this.skipSpace();
    }
    return true;
  }
  comment(): string | undefined {
    let depth = 1;
    let text = "";
    while (!this.empty() && depth > 0) {
      if (this.peek() === "\\" && this.s.length > 1) this.s = this.s.slice(1);
      else if (this.peek() === "(") depth++;
      else if (this.peek() === ")") depth--;
      if (depth > 0) text += this.s[0];
      this.s = this.s.slice(1);
    }
    return depth === 0 ? text : undefined;
  }
  atom(dot: boolean, permissive: boolean): string {
    let i = 0;
    while (i < this.s.length) {
      const cp = this.s.codePointAt(i)!;
      if (!isAtext(cp, dot)) break;
      i += cp > 0xffff ? 2 : 1;
    }
    if (i === 0) throw new Invalid("invalid string");
    const atom = this.s.slice(0, i);
    this.s = this.s.slice(i);
    if (!permissive && (atom.startsWith(".") || atom.includes("..") || atom.endsWith("."))) {
      throw new Invalid("dot in atom");
    }
    return atom;
  }
  quotedString(): string {
    let i = 1;
    let out = "";
    let escaped = false;
    for (;;) {
      if (i >= this.s.length) throw new Invalid("unclosed quoted-string");
      const cp = this.s.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (escaped) {
        if (!isVchar(cp) && !isWSP(cp)) throw new Invalid("bad character in quoted-string");
        out += ch;
        escaped = false;
      } else if (isQtext(cp) || isWSP(cp)) out += ch;
      else if (ch === '"') break;
      else if (ch === "\\") escaped = true;
      else throw new Invalid("bad character in quoted-string");
      i += ch.length;
    }
    this.s = this.s.slice(i + 1);
    return out;
  }
  domainLiteral(): string {
    if (!this.consume("[")) throw new Invalid("missing [");
    let text = "";
    for (;;) {
      if (this.empty()) throw new Invalid("unclosed domain-literal");
      if (this.peek() === "]") break;
      const cp = this.s.codePointAt(0)!;
      if (!isDtext(cp)) throw new Invalid("bad character in domain-literal");
      const ch = String.fromCodePoint(cp);
      text += ch;
      this.s = this.s.slice(ch.length);
    }
    this.consume("]");
    if (!parseIP(text)) throw new Invalid("invalid IP address in domain-literal");
    return `[${text}]`;
  }
  /** `consumeAddrSpec`: restores the state when it fails. */
  addrSpec(): string | undefined {
    const saved = this.s;
    try {
      this.skipSpace();
      if (this.empty()) throw new Invalid("no addr-spec");
      let local: string;
      if (this.peek() === '"') {
        local = this.quotedString();
        if (local === "") throw new Invalid("empty quoted string in addr-spec");
      } else local = this.atom(true, false);
      if (!this.consume("@")) throw new Invalid("missing @ in addr-spec");
      this.skipSpace();
      if (this.empty()) throw new Invalid("no domain in addr-spec");
      const domain = this.peek() === "[" ? this.domainLiteral() : this.atom(true, false);
      return `${local}@${domain}`;
    } catch (err) {
      if (!(err instanceof Invalid)) throw err;
      this.s = saved;
      return undefined;
    }
  }
  phrase(): string {
    const words: string[] = [];
    let encoded = "";
    let failed = false;
    for (;;) {
      if (words.length > 0 && !this.skipCFWS()) throw new Invalid("misformatted parenthetical comment");
      this.skipSpace();
      if (this.empty()) break;
      let word: string;
      let isEncoded = false;
      try {
        if (this.peek() === '"') word = this.quotedString();
        else {
          word = this.atom(true, true);
          const decoded = decodeWord(word);
          if (decoded === "charset") throw new Invalid("charset not supported");
          isEncoded = decoded === "ok";
        }
      } catch (err) {
        if (!(err instanceof Invalid)) throw err;
        failed = true;
        break;
      }
      if (isEncoded) encoded += word;
      else {
        if (encoded) words.push(encoded);
        encoded = "";
        words.push(word);
      }
    }
    if (encoded) words.push(encoded);
    if (failed && !words.length) throw new Invalid("missing word in phrase");
    return words.join(" ");
  }
  displayNameComment(): void {
    if (!this.consume("(")) throw new Invalid("comment does not start with (");
    const text = this.comment();
    if (text === undefined) throw new Invalid("misformatted parenthetical comment");
    for (const word of text.split(/[ \t]+/).filter(Boolean)) {
      if (decodeWord(word) === "charset") throw new Invalid("charset not supported");
    }
  }
  /** `parseAddress`: the addresses of one address or group. */
  address(handleGroup: boolean): string[] {
    this.skipSpace();
    if (this.empty()) throw new Invalid("no address");
    const spec = this.addrSpec();
    if (spec !== undefined) {
      this.skipSpace();
      if (!this.empty() && this.peek() === "(") this.displayNameComment();
      return [spec];
    }
    if (this.peek() !== "<") this.phrase();
    this.skipSpace();
    if (handleGroup && this.consume(":")) return this.groupList();
    if (!this.consume("<")) throw new Invalid("no angle-addr");
    const inner = this.addrSpec();
    if (inner === undefined) throw new Invalid("bad addr-spec");
    if (!this.consume(">")) throw new Invalid("unclosed angle-addr");
    return [inner];
  }
  groupList(): string[] {
    const group: string[] = [];
    this.skipSpace();
    if (this.consume(";")) {
      if (!this.skipCFWS()) throw new Invalid("misformatted parenthetical comment");
      return group;
    }
    for (;;) {
      this.skipSpace();
      group.push(...this.address(false));
      if (!this.skipCFWS()) throw new Invalid("misformatted parenthetical comment");
      if (this.consume(";")) {
        if (!this.skipCFWS()) throw new Invalid("misformatted parenthetical comment");
        return group;
      }
      if (!this.consume(",")) throw new Invalid("expected comma");
    }
  }
}

/**
 * Whether Go's `mail.ParseAddress` parses `address` as exactly one address (the `email` format's test).
 *
 * @example
 * ```ts
 * parseAddress("Gogh Fir <gf@example.com>"); // true
 * parseAddress("somebody@somewhere@com"); // false
 * ```
 */
export function parseAddress(address: string): boolean {
  const p = new Parser(address);
  try {
    const addrs = p.address(true);
    return p.skipCFWS() && p.empty() && addrs.length === 1 && addrs[0] !== "";
  } catch (err) {
    if (err instanceof Invalid) return false;
    throw err;
  }
}
