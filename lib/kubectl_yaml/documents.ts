/**
 * A manifest file split into documents as `kubectl` splits it (k8s.io/apimachinery's `YAMLOrJSONDecoder`): a
 * stream that starts with `{` is read as JSON values one after another (and as YAML when the first is not JSON);
 * otherwise a line starting with `---` separates documents, and `---` followed by anything but a comment is an
 * error. Each document is parsed and converted on its own, so one that cannot be read does not stop the others.
 *
 * @module
 */
import { type Document, LineCounter, parseDocument, type YAMLError } from "yaml";
import { snippet } from "../safe_text/mod.ts";
import { DecodeBudget, decodeDocument, Unconvertible } from "./decode.ts";

/** One document of a stream: its 1-based number and first line, and its JSON value or why it cannot be read. */
export interface StreamDocument {
  readonly index: number;
  /** The 1-based line of the stream where the document starts. */
  readonly firstLine: number;
  /** The value kubectl sends (`null` for an empty document, which kubectl skips). */
  readonly value?: unknown;
  /** Why kubectl could not read it, and the 1-based line of the stream where the problem is. */
  readonly error?: { readonly line: number; readonly message: string };
  /** The parsed document, to find the line of a field. */
  readonly doc?: Document;
  /** Lines of the document's own text, to turn an offset into a line. */
  readonly lines?: LineCounter;
}

/**
 * The line where a YAML error starts. The parser reports an unclosed quote where the file ends; the quote that
 * opened it is where the author has to look.
 */
function errorLine(text: string, error: YAMLError, lines: LineCounter): number {
  const at = error.linePos?.[0]?.line ?? lines.linePos(error.pos[0]).line;
  const quote = /^Missing closing (["'])quote/.exec(error.message)?.[1];
  const flow = /^Flow (sequence|mapping) .*end with a ([\]}])/.exec(error.message)?.[2];
  const opened = quote
    ? unclosedQuote(text.slice(0, error.pos[0]), quote)
    : flow
    ? unclosedFlow(text.slice(0, error.pos[0]), flow === "]" ? "[" : "{")
    : undefined;
  return opened === undefined ? at : lines.linePos(opened).line;
}

/** The offset of the innermost `[` (or `{`) in `text` that is never closed, outside quotes and comments. */
function unclosedFlow(text: string, opener: string): number | undefined {
  const open: { c: string; at: number }[] = [];
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (quote === '"' && c === "\\") i++;
      else if (c === quote) quote = undefined;
    } else if (c === "#" && (i === 0 || /\s/.test(text[i - 1]!))) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if ((c === '"' || c === "'") && open.length) quote = c;
    else if (c === "[" || c === "{") open.push({ c, at: i });
    else if ((c === "]" || c === "}") && open.length) open.pop();
  }
  return [...open].reverse().find((o) => o.c === opener)?.at;
}

/** The offset of the last quote in `text` that opens a scalar and is never closed. */
function unclosedQuote(text: string, quote: string): number | undefined {
  const opener = new RegExp(`(?:^[ \\t]*(?:-[ \\t]+)*|:[ \\t]+|[\\[{,][ \\t]*)${quote}`, "gm");
  let from = 0;
  for (;;) {
    opener.lastIndex = from;
    const m = opener.exec(text);
    if (!m) return undefined;
    const start = m.index + m[0].length - 1;
    const end = closing(text, start + 1, quote);
    if (end < 0) return start;
    from = end + 1;
  }
}

function closing(text: string, from: number, quote: string): number {
  for (let i = from; i < text.length; i++) {
    if (quote === '"' && text[i] === "\\") i++;
    else if (text[i] === quote) {
      if (quote === "'" && text[i + 1] === "'") i++;
      else return i;
    }
  }
  return -1;
}

/** A parser message without its own position and excerpt (the caller states the line). */
function parserWords(message: string): string {
  return snippet(message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, ""), 120);
}

/** Parses and converts one document's text, which starts at stream line `firstLine`. */
function documentOf(text: string, index: number, firstLine: number, budget: DecodeBudget): StreamDocument {
  const lines = new LineCounter();
  const doc = parseDocument(text, {
    schema: "failsafe",
    merge: false,
    uniqueKeys: false,
    lineCounter: lines,
  });
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const line = firstLine + errorLine(text, e, lines) - 1;
    return { index, firstLine, error: { line, message: parserWords(e.message) } };
  }
  try {
    return { index, firstLine, value: decodeDocument(doc, budget), doc, lines };
  } catch (err) {
    const start = doc.contents?.range?.[0];
    const line = firstLine + (start === undefined ? 0 : lines.linePos(start).line - 1);
    return { index, firstLine, error: { line, message: unconvertibleWords(err) } };
  }
}

