/**
 * A custom resource judged as the API server judges a create or an update: its kind must be served, its fields
 * declared (strict field validation, `kubectl`'s default), then it is defaulted and checked against its schema,
 * its list invariants and its CEL rules. The verdict is in the words `kubectl` prints.
 *
 * @module
 */
import { celErrors } from "./cel.ts";
import { type FieldError, formatFieldError } from "./field_error.ts";
import { listTypeErrors } from "./list_type.ts";
import { unknownFields, withDefaults } from "./prune.ts";
import type { KindSchema } from "./structural.ts";
import { validateSchema } from "./validate.ts";

/** An object as read from a manifest. */
export interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly [key: string]: unknown;
}

/** What the API server answers: the object as it would store it, or why not (one message, its causes). */
export type SchemaVerdict =
  | { readonly ok: true; readonly object: ManifestObject }
  | { readonly ok: false; readonly message: string; readonly causes?: readonly string[] };

/** The field errors after which the API server does not run the CEL rules. */
const BLOCKING: ReadonlySet<FieldError["type"]> = new Set([
  "Unsupported value",
  "Required value",
  "Too long",
  "Too many",
]);

const NOT_CHECKED: FieldError = {
  field: "<nil>",
  type: "Invalid value",
  value: null,
  detail:
    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
};

function isTypeError(e: FieldError): boolean {
  return e.type === "Invalid value" && / in body must be of type /.test(e.detail ?? "");
}

/** The `kind` of `apiVersion` among `kinds`, or the words kubectl prints when the API server serves no such kind. */
export function kindOf(
  kinds: ReadonlyMap<string, KindSchema>,
  o: Pick<ManifestObject, "apiVersion" | "kind">,
): KindSchema | string {
  return kinds.get(`${o.apiVersion}/${o.kind}`) ??
    `no matches for kind "${o.kind}" in version "${o.apiVersion}"`;
}

/**
 * The schema errors of `object` (already defaulted) for `kind`, in the API server's order: OpenAPI schema,
 * list invariants, then the CEL rules unless a blocking error came first (`old` for transition rules).
 */
export function fieldErrors(kind: KindSchema, object: unknown, old?: unknown): FieldError[] {
  const errors = [...validateSchema(kind.schema, object), ...listTypeErrors(kind.schema, object)];
  if (errors.some((e) => BLOCKING.has(e.type) || isTypeError(e))) return [...errors, NOT_CHECKED];
  return [...errors, ...celErrors(kind.schema, object, "", old)];
}

/**
 * Judges `object` as the API server judges a create (or, with `old`, an update) of a custom resource.
 *
 * @example
 * ```ts
 * const verdict = judge(kinds, { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "NetworkPool",
 *   metadata: { name: "p", namespace: "butler-system" }, spec: {} });
 * // { ok: false, message: 'The NetworkPool "p" is invalid: spec.cidr: Required value' }
 * ```
 */
export function judge(
  kinds: ReadonlyMap<string, KindSchema>,
  object: ManifestObject,
  old?: ManifestObject,
): SchemaVerdict {
  const kind = kindOf(kinds, object);
  if (typeof kind === "string") return { ok: false, message: kind };
  const unknown = unknownFields(kind.schema, object);
  if (unknown.length) {
    const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(", ");
    return {
      ok: false,
      message: `${kind.kind} in version ${
        JSON.stringify(kind.version)
      } cannot be handled as a ${kind.kind}: strict decoding error: ${list}`,
    };
  }
  const taken = kind.statusSubresource && old === undefined ? withoutStatus(object) : object;
  const defaulted = withDefaults(kind.schema, taken) as ManifestObject;
  const errors = fieldErrors(kind, defaulted, old === undefined ? undefined : withDefaults(kind.schema, old));
  if (!errors.length) return { ok: true, object: defaulted };
  const causes = errors.map(formatFieldError);
  const head = `The ${kind.kind} "${object.metadata.name}" is invalid: `;
  return causes.length === 1
    ? { ok: false, message: head + causes[0] }
    : { ok: false, message: head + causes.join("; "), causes };
}

function withoutStatus(o: ManifestObject): ManifestObject {
  const { status: _status, ...rest } = o;
  return rest as ManifestObject;
}
