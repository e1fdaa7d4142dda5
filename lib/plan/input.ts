import type { Document, LineCounter } from "yaml";
import { DecodeBudget, readStream, type StreamDocument } from "../kubectl_yaml/mod.ts";
import type { Obj } from "./store.ts";

/** One object of the input, with where it came from (`file` and 1-based document number). */
export interface SourcedObject {
  readonly object: Obj;
  readonly source: string;
  /** The 1-based line of a field of the object (`spec.aws.region`, or its nearest written parent). */
  readonly lineOf?: (field: string) => number | undefined;
}

/** A document kubectl cannot read or make an object of: where, and why. */
export interface Unreadable {
  /** `file#N` (and ` items[j]` for an item of a List). */
  readonly source: string;
  /** The 1-based line of the file where the problem is. */
  readonly line: number;
  readonly message: string;
}

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

/** The line of a field of a document, in the file's lines (`prefix` for a List's item). */
function fileLocator(d: StreamDocument, prefix: readonly (string | number)[]) {
  const local = d.doc && d.lines ? locator(d.doc, d.lines, prefix) : () => undefined;
  return (field: string) => {
    const line = local(field);
    return line === undefined ? undefined : d.firstLine + line - 1;
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * What kubectl does not take as an object: not a map, no `kind`, no `apiVersion`, no string name (a name or a
 * `generateName`); `undefined` for an object it takes.
 */
function notAnObject(v: unknown): string | undefined {
  // The value itself is not quoted: a file that is no manifest (a credential) must not reach the log.
  if (!isRecord(v)) return `not an object: ${Array.isArray(v) ? "a list" : `a ${typeof v}`}`;
  if (typeof v.kind !== "string" || !v.kind) return "Object 'Kind' is missing";
  if (typeof v.apiVersion !== "string" || !v.apiVersion) return "Object 'apiVersion' is missing";
  if (v.metadata !== undefined && v.metadata !== null && !isRecord(v.metadata)) {
    return "metadata: not an object";
  }
  return undefined;
}

/**
 * An object whose `metadata` is absent or null as the API server decodes it: with empty metadata (which its
 * validation then refuses for the missing name, in its words).
 */
function withMetadata(o: Obj): Obj {
  return o.metadata === undefined || o.metadata === null ? { ...o, metadata: {} as Obj["metadata"] } : o;
}

/**
 * The objects of a list as kubectl flattens one (any object with `items`): items without `kind` and `apiVersion`
 * take the list's (`TeamList` gives `Team`).
 */
function listItems(list: Record<string, unknown>): unknown[] | string {
  if (!Array.isArray(list.items)) return "items: not a list";
  const kind = typeof list.kind === "string" ? list.kind.replace(/List$/, "") : "";
  return list.items.map((item) =>
    isRecord(item) && item.kind === undefined && item.apiVersion === undefined
      ? { ...item, kind, apiVersion: list.apiVersion }
      : item
  );
}

/**
 * Reads every object of a manifest stream as kubectl reads it ({@linkcode readStream}: YAML 1.1 scalars, merge keys,
 * repeated keys, JSON streams), flattening lists as `kubectl get -o yaml` exports them. Empty documents are skipped;
 * a document kubectl cannot read, or whose value is not an object it takes (no `kind`, `apiVersion`), is
 * unreadable with its line, and the others are read all the same.
 *
 * @example
 * ```ts
 * parseManifests("kind: Team\napiVersion: butler.butlerlabs.dev/v1alpha1\nmetadata: {name: a}\n", "teams.yaml");
 * // { objects: [{ object: { kind: "Team", ... }, source: "teams.yaml#1" }], unreadable: [], errors: [] }
 * ```
 */
export function parseManifests(
  text: string,
  file: string,
  budget: DecodeBudget = new DecodeBudget(),
): { objects: SourcedObject[]; unreadable: Unreadable[]; errors: string[] } {
  const objects: SourcedObject[] = [];
  const unreadable: Unreadable[] = [];
  for (const d of readStream(text, budget)) {
    const source = `${file}#${d.index}`;
    if (d.error) {
      unreadable.push({ source, line: d.error.line, message: d.error.message });
      continue;
    }
    const value = d.value;
    if (value === null || value === undefined) continue;
    const isList = isRecord(value) && value.items !== undefined && value.items !== null;
    const items = isList ? listItems(value) : [value];
    if (typeof items === "string") {
      unreadable.push({ source, line: fileLocator(d, [])("items") ?? d.firstLine, message: items });
      continue;
    }
    items.forEach((item, j) => {
      const at = isList ? `${source} items[${j}]` : source;
      const lineOf = fileLocator(d, isList ? ["items", j] : []);
      const why = notAnObject(item);
      if (why) unreadable.push({ source: at, line: lineOf("") ?? d.firstLine, message: why });
      else objects.push({ object: withMetadata(item as Obj), source: at, lineOf });
    });
  }
  return {
    objects,
    unreadable,
    errors: unreadable.map((u) =>
      `${u.source.replace(/#(\d+)/, ": document $1")}, line ${u.line}: ${u.message}`
    ),
  };
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
