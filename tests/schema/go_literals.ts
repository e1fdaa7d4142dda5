/**
 * The string literals of Go test tables, read from Go source: the bodies of named functions (`func TestIsDNS1123Label`)
 * or a whole file, every interpreted ("...", with Go's escapes) and raw (`...`) string literal in them, decoded. The
 * corpus of the real API server tier takes its values from apimachinery's and kube-openapi's own test tables so.
 */

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
  "'": "'",
};

/** An interpreted string literal's body decoded as Go decodes it; `undefined` when it holds bytes that are not UTF-8. */
export function decodeGoString(body: string): string | undefined {
  const bytes: number[] = [];
  const push = (s: string) => bytes.push(...new TextEncoder().encode(s));
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      push(c);
      continue;
    }
    const e = body[++i]!;
    if (SIMPLE_ESCAPES[e] !== undefined) push(SIMPLE_ESCAPES[e]!);
    else if (e === "x") {
      bytes.push(parseInt(body.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (e === "u" || e === "U") {
      const n = e === "u" ? 4 : 8;
      push(String.fromCodePoint(parseInt(body.slice(i + 1, i + 1 + n), 16)));
      i += n;
    } else if (/[0-7]/.test(e)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else return undefined;
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/** The end of the Go token starting at `i` when it is a string, rune or comment; `i` itself otherwise. */
function skipToken(src: string, i: number): { end: number; literal?: string } {
  const c = src[i];
  if (c === "/" && src[i + 1] === "/") {
    return { end: src.indexOf("\n", i) < 0 ? src.length : src.indexOf("\n", i) };
  }
  if (c === "/" && src[i + 1] === "*") return { end: src.indexOf("*/", i + 2) + 2 };
  if (c === "`") {
    const end = src.indexOf("`", i + 1);
    return { end: end + 1, literal: src.slice(i + 1, end).replaceAll("\r", "") };
  }
  if (c === '"' || c === "'") {
    let j = i + 1;
    while (j < src.length && src[j] !== c) j += src[j] === "\\" ? 2 : 1;
    if (c === "'") return { end: j + 1 };
    const decoded = decodeGoString(src.slice(i + 1, j));
    return decoded === undefined ? { end: j + 1 } : { end: j + 1, literal: decoded };
  }
  return { end: i };
}

/** The body of `func name(` in `src` (between its braces), or `undefined`. */
function functionBody(src: string, name: string): string | undefined {
  const start = new RegExp(`^func ${name}\\(`, "m").exec(src)?.index;
  if (start === undefined) return undefined;
  let depth = 0;
  for (let i = src.indexOf("{", start); i < src.length; i++) {
    const skipped = skipToken(src, i);
    if (skipped.end > i) {
      i = skipped.end - 1;
      continue;
    }
    if (src[i] === "{") depth++;
    else if (src[i] === "}" && --depth === 0) return src.slice(start, i + 1);
  }
  return undefined;
}

/**
 * The decoded string literals of Go source `src`, in order and without repeats: of the named functions' bodies when
 * `functions` is given, else of the whole file. Literals that are not UTF-8 (JSON cannot carry them) are left out.
 *
 * @example
 * ```ts
 * goStringLiterals('func TestA(t *testing.T) { good := []string{"a", `b`} }', ["TestA"]); // ["a", "b"]
 * ```
 */
export function goStringLiterals(src: string, functions?: readonly string[]): string[] {
  const parts = functions ? functions.map((f) => functionBody(src, f) ?? "") : [src];
  const out = new Set<string>();
  for (const part of parts) {
    for (let i = 0; i < part.length; i++) {
      const t = skipToken(part, i);
      if (t.literal !== undefined) out.add(t.literal);
      if (t.end > i) i = t.end - 1;
    }
  }
  return [...out];
}
