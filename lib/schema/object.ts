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
import { decodedMetadata, metadataDecodeError } from "./meta_decode.ts";
import { NAME_RULES, type NameRule } from "./names.ts";
import { objectMetaErrors, objectMetaUpdateErrors } from "./object_meta.ts";
import { unknownFields, withDefaults, withoutNulls } from "./prune.ts";
import type { KindSchema, Schema } from "./structural.ts";
import { type ValidateOptions, validateSchema } from "./validate.ts";

/** An object as read from a manifest (its name generated already when it gave `generateName`). */
export interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly generateName?: string };
  readonly [key: string]: unknown;
}

/**
 * What the API server answers: the object as it would store it, or why not (one message, its causes, and the field
 * of the object its first cause is about, to point at).
 */
export type SchemaVerdict =
  | { readonly ok: true; readonly object: ManifestObject }
  | {
    readonly ok: false;
    readonly message: string;
    readonly causes?: readonly string[];
    readonly field?: string;
  };

/** The field errors after which the API server does not run the CEL rules. */
export const BLOCKING: ReadonlySet<FieldError["type"]> = new Set([
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

/** Whether an error is a type error (`... in body must be of type ...`: kube-openapi's, formats included). */
export function isTypeError(e: FieldError): boolean {
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
 * The errors of `object` (already defaulted) for `kind`, in the API server's order: its metadata (a create's, or
 * with `old` an update's), the OpenAPI schema, list invariants, then the CEL rules unless a blocking error came
 * first (`old` for transition rules).
 */
export function fieldErrors(
  kind: KindSchema,
  object: unknown,
  old?: unknown,
  options: ValidateOptions = {},
): FieldError[] {
  // A custom resource's generation is 1 on a create, whatever the request said (its strategy sets it).
  const decoded = decodedMetadata((object as { metadata?: unknown })?.metadata);
  const meta = old === undefined ? { ...decoded, generation: 1 } : decoded;
  const errors = [
    ...(old === undefined
      ? objectMetaErrors(meta, { namespaced: kind.namespaced, nameRule: NAME_RULES.dnsSubdomain })
      : objectMetaUpdateErrors(meta)),
    ...validateSchema(kind.schema, object, "", options),
    ...listTypeErrors(kind.schema, object),
  ];
  // Without a CEL rule anywhere in the schema the API server has no CEL validator, and nothing to say so of.
  if (!hasRules(kind.schema)) return errors;
  if (errors.some((e) => BLOCKING.has(e.type) || isTypeError(e))) return [...errors, NOT_CHECKED];
  return [...errors, ...celErrors(kind.schema, object, "", old)];
}

/** Whether a schema has an `x-kubernetes-validations` rule at any level. */
function hasRules(s: Schema | undefined): boolean {
  if (!s) return false;
  if (s["x-kubernetes-validations"]?.length) return true;
  const nested = [
    ...Object.values(s.properties ?? {}),
    ...(typeof s.additionalProperties === "object" ? [s.additionalProperties] : []),
    ...(s.items ? [s.items] : []),
    ...(s.allOf ?? []),
    ...(s.anyOf ?? []),
    ...(s.oneOf ?? []),
  ];
  return nested.some(hasRules);
}

/** The words of a request the API server cannot decode into the kind: `Team in version "v1alpha1" cannot ...`. */
function undecodable(kind: Pick<KindSchema, "kind" | "version">, detail: string): string {
  return `${kind.kind} in version ${
    JSON.stringify(kind.version)
  } cannot be handled as a ${kind.kind}: ${detail}`;
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
  options: ValidateOptions = {},
): SchemaVerdict {
  const kind = kindOf(kinds, object);
  if (typeof kind === "string") return { ok: false, message: kind };
  const decoding = metadataDecodeError(object.metadata);
  if (decoding) return { ok: false, message: undecodable(kind, decoding) };
  const unknown = unknownFields(kind.schema, object);
  if (unknown.length) {
    const list = unknown.map((f) => `unknown field ${JSON.stringify(f)}`).join(", ");
    return { ok: false, message: undecodable(kind, `strict decoding error: ${list}`) };
  }
  const taken = kind.statusSubresource && old === undefined ? withoutStatus(object) : object;
  const defaulted = withDefaults(kind.schema, withoutNulls(kind.schema, taken)) as ManifestObject;
  const errors = fieldErrors(
    kind,
    defaulted,
    old === undefined ? undefined : withDefaults(kind.schema, old),
    options,
  );
  if (!errors.length) return { ok: true, object: defaulted };
  return invalidVerdict(kind.kind, object.metadata.name, errors);
}

/** A refusal of field errors in kubectl's words: `The Kind "name" is invalid: ...`, and the field to point at. */
function invalidVerdict(kind: string, name: string, errors: readonly FieldError[]): SchemaVerdict {
  const causes = errors.map(formatFieldError);
  const head = `The ${kind} "${name}" is invalid: `;
  const first = errors[0]!;
  const field = first.pointsAt ?? (first.field === "<nil>" ? undefined : first.field);
  const at = field ? { field } : {};
  return causes.length === 1
    ? { ok: false, message: head + causes[0], ...at }
    : { ok: false, message: head + causes.join("; "), causes, ...at };
}

/** A built-in kind whose metadata the plan judges: its name rule and scope. */
export interface BuiltinMetaKind {
  readonly kind: string;
  readonly version: string;
  readonly namespaced: boolean;
  readonly nameRule: NameRule;
}

/**
 * Judges the metadata of an object of a built-in kind as the API server does on a create (or, with `old`, an
 * update): it decodes, and its name, namespace, labels, annotations, owner references and finalizers are valid.
 * The rest of a built-in kind is not judged here (kubectl-validate does, when installed).
 *
 * @example
 * ```ts
 * judgeMeta({ kind: "Namespace", version: "v1", namespaced: false, nameRule: NAME_RULES.dnsLabel },
 *   { apiVersion: "v1", kind: "Namespace", metadata: { name: "a.b" } });
 * // { ok: false, message: 'The Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": must not contain dots', ... }
 * ```
 */
export function judgeMeta(
  kind: BuiltinMetaKind,
  object: ManifestObject,
  old?: ManifestObject,
): SchemaVerdict {
  const decoding = metadataDecodeError(object.metadata, kind.kind);
  if (decoding) {
    return { ok: false, message: undecodable(kind, decoding) };
  }
  const decoded = decodedMetadata(object.metadata);
  // A Namespace is labelled with its name before it is validated (kubernetes.io/metadata.name).
  const meta = kind.kind === "Namespace" && old === undefined
    ? { ...decoded, labels: { ...decoded.labels, "kubernetes.io/metadata.name": decoded.name ?? "" } }
    : decoded;
  const errors = old === undefined ? objectMetaErrors(meta, kind) : objectMetaUpdateErrors(meta);
  return errors.length ? invalidVerdict(kind.kind, object.metadata.name, errors) : { ok: true, object };
}

function withoutStatus(o: ManifestObject): ManifestObject {
  const { status: _status, ...rest } = o;
  return rest as ManifestObject;
}
