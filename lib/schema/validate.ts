/**
 * An object checked against a structural schema the way the API server's OpenAPI validator checks a custom
 * resource (`k8s.io/kube-openapi` as `apiextensions-apiserver` runs it), with its errors in the API server's words.
 *
 * @module
 */
import type { FieldError } from "./field_error.ts";
import { formatError, NEWEST_MINOR } from "./formats.ts";
import type { Schema } from "./structural.ts";

/** What a validation depends on besides the schema: the Kubernetes minor version judged as (its formats). */
export interface ValidateOptions {
  readonly minor?: number;
}

/** The JSON type of a decoded value, as the validator names it. */
export function jsonType(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  if (typeof value === "bigint") return "integer";
  return typeof value === "object" ? "object" : typeof value;
}

/** A schema's type as the API server's validator sees it (`int-or-string` is `integer,string`). */
function typesOf(s: Schema): string[] {
  return s.type ? [s.type] : s["x-kubernetes-int-or-string"] ? ["integer", "string"] : [];
}

function typeMatches(types: readonly string[], actual: string): boolean {
  return types.includes(actual) || (actual === "integer" && types.includes("number"));
}

/** A Go `%v` of a float64 bound as the validator prints it. */
function bound(n: number): string {
  return String(n);
}

function fieldOf(path: string): string {
  return path === "" ? "<nil>" : path;
}

function invalid(path: string, value: unknown, detail: string): FieldError {
  return { field: fieldOf(path), type: "Invalid value", value, detail };
}

function checkString(s: Schema, path: string, v: string, minor: number): FieldError[] {
  const format = s.format === undefined ? undefined : formatError(s.format, path, v, minor);
  return [...stringLimits(s, path, v), ...(format ? [format] : [])];
}

/** The first of the length and pattern errors (kube-openapi's string validator stops at the first). */
function stringLimits(s: Schema, path: string, v: string): FieldError[] {
  const chars = [...v].length;
  if (s.maxLength !== undefined && chars > s.maxLength) {
    return [{
      field: fieldOf(path),
      type: "Too long",
      detail: `may not be more than ${s.maxLength} byte${s.maxLength === 1 ? "" : "s"}`,
    }];
  }
  if (s.minLength !== undefined && chars < s.minLength) {
    return [invalid(path, v, `${path} in body should be at least ${s.minLength} chars long`)];
  }
  if (s.pattern !== undefined && !new RegExp(s.pattern, "u").test(v)) {
    return [invalid(path, v, `${path} in body should match '${s.pattern}'`)];
  }
  return [];
}

function checkNumber(s: Schema, path: string, v: number): FieldError[] {
  const errors: FieldError[] = [];
  if (s.maximum !== undefined && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) {
    const words = s.exclusiveMaximum ? "less than" : "less than or equal to";
    errors.push(invalid(path, v, `${path} in body should be ${words} ${bound(s.maximum)}`));
  }
  if (s.minimum !== undefined && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) {
    const words = s.exclusiveMinimum ? "greater than" : "greater than or equal to";
    errors.push(invalid(path, v, `${path} in body should be ${words} ${bound(s.minimum)}`));
  }
  return errors;
}

function checkArray(s: Schema, path: string, v: readonly unknown[], o: ValidateOptions): FieldError[] {
  const errors = v.flatMap((item, i) => (s.items ? validateSchema(s.items, item, `${path}[${i}]`, o) : []));
  if (s.minItems !== undefined && v.length < s.minItems) {
    errors.push(invalid(path, v.length, `${path} in body should have at least ${s.minItems} items`));
  }
  if (s.maxItems !== undefined && v.length > s.maxItems) {
    errors.push({
      field: fieldOf(path),
      type: "Too many",
      value: v.length,
      detail: `must have at most ${s.maxItems} item${s.maxItems === 1 ? "" : "s"}`,
    });
  }
  return errors;
}

function checkObject(
  s: Schema,
  path: string,
  v: Readonly<Record<string, unknown>>,
  o: ValidateOptions,
): FieldError[] {
  const errors: FieldError[] = [];
  const at = (k: string) => (path ? `${path}.${k}` : k);
  for (const [k, item] of Object.entries(v)) {
    const child = s.properties?.[k] ??
      (typeof s.additionalProperties === "object" ? s.additionalProperties : undefined);
    if (child) errors.push(...validateSchema(child, item, at(k), o));
  }
  for (const k of s.required ?? []) {
    if (!(k in v)) errors.push({ field: at(k), type: "Required value" });
  }
  const n = Object.keys(v).length;
  if (s.maxProperties !== undefined && n > s.maxProperties) {
    errors.push({
      field: fieldOf(path),
      type: "Too many",
      value: n,
      detail: `must have at most ${s.maxProperties} items`,
    });
  }
  if (s.minProperties !== undefined && n < s.minProperties) {
    errors.push(invalid(path, n, `${path} in body should have at least ${s.minProperties} properties`));
  }
  return errors;
}

function enumMatches(s: Schema, value: unknown): boolean {
  return !s.enum || s.enum.some((e) => e === value);
}

/**
 * The schema's errors for `value` at `path` (`""` for the object itself): type, enum, string, number, array and
 * object checks, `anyOf` for int-or-string, in the API server's words (`spec.replicas: Invalid value: "string":
 * spec.replicas in body must be of type integer: "string"`). `null` is refused unless the schema is `nullable`.
 *
 * @example
 * ```ts
 * validateSchema({ type: "object", required: ["cidr"], properties: { cidr: { type: "string" } } }, {}, "spec");
 * // [{ field: "spec.cidr", type: "Required value" }]
 * ```
 */
export function validateSchema(s: Schema, value: unknown, path = "", o: ValidateOptions = {}): FieldError[] {
  const actual = jsonType(value);
  const types = typesOf(s);
  if (actual === "null") {
    if (types.length && !s.nullable) {
      return [invalid(path, "null", `${path} in body must be of type ${types.join(",")}: "null"`)];
    }
    return [];
  }
  const errors: FieldError[] = [];
  if (s.anyOf && !s.anyOf.some((a) => validateSchema(a, value, path, o).length === 0)) {
    // The branch with the fewest errors speaks for all, the first of equals (the validator's best failure).
    const best = s.anyOf.map((a) =>
      validateSchema(a, value, path, o)
    ).sort((a, b) => a.length - b.length)[0] ??
      [];
    errors.push(invalid("", "", `"${path}" must validate at least one schema (anyOf)`), ...best);
  }
  if (types.length && !typeMatches(types, actual)) {
    errors.unshift(invalid(path, actual, `${path} in body must be of type ${types.join(",")}: "${actual}"`));
    if (!enumMatches(s, value)) errors.push(notSupported(s, path, value));
    return errors;
  }
  if (typeof value === "string" && (types.includes("string") || s["x-kubernetes-int-or-string"])) {
    errors.push(...checkString(s, path, value, o.minor ?? NEWEST_MINOR));
  }
  if (typeof value === "number") errors.push(...checkNumber(s, path, value));
  if (Array.isArray(value)) errors.push(...checkArray(s, path, value, o));
  if (!enumMatches(s, value)) errors.push(notSupported(s, path, value));
  if (actual === "object") errors.push(...checkObject(s, path, value as Record<string, unknown>, o));
  return errors;
}

function notSupported(s: Schema, path: string, value: unknown): FieldError {
  const values = (s.enum ?? []).map((e) => JSON.stringify(typeof e === "string" ? e : JSON.stringify(e)));
  return {
    field: fieldOf(path),
    type: "Unsupported value",
    value,
    detail: `supported values: ${values.join(", ")}`,
  };
}
