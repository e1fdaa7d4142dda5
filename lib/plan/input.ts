import { type Document, LineCounter, parseAllDocuments, type YAMLError } from "yaml";
import { z } from "zod";
import { formatPath } from "../contract/mod.ts";
import type { Obj } from "./store.ts";

/** One object of the input, with where it came from (`file` and 1-based document number). */
export interface SourcedObject {
  readonly object: Obj;
  readonly source: string;
  /** The 1-based line of a field of the object (`spec.aws.region`, or its nearest written parent). */
  readonly lineOf?: (field: string) => number | undefined;
}

const Envelope = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }),
});

/** The parts of a field path: `spec.workers[0].name` → `["spec", "workers", 0, "name"]`. */
export function fieldParts(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

function locator(doc: Document, lines: LineCounter, prefix: readonly (string | number)[]) {
  return (field: string): number | undefined => {
    const parts = [...prefix, ...fieldParts(field)];
    for (let n = parts.length; n >= 0; n--) {
      const node = doc.getIn(parts.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      // A map's key is where its field starts; the node's range is its value.
      const pair = n > 0 ? keyOffset(doc, parts.slice(0, n)) : undefined;
      const offset = pair ?? node?.range?.[0];
      if (offset !== undefined) return lines.linePos(offset).line;
    }
    return undefined;
  };
}

function keyOffset(doc: Document, parts: readonly (string | number)[]): number | undefined {
  const parent = doc.getIn(parts.slice(0, -1), true) as
    | { items?: { key?: { value?: unknown; range?: [number, number, number] } }[] }
    | undefined;
  const last = parts[parts.length - 1];
  const item = parent?.items?.find((i) => i.key?.value === last);
  return item?.key?.range?.[0];
}

/**
 * The line where a YAML error starts. The parser reports an unclosed quote where the file ends; the quote that
 * opened it is where the author has to look.
 */
export function errorLine(text: string, error: YAMLError, lines: LineCounter): number {
  const at = error.linePos?.[0]?.line ?? lines.linePos(error.pos[0]).line;
  const quote = /^Missing closing (["'])quote/.exec(error.message)?.[1];
  if (!quote) return at;
  const opened = unclosedQuote(text.slice(0, error.pos[0]), quote);
  return opened === undefined ? at : lines.linePos(opened).line;
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

/** A parser message without its own position (the caller states the line) and without the excerpt. */
function parserWords(message: string): string {
  return message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
}

/**
 * Reads every object of a YAML (or JSON) stream: multi-document files, and `List` kinds as `kubectl get -o yaml`
 * exports them, flattened. Empty documents are skipped; a document that is not an object with `apiVersion`,
 * `kind` and `metadata.name` is an error naming the file, the document and the field; a YAML error names the
 * file, the document and the line where the problem starts.
 *
 * @example
 * ```ts
 * parseManifests("kind: Team\napiVersion: butler.butlerlabs.dev/v1alpha1\nmetadata: {name: a}\n", "teams.yaml");
 * // { objects: [{ object: { kind: "Team", ... }, source: "teams.yaml#1" }], errors: [] }
 * ```
 */
export function parseManifests(text: string, file: string): { objects: SourcedObject[]; errors: string[] } {
  const objects: SourcedObject[] = [];
  const errors: string[] = [];
  const lines = new LineCounter();
  parseAllDocuments(text, { lineCounter: lines }).forEach((doc, i) => {
    const source = `${file}#${i + 1}`;
    if (doc.errors.length) {
      const e = doc.errors[0]!;
      errors.push(`${file}: document ${i + 1}, line ${errorLine(text, e, lines)}: ${parserWords(e.message)}`);
      return;
    }
    const value = doc.toJS();
    if (value === null || value === undefined) return;
    const isList = value?.kind === "List" || (typeof value?.kind === "string" && value.kind.endsWith("List"));
    const items = isList ? (Array.isArray(value.items) ? value.items : []) : [value];
    items.forEach((item: unknown, j: number) => {
      const at = items.length > 1 || item !== value ? `${source} items[${j}]` : source;
      const parsed = Envelope.safeParse(item);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        errors.push(`${at}: ${formatPath(issue.path) || "(document)"}: ${issue.message}`);
        return;
      }
      objects.push({
        object: parsed.data as Obj,
        source: at,
        lineOf: locator(doc, lines, isList ? ["items", j] : []),
      });
    });
  });
  return { objects, errors };
}

/**
 * Fields of an exported live object that describe its history, not what it asks for: the plan compares and
 * prints without them.
 */
export function withoutServerFields(o: Obj): Obj {
  const { managedFields: _m, selfLink: _s, ...metadata } = o.metadata;
  if (metadata.annotations) {
    const { "kubectl.kubernetes.io/last-applied-configuration": _l, ...rest } = metadata.annotations;
    if (Object.keys(rest).length) metadata.annotations = rest;
    else delete metadata.annotations;
  }
  return { ...o, metadata };
}
