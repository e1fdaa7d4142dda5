/**
 * One manifest applied as `kubectl apply` and the API server take it: its kind resolved as kubectl resolves it
 * ({@linkcode KindCatalog}), its namespace defaulted, a name generated from `generateName`, its metadata, schema and
 * CEL rules judged, the shipped policies and webhooks asked, then created or updated in the plan's store. Every
 * refusal points at the line of the field it is about (the object's first line when it names none).
 *
 * @module
 */
import { admit, type Refusal, webhookSpecs } from "./admission.ts";
import type { SourcedObject } from "./input.ts";
import type { KindCatalog, KnownKind } from "./kinds.ts";
import type { HookCall } from "./metacontroller.ts";
import type { ResourceType } from "./resources.ts";
import { canonical, describe, type Obj, objectId, type Store } from "./store.ts";
import {
  type AdmissionPolicy,
  finalizerWarnings,
  generatedName,
  judge,
  judgeMeta,
  type KindSchema,
  type ManifestObject,
  metadataDecodeError,
  NAME_RULES,
  type NameRule,
  type SchemaVerdict,
} from "../schema/mod.ts";

/** What happened to one input object. */
export interface Outcome {
  readonly source: string;
  readonly id: string;
  readonly name: string;
  readonly action: "create" | "update" | "unchanged" | "refused" | "skipped" | "unreadable";
  readonly refusal?: Refusal;
  /** The line of the input a refusal points at: the field it is about, or the object's first line. */
  readonly line?: number;
  /** Why an object was skipped (a kind the plan knows but does not judge), or what a refusal leaves out. */
  readonly note?: string;
  /** The API server's warnings for the write (admission's), as kubectl prints them after `Warning: `. */
  readonly warnings?: readonly string[];
  /** A refused input as written, and the line where it starts: what machine-readable output shows of it. */
  readonly input?: Obj;
  readonly at?: number;
}

/** The name rules of the built-in kinds whose metadata the plan judges (the ones it stores). */
const BUILTIN_NAME_RULES: Readonly<Record<string, NameRule>> = {
  Namespace: NAME_RULES.dnsLabel,
  Secret: NAME_RULES.dnsSubdomain,
  ConfigMap: NAME_RULES.dnsSubdomain,
  ResourceQuota: NAME_RULES.dnsSubdomain,
  LimitRange: NAME_RULES.dnsSubdomain,
  Role: NAME_RULES.pathSegment,
  RoleBinding: NAME_RULES.pathSegment,
  ClusterRole: NAME_RULES.pathSegment,
  ClusterRoleBinding: NAME_RULES.pathSegment,
};

/** What applying one object reads. */
export interface ApplyContext extends Judges {
  readonly store: Store;
  readonly call: HookCall;
  readonly webhooks: ReturnType<typeof webhookSpecs>;
  readonly namespaceType: ResourceType;
  /** The install's ValidatingAdmissionPolicies, evaluated in process. */
  readonly policies: readonly AdmissionPolicy[];
  /** Namespace of namespaced objects that name none. */
  readonly defaultNamespace: string;
  /** kubectl-validate's refusals of the input's built-in kinds, by index into the input. */
  readonly schema?: ReadonlyMap<number, Omit<Refusal, "by">>;
}

/** What a plan says of a kind it does not know: where the kinds it knows come from. */
export const UNKNOWN_KIND_NOTE =
  "plan knows the built-in kinds of Kubernetes, Butler's and those of the CustomResourceDefinitions in the input or --live (kubectl get crd -o yaml)";

/** One input object with its index in the input. */
export type Item = SourcedObject & { readonly index: number };

/** The field a refusal is about: an unknown field, a field error's field, or one a policy or webhook names first. */
export function refusedField(message: string): string {
  return /unknown field "([^"]+)"/.exec(message)?.[1] ??
    /(?:is invalid: |denied (?:the )?request: |^)((?:spec|metadata|status)[\w.[\]"/-]*|[\w.[\]-]+): /.exec(
      message,
    )
      ?.[1] ??
    /\b((?:spec|metadata)(?:\.[A-Za-z_][\w-]*|\[[^\]]*\])+)/.exec(message)?.[1] ?? "";
}

/** The largest request body the API server reads (`--max-request-bytes` default, 3 MiB). */
export const MAX_REQUEST_BYTES = 3 * 1024 * 1024;
/** The largest value etcd stores (its default `--max-request-bytes`, 1.5 MiB): a larger object is refused. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024;

/** The API server's (or etcd's) refusal of an object too large to send or store, in their words. */
export function sizeRefusal(object: Obj): Refusal | undefined {
  const json = JSON.stringify(object);
  // UTF-8 is at most 3 bytes a UTF-16 unit: only a string that might be too large is encoded.
  const bytes = json.length * 3 <= MAX_OBJECT_BYTES ? json.length : new TextEncoder().encode(json).length;
  if (bytes > MAX_REQUEST_BYTES) {
    return { by: "API server", message: `Request entity too large: limit is ${MAX_REQUEST_BYTES}` };
  }
  return bytes > MAX_OBJECT_BYTES
    ? { by: "API server", message: "etcdserver: request is too large" }
    : undefined;
}

