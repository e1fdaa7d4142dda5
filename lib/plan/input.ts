import { parseAllDocuments } from "yaml";
import { z } from "zod";
import { formatPath } from "../contract/mod.ts";
import type { Obj } from "./store.ts";

/** One object of the input, with where it came from (`file` and 1-based document number). */
export interface SourcedObject {
  readonly object: Obj;
  readonly source: string;
}

const Envelope = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }),
});

/**
 * Reads every object of a YAML (or JSON) stream: multi-document files, and `List` kinds as `kubectl get -o yaml`
 * exports them, flattened. Empty documents are skipped; a document that is not an object with `apiVersion`,
 * `kind` and `metadata.name` is an error naming the file, the document and the field.
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
  parseAllDocuments(text).forEach((doc, i) => {
    const source = `${file}#${i + 1}`;
    if (doc.errors.length) {
      errors.push(`${source}: ${doc.errors[0]!.message.split("\n")[0]}`);
      return;
    }
    const value = doc.toJS();
    if (value === null || value === undefined) return;
    const items = value?.kind === "List" || (typeof value?.kind === "string" && value.kind.endsWith("List"))
      ? (Array.isArray(value.items) ? value.items : [])
      : [value];
    items.forEach((item: unknown, j: number) => {
      const at = items.length > 1 || item !== value ? `${source} items[${j}]` : source;
      const parsed = Envelope.safeParse(item);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        errors.push(`${at}: ${formatPath(issue.path) || "(document)"}: ${issue.message}`);
        return;
      }
      objects.push({ object: parsed.data as Obj, source: at });
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
