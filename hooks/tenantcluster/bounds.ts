/**
 * What a team may store in a TenantCluster where the seeds leave it free (issue #55): the free-form `values` of
 * its addons, and the values of the annotations Butler reads. Every process reads a TenantCluster as a small
 * projection, so one stored past these bounds (before them, or while the webhook was down) costs little; the
 * bounds keep what a team stores, and what every review of it carries, from growing without end.
 *
 * @module
 */
import { MAX_READ_ANNOTATION_BYTES } from "../../lib/api/mod.ts";
import { CREATOR_ANNOTATION, MIGRATION_ANNOTATION, OWNER_ANNOTATIONS } from "../../lib/butler/mod.ts";
import type { FieldError } from "./restrictions.ts";

/** The most bytes of JSON one addon's `values` may take: Helm values of an addon are a few kilobytes. */
export const MAX_ADDON_VALUES_BYTES = 32 * 1024;
/** The most bytes of JSON all addons' `values` of one cluster may take together. */
export const MAX_ADDONS_VALUES_BYTES = 128 * 1024;

const READ_ANNOTATIONS = [...new Set([...OWNER_ANNOTATIONS, CREATOR_ANNOTATION, MIGRATION_ANNOTATION])];

type Stored =
  | {
    metadata?: { annotations?: Record<string, unknown> | null };
    spec?: { addons?: unknown };
  }
  | null
  | undefined;

const utf8 = new TextEncoder();

/** The bytes of `value` as JSON (UTF-8), 0 for none. */
function jsonBytes(value: unknown): number {
  return value === undefined ? 0 : utf8.encode(JSON.stringify(value)).length;
}

/** Each addon's `values` as JSON, by position. */
function addonValues(o: Stored): string[] {
  const addons = Array.isArray(o?.spec?.addons) ? o!.spec!.addons as unknown[] : [];
  return addons.map((a) => JSON.stringify((a as { values?: unknown } | null)?.values ?? null));
}

/**
 * The bounds `object` passes that `oldObject` did not already pass the same way: an object stored before a bound
 * keeps what it had (as the API server ratchets unchanged fields), a change past it is refused.
 *
 * @example
 * ```ts
 * storedBoundErrors({ spec: { addons: [{ name: "a", values: { big: "x".repeat(40_000) } }] } }, undefined);
 * // [{ path: "spec.addons[0].values", type: "Invalid value", ... }]
 * ```
 */
export function storedBoundErrors(object: Stored, oldObject: Stored): FieldError[] {
  const errors: FieldError[] = [];
  const values = addonValues(object);
  const oldValues = addonValues(oldObject);
  const old = new Set(oldValues);
  values.forEach((text, i) => {
    const bytes = utf8.encode(text).length;
    if (bytes > MAX_ADDON_VALUES_BYTES && !old.has(text)) {
      errors.push(
        invalid(`spec.addons[${i}].values`, `${bytes} bytes as JSON, more than ${MAX_ADDON_VALUES_BYTES}`),
      );
    }
  });
  const total = values.reduce((n, text) => n + utf8.encode(text).length, 0);
  const oldTotal = oldValues.reduce((n, text) => n + utf8.encode(text).length, 0);
  if (total > MAX_ADDONS_VALUES_BYTES && total > oldTotal) {
    errors.push(
      invalid(
        "spec.addons",
        `its values take ${total} bytes as JSON together, more than ${MAX_ADDONS_VALUES_BYTES}`,
      ),
    );
  }
  for (const key of READ_ANNOTATIONS) {
    const value = object?.metadata?.annotations?.[key];
    const length = typeof value === "string" ? value.length : jsonBytes(value);
    if (length > MAX_READ_ANNOTATION_BYTES && value !== oldObject?.metadata?.annotations?.[key]) {
      errors.push(
        invalid(
          `metadata.annotations[${key}]`,
          `${length} characters, more than ${MAX_READ_ANNOTATION_BYTES}`,
        ),
      );
    }
  }
  return errors;
}

function invalid(path: string, detail: string): FieldError {
  return { rule: "storedBound", path, type: "Invalid value", detail };
}