/** A refusal, pointing at the line of `field` (or the object's first line). */
function refused(item: Item, named: Omit<Outcome, "action">, refusal: Refusal, field?: string): Outcome {
  const line = item.lineOf?.(field ?? refusedField(refusal.causes?.[0] ?? refusal.message)) ??
    item.lineOf?.("");
  return { ...named, action: "refused", refusal, ...(line ? { line } : {}) };
}

/** The object with its namespace defaulted (or dropped for a cluster-scoped kind) and a name from `generateName`. */
export function prepared(object: Obj, kind: Pick<KnownKind, "namespaced">, defaultNamespace: string): Obj {
  const o = structuredClone(object);
  o.metadata ??= {} as Obj["metadata"];
  if (kind.namespaced) o.metadata.namespace ??= defaultNamespace;
  else delete o.metadata.namespace;
  if (!o.metadata.name && typeof o.metadata.generateName === "string" && o.metadata.generateName) {
    o.metadata.name = generatedName(o.metadata.generateName, canonical(o));
  }
  o.metadata.name ??= "";
  return o;
}

/** What the validating part of a write needs: the kinds, how to find a stored kind's scope, the version. */
export interface Judges {
  /** The served kinds of the install's CRDs, with their schemas. */
  readonly kinds: ReadonlyMap<string, KindSchema>;
  /** Every kind the plan knows. */
  readonly catalog: KindCatalog;
  /** The Kubernetes minor version judged as. */
  readonly minor: number;
}

/** What kubectl and the API server's validation make of a manifest, before admission. */
export type ManifestVerdict =
  | { readonly refused: Refusal; readonly field?: string }
  | { readonly skipped: string }
  | { readonly known: KnownKind };

/**
 * What kubectl makes of a manifest before it sends it: its kind must be served (else kubectl's `no matches for
 * kind`), and its metadata must decode (kubectl reads every object's metadata itself: `unable to decode ...: json:
 * cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string`).
 *
 * @example
 * ```ts
 * kubectlVerdict(catalog, { apiVersion: "butler.butlerlabs.io/v1alpha1", kind: "Team", metadata: { name: "t" } });
 * // { refused: { by: "API server", message: 'no matches for kind "Team" in version "butler.butlerlabs.io/v1alpha1"' }, field: "kind" }
 * ```
 */
export function kubectlVerdict(catalog: KindCatalog, object: Obj): ManifestVerdict {
  const kind = catalog.resolve(object.apiVersion, object.kind);
  if (typeof kind === "string") return { refused: { by: "API server", message: kind }, field: "kind" };
  if (kind.kind !== object.kind) {
    return { refused: { by: "API server", message: miscased(kind, object) }, field: "kind" };
  }
  const decoding = metadataDecodeError(object.metadata, "PartialObjectMetadata");
  if (decoding) {
    const field = /Go struct field \w+\.(\S+) of/.exec(decoding)?.[1] ?? "metadata";
    return { refused: { by: "kubectl", message: `unable to decode: ${decoding}` }, field };
  }
  return { known: kind };
}

/**
 * The API server's answer to a kind kubectl found in lower case (`team` for `Team`): a custom resource's type meta
 * is invalid; a built-in kind is not in its scheme.
 */
function miscased(kind: KnownKind, object: Obj): string {
  if (kind.source !== "builtin") {
    return `The ${kind.kind} "${object.metadata?.name ?? ""}" is invalid: kind: Invalid value: ${
      JSON.stringify(object.kind)
    }: must be ${kind.kind}`;
  }
  return `${object.kind} in version ${
    JSON.stringify(kind.version)
  } cannot be handled as a ${kind.kind}: no kind ${JSON.stringify(object.kind)} is registered for version ${
    JSON.stringify(object.apiVersion)
  } in scheme "pkg/runtime/scheme.go:111"`;
}

/**
 * The metadata, schema and CEL verdict of a prepared object of a kind the plan judges (Butler's, by its CRD; the
 * built-in kinds it stores, by their metadata), as the API server validates a create (or, with `existing`, an
 * update); `undefined` for a kind it does not judge.
 */
export function validationVerdict(judges: Judges, next: Obj, existing?: Obj): SchemaVerdict | undefined {
  if (judges.kinds.has(`${next.apiVersion}/${next.kind}`)) {
    return judge(judges.kinds, next as ManifestObject, existing as ManifestObject | undefined, {
      minor: judges.minor,
    });
  }
  const rule = BUILTIN_NAME_RULES[next.kind];
  const known = judges.catalog.resolve(next.apiVersion, next.kind);
  if (!rule || typeof known === "string" || known.source !== "builtin") return undefined;
  return judgeMeta(
    { kind: next.kind, version: known.version, namespaced: known.namespaced, nameRule: rule },
    next as ManifestObject,
    existing as ManifestObject | undefined,
  );
}

