/**
 * What the API server does to a custom resource before it validates it: fields the schema does not declare are
 * unknown (refused under strict field validation, `kubectl`'s default, else dropped), and missing fields with a
 * `default` are set.
 *
 * @module
 */
import type { Schema } from "./structural.ts";

/** The fields of `ObjectMeta`: any other field under `metadata` is unknown. */
const OBJECT_META: ReadonlySet<string> = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function child(s: Schema, key: string): Schema | undefined {
  return s.properties?.[key] ??
    (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
}

function declares(s: Schema, key: string): boolean {
  return s.properties?.[key] !== undefined || s.additionalProperties !== undefined ||
    s["x-kubernetes-preserve-unknown-fields"] === true;
}

function walkUnknown(s: Schema, v: unknown, path: string, out: string[]): void {
  if (Array.isArray(v)) {
    if (s.items) v.forEach((item, i) => walkUnknown(s.items!, item, `${path}[${i}]`, out));
    return;
  }
  if (!isObject(v) || s.type !== "object" && !s.properties) return;
  for (const [k, item] of Object.entries(v)) {
    const at = path ? `${path}.${k}` : k;
    const c = child(s, k);
    if (c) walkUnknown(c, item, at, out);
    else if (!declares(s, k)) out.push(at);
  }
}

/**
 * The fields of a custom resource its schema does not declare, as paths (`spec.kubernetesVerison`), in the order
 * they are written; `metadata` is checked against `ObjectMeta`.
 *
 * @example
 * ```ts
 * unknownFields({ type: "object", properties: { spec: { type: "object", properties: { a: { type: "string" } } } } },
 *   { spec: { a: "x", b: 1 } }); // ["spec.b"]
 * ```
 */
export function unknownFields(s: Schema, object: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(object)) {
    if (k === "apiVersion" || k === "kind") continue;
    if (k === "metadata") {
      if (isObject(v)) { for (const m of Object.keys(v)) if (!OBJECT_META.has(m)) out.push(`metadata.${m}`); }
      continue;
    }
    const c = child(s, k);
    if (c) walkUnknown(c, v, k, out);
    else if (!declares(s, k)) out.push(k);
  }
  return out;
}

/**
 * `value` with every missing field that has a `default` set to it, every level down (a copy; the input is not
 * changed), as the API server defaults a request and a read.
 *
 * @example
 * ```ts
 * withDefaults({ type: "object", properties: { role: { type: "string", default: "viewer" } } }, {});
 * // { role: "viewer" }
 * ```
 */
export function withDefaults(s: Schema, value: unknown): unknown {
  if (Array.isArray(value)) return s.items ? value.map((item) => withDefaults(s.items!, item)) : value;
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(value)) {
    const c = child(s, k);
    out[k] = c ? withDefaults(c, item) : item;
  }
  for (const [k, p] of Object.entries(s.properties ?? {})) {
    const missing = !(k in out) || (out[k] === null && !p.nullable);
    if (missing && p.default !== undefined) out[k] = withDefaults(p, structuredClone(p.default));
  }
  return out;
}

/**
 * `value` without the nulls of fields that are neither nullable nor defaulted, every level down (a copy): the API
 * server drops them before it validates (`PruneNonNullableNullsWithoutDefaults`), so `displayName: ~` is as if
 * not written.
 *
 * @example
 * ```ts
 * withoutNulls({ type: "object", properties: { a: { type: "string" } } }, { a: null }); // {}
 * ```
 */
export function withoutNulls(s: Schema, value: unknown): unknown {
  if (Array.isArray(value)) return s.items ? value.map((item) => withoutNulls(s.items!, item)) : value;
  if (!isObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, item] of Object.entries(value)) {
    const prop = s.properties?.[k];
    if (prop && item === null && prop.default === undefined && !prop.nullable) continue;
    const c = child(s, k);
    out[k] = c && k !== "metadata" ? withoutNulls(c, item) : item;
  }
  return out;
}
