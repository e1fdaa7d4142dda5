/**
 * The invariants of `x-kubernetes-list-type: set` and `map` lists (no two equal items; no two items with the
 * same keys), checked the way the API server checks them.
 *
 * @module
 */
import type { FieldError } from "./field_error.ts";
import { goValue } from "./field_error.ts";
import type { Schema } from "./structural.ts";

function duplicates(
  path: string,
  items: readonly unknown[],
  key: (item: unknown) => unknown,
): FieldError[] {
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  items.forEach((item, i) => {
    const k = key(item);
    const text = goValue(k);
    if (seen.has(text)) errors.push({ field: `${path}[${i}]`, type: "Duplicate value", value: k });
    seen.add(text);
  });
  return errors;
}

function mapKeys(s: Schema, item: unknown): Record<string, unknown> {
  const o = (item ?? {}) as Record<string, unknown>;
  return Object.fromEntries(
    (s["x-kubernetes-list-map-keys"] ?? []).flatMap((k) => {
      const v = o[k] ?? s.items?.properties?.[k]?.default;
      return v === undefined ? [] : [[k, v]];
    }),
  );
}

/**
 * The duplicate items of every `set` and `map` list in `value` under schema `s`, every level down.
 *
 * @example
 * ```ts
 * listTypeErrors({ type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } }, ["a", "a"], "spec.x");
 * // [{ field: "spec.x[1]", type: "Duplicate value", value: "a" }]
 * ```
 */
export function listTypeErrors(s: Schema, value: unknown, path = ""): FieldError[] {
  if (Array.isArray(value)) {
    const notObject = s["x-kubernetes-list-type"] === "map"
      ? value.findIndex((item) => item === null || typeof item !== "object" || Array.isArray(item))
      : -1;
    if (notObject >= 0) {
      // The API server stops at the first item that cannot have keys.
      const detail = "must be an object for an array of list-type map";
      return [{ field: `${path}[${notObject}]`, type: "Invalid value", value: value[notObject], detail }];
    }
    const own = s["x-kubernetes-list-type"] === "set"
      ? duplicates(path, value, (item) => item)
      : s["x-kubernetes-list-type"] === "map"
      ? duplicates(path, value, (item) => mapKeys(s, item))
      : [];
    const inner = s.items ? value.flatMap((item, i) => listTypeErrors(s.items!, item, `${path}[${i}]`)) : [];
    return [...own, ...inner];
  }
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, item]) => {
    const c = s.properties?.[k] ??
      (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
    return c ? listTypeErrors(c, item, path ? `${path}.${k}` : k) : [];
  });
}