/**
 * Why a document cannot be converted. Anything but {@linkcode Unconvertible} is a limit of this process (a
 * document nested deeper than the call stack): reported for that document alone, so the rest are still read.
 */
function unconvertibleWords(err: unknown): string {
  if (err instanceof Unconvertible) return `error converting YAML to JSON: ${err.message}`;
  if (err instanceof RangeError) return "error converting YAML to JSON: document nested too deeply";
  return `error converting YAML to JSON: ${err instanceof Error ? err.name : "an internal error"}`;
}

/** Parses one document, turning a failure of the parser itself (a stack overflow) into an unreadable document. */
function guardedDocumentOf(
  text: string,
  index: number,
  firstLine: number,
  budget: DecodeBudget,
): StreamDocument {
  try {
    return documentOf(text, index, firstLine, budget);
  } catch (err) {
    return { index, firstLine, error: { line: firstLine, message: unconvertibleWords(err) } };
  }
}

/** The end offset of the JSON value starting at `from` (an object), or -1 when it does not close. */
function jsonValueEnd(text: string, from: number): number {
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** The 1-based line of an offset of `text`, by binary search over the offsets where lines start. */
function lineFinder(text: string): (offset: number) => number {
  const starts = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** A JSON stream's values: JSON values one after another, the first that is not JSON unreadable. */
function jsonStream(text: string, budget: DecodeBudget): StreamDocument[] {
  const out: StreamDocument[] = [];
  const lineAt = (_: string, offset: number) => line(offset);
  const line = lineFinder(text);
  let at = text.search(/\S/);
  while (at >= 0 && at < text.length) {
    const end = text[at] === "{" ? jsonValueEnd(text, at) : -1;
    const index = out.length + 1;
    let value: unknown;
    try {
      if (end < 0) throw new SyntaxError("unexpected end of JSON input");
      value = JSON.parse(text.slice(at, end));
    } catch (err) {
      // kubectl before 1.33 reads a stream that starts with `{` as JSON only; later ones try YAML when its first
      // value is not JSON. The plan reads it as the older ones do: such a file is not read everywhere.
      // V8's words quote the text around the error (`Unexpected token 'x', "..." is not valid JSON`), which may be
      // a Secret's: the quote is left out, and the rest kept short and escaped.
      const words = (err instanceof Error ? err.message : String(err)).replace(
        /, ".*" is not valid JSON$/s,
        "",
      );
      const message = `error parsing JSON: ${snippet(words, 100)}`;
      out.push({ index, firstLine: lineAt(text, at), error: { line: lineAt(text, at), message } });
      return out;
    }
    const parsed = guardedDocumentOf(text.slice(at, end), index, lineAt(text, at), budget);
    out.push({ ...parsed, value });
    const next = text.slice(end).search(/\S/);
    at = next < 0 ? -1 : end + next;
  }
  return out;
}

/**
 * The documents of a manifest stream, as kubectl reads them; `budget` bounds what a run decodes over all its
 * streams.
 *
 * @example
 * ```ts
 * readStream("a: yes\n---\nb: 1\n").map((d) => d.value); // [{ a: true }, { b: 1 }]
 * ```
 */
export function readStream(text: string, budget: DecodeBudget = new DecodeBudget()): StreamDocument[] {
  if (/^\s*\{/.test(text)) return jsonStream(text, budget);
  const out: StreamDocument[] = [];
  const lines = text.split(/(?<=\n)/);
  let chunk = "";
  let firstLine = 1;
  const blank = (t: string) => t.split("\n").every((l) => l.trim() === "" || l.trim().startsWith("#"));
  const flush = (next: number) => {
    // Blank lines and comments before the first separator are no document (the numbering of `file#N` starts after).
    if (!(out.length === 0 && blank(chunk))) {
      out.push(
        blank(chunk)
          ? { index: out.length + 1, firstLine, value: null }
          : guardedDocumentOf(chunk, out.length + 1, firstLine, budget),
      );
    }
    chunk = "";
    firstLine = next;
  };
  lines.forEach((line, i) => {
    if (!line.startsWith("---")) {
      chunk += line;
      return;
    }
    const rest = line.slice(3).trim();
    if (rest.length && !rest.startsWith("#")) {
      flush(i + 2);
      out.push({
        index: out.length + 1,
        firstLine: i + 1,
        error: { line: i + 1, message: `invalid Yaml document separator: ${snippet(rest)}` },
      });
      return;
    }
    flush(i + 2);
  });
  flush(lines.length + 1);
  return out;
}