/**
 * Applies one object as the API server would: refused in kubectl's words when no kind of its apiVersion is served
 * or its metadata does not decode, skipped when the plan knows its kind but neither stores nor judges it, waiting
 * while its namespace does not exist, refused by its metadata, schema, a policy or a webhook, else created or
 * updated.
 */
export async function applyOne(ctx: ApplyContext, item: Item): Promise<Outcome | { waiting: Obj }> {
  const { store } = ctx;
  const base = { source: item.source, id: objectId(item.object), name: describe(item.object) };
  const tooLarge = sizeRefusal(item.object);
  if (tooLarge) return refused(item, base, tooLarge, "");
  const read = kubectlVerdict(ctx.catalog, item.object);
  if ("refused" in read) {
    const outcome = refused(item, base, read.refused, read.field);
    return /^no matches for kind/.test(read.refused.message)
      ? { ...outcome, note: UNKNOWN_KIND_NOTE }
      : outcome;
  }
  const type = store.typeOf(item.object);
  if (!type && "known" in read) {
    const from = read.known.source === "input"
      ? "a CustomResourceDefinition of the input or --live"
      : "the API server";
    return {
      ...base,
      action: "skipped",
      note: `${item.object.kind} (${item.object.apiVersion}) is served by ${from}; plan does not judge it`,
    };
  }
  const object = prepared(item.object, type!, ctx.defaultNamespace);
  const named = { ...base, id: objectId(object), name: describe(object) };
  const namespace = type!.namespaced
    ? store.get(ctx.namespaceType, undefined, object.metadata.namespace!)
    : undefined;
  if (type!.namespaced && !namespace) return { waiting: object };
  const external = ctx.kinds.has(`${object.apiVersion}/${object.kind}`)
    ? undefined
    : ctx.schema?.get(item.index);
  if (external !== undefined) return refused(item, named, { by: "schema", ...external });
  const existing = store.find(object);
  let next: Obj = existing ? applied(existing, object) : object;
  const verdict = validationVerdict(ctx, next, existing);
  if (verdict && !verdict.ok) {
    const { message, causes } = verdict;
    return refused(item, named, { by: "schema", message, ...(causes ? { causes } : {}) }, verdict.field);
  }
  if (verdict) next = verdict.object as Obj;
  return await admitted(ctx, item, named, next, existing, namespace);
}

/** The shipped policies and webhooks asked; created or updated when they admit it. */
async function admitted(
  ctx: ApplyContext,
  item: Item,
  named: Omit<Outcome, "action">,
  next: Obj,
  existing: Obj | undefined,
  namespace: Obj | undefined,
): Promise<Outcome> {
  const { store } = ctx;
  const schemaOf = ctx.kinds.get(`${next.apiVersion}/${next.kind}`)?.schema;
  const warnings = schemaOf
    ? finalizerWarnings(next.metadata.finalizers ?? [], existing?.metadata.finalizers)
    : [];
  const refusal = await admit(
    ctx.policies,
    ctx.webhooks,
    {
      type: store.typeOf(next)!,
      op: existing ? "UPDATE" : "CREATE",
      object: next,
      oldObject: existing,
      namespace,
      ...(schemaOf ? { schema: schemaOf } : {}),
    },
    ctx.call,
    { warnings },
  );
  const warned = { ...named, ...(warnings.length ? { warnings } : {}) };
  if (refusal) return refused(item, warned, refusal);
  if (!existing) {
    store.create(next);
    return { ...warned, action: "create" };
  }
  return { ...warned, action: store.replace(next) ? "update" : "unchanged" };
}

/** An object that waited for its namespace, which never came: refused as the API server refuses it. */
export function namespaceNotFound(item: Item & { object: Obj }): Outcome {
  const named = { source: item.source, id: objectId(item.object), name: describe(item.object) };
  const refusal = { by: "API server", message: `namespaces "${item.object.metadata.namespace}" not found` };
  return refused(item, named, refusal, "metadata.namespace");
}

/**
 * An applied manifest over the stored object: what the manifest sets replaces (`spec` and other top-level
 * fields; labels and annotations key by key), the server's fields and `status` stay.
 */
function applied(existing: Obj, manifest: Obj): Obj {
  const { metadata, status: _status, ...fields } = manifest;
  return {
    ...existing,
    ...fields,
    metadata: {
      ...existing.metadata,
      ...(metadata.labels ? { labels: { ...existing.metadata.labels, ...metadata.labels } } : {}),
      ...(metadata.annotations
        ? { annotations: { ...existing.metadata.annotations, ...metadata.annotations } }
        : {}),
    },
  };
}
