/**
 * Field errors as the API server words them (`k8s.io/apimachinery`'s `field.Error`): `<path>: <Type>[: <value>][:
 * <detail>]`, the value printed the way Go prints a decoded JSON value.
 *
 * @module
 */

/** The kinds of field error the API server reports, by the words it prints. */
export type FieldErrorType =
  | "Required value"
  | "Invalid value"
  | "Unsupported value"
  | "Duplicate value"
  | "Forbidden"
  | "Too long"
  | "Too many";

/** One field error: where, what kind, the offending value (omitted for some kinds) and why. */
export interface FieldError {
  readonly field: string;
  readonly type: FieldErrorType;
  /** The value, as decoded JSON; `undefined` where the API server omits it. */
  readonly value?: unknown;
  readonly detail?: string;
}

/** The kinds that never print their value. */
const VALUELESS: ReadonlySet<FieldErrorType> = new Set(["Required value", "Forbidden", "Too long"]);

/**
 * A decoded JSON value as Go's `%v`/`%q`/`json.Marshal` print it in a field error: strings quoted, numbers and
 * booleans bare, `null`, objects and arrays as JSON with sorted keys.
 *
 * @example
 * ```ts
 * goValue("a"); // '"a"'
 * goValue({ b: 1, a: 2 }); // '{"a":2,"b":1}'
 * ```
 */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "number" || typeof value === "bigint" || typeof value === "boolean") {
    return String(value);
  }
  return JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.keys(value).sort().map((k) => [k, sortedKeys((value as Record<string, unknown>)[k])]),
  );
}

/**
 * The words of a field error, as `kubectl` prints one cause.
 *
 * @example
 * ```ts
 * formatFieldError({ field: "spec.cidr", type: "Required value" }); // "spec.cidr: Required value"
 * ```
 */
export function formatFieldError(e: FieldError): string {
  let body: string = e.type;
  if (!VALUELESS.has(e.type) && "value" in e) body += `: ${goValue(e.value)}`;
  if (e.detail) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}
