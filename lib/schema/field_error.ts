/**
 * Field errors as the API server words them (`k8s.io/apimachinery`'s `field.Error`): `<path>: <Type>[: <value>][:
 * <detail>]`, the value printed the way Go prints a decoded JSON value.
 *
 * @module
 */
import { formatFloatV, isInt64, marshalJSON, quote } from "../gostd/mod.ts";

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
  /** The value as printed, where Go prints it from a struct (in its field order) rather than decoded JSON. */
  readonly shown?: string;
  /** The field the error is about when it is not `field`: a root rule on `self.metadata.name` points at that. */
  readonly pointsAt?: string;
  readonly detail?: string;
}

/** The kinds that never print their value. */
const VALUELESS: ReadonlySet<FieldErrorType> = new Set(["Required value", "Forbidden", "Too long"]);

/**
 * A decoded JSON value as `field.Error` prints it: a string as Go's `%q`, an int64 or a bool as `%v`, a float64 as
 * `%v` (`1.5`, `1e+06`), anything else as `json.Marshal` writes it (sorted keys, HTML escaped).
 *
 * @example
 * ```ts
 * goValue("a"); // '"a"'
 * goValue({ b: 1, a: 2 }); // '{"a":2,"b":1}'
 * ```
 */
export function goValue(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "string") return quote(value);
  if (typeof value === "number") return isInt64(value) ? String(value) : formatFloatV(value);
  if (typeof value === "bigint" || typeof value === "boolean") return String(value);
  return marshalJSON(value);
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
  if (!VALUELESS.has(e.type) && e.shown !== undefined) body += `: ${e.shown}`;
  else if (!VALUELESS.has(e.type) && "value" in e) body += `: ${goValue(e.value)}`;
  if (e.detail) body += `: ${e.detail}`;
  return `${e.field}: ${body}`;
}
