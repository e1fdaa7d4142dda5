/**
 * Whether an object's `metadata` decodes into the API server's `ObjectMeta`: each field of its JSON type (a label
 * value a string, `finalizers` a list of strings, a timestamp in RFC 3339). The API server refuses a request whose
 * metadata does not, before anything else is checked, in `encoding/json`'s words for the first field that fails
 * (keys in sorted order, as kubectl sends them): `json: cannot unmarshal bool into Go struct field
 * ObjectMeta.labels of type string`. A custom resource's metadata is decoded on its own (fields named from
 * `metadata`), a built-in object's with the object (`ObjectMeta.metadata.labels`).
 *
 * @module
 */
import { rfc3339Error } from "../gostd/mod.ts";
import type { ObjectMetaFields } from "./object_meta.ts";

type JsonKind = "string" | "number" | "bool" | "array" | "object" | "null";

const jsonKind = (v: unknown): JsonKind =>
  v === null || v === undefined
    ? "null"
    : Array.isArray(v)
    ? "array"
    : typeof v === "boolean"
    ? "bool"
    : typeof v === "number"
    ? "number"
    : typeof v === "string"
    ? "string"
    : "object";

/** Where a value is: the innermost struct's name and the path from the decoded root (`ownerReferences.controller`). */
interface At {
  readonly struct: string;
  readonly path: string;
}

/** A Go type a field decodes into: what is wrong with a JSON value for it, at a place. */
type GoType = (v: unknown, at: At) => string | undefined;

function mismatch(value: string, at: At, type: string): string {
  return `json: cannot unmarshal ${value} into Go struct field ${at.struct}.${at.path} of type ${type}`;
}

function scalar(name: string, accepts: JsonKind, extra?: (v: unknown) => boolean): GoType {
  return (v, at) => {
    const k = jsonKind(v);
    if (k === "null" || (k === accepts && (!extra || extra(v)))) return undefined;
    return mismatch(k === "number" && accepts === "number" ? `number ${JSON.stringify(v)}` : k, at, name);
  };
}

const STRING = scalar("string", "string");
const UID = scalar("types.UID", "string");
const INT64 = scalar("int64", "number", (v) => Number.isInteger(v) && Math.abs(v as number) < 2 ** 63);
const BOOL = scalar("bool", "bool");
/** `metav1.Time`: null, or a string Go's `time.Parse(time.RFC3339, …)` reads; its own errors have no field. */
const TIME: GoType = (v, at) => {
  const k = jsonKind(v);
  if (k === "null") return undefined;
  if (k !== "string") return mismatch(k, at, "string");
  return rfc3339Error(v as string);
};

function mapOf(of: GoType, name: string): GoType {
  return (v, at) => {
    const k = jsonKind(v);
    if (k === "null") return undefined;
    if (k !== "object") return mismatch(k, at, name);
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      const e = of(record[key], at);
      if (e) return e;
    }
    return undefined;
  };
}

function listOf(of: GoType, name: string): GoType {
  return (v, at) => {
    const k = jsonKind(v);
    if (k === "null") return undefined;
    if (k !== "array") return mismatch(k, at, name);
    for (const item of v as unknown[]) {
      const e = of(item, at);
      if (e) return e;
    }
    return undefined;
  };
}

function struct(name: string, fields: Readonly<Record<string, GoType>>): GoType {
  const short = name.replace(/^v1\./, "");
  return (v, at) => {
    const k = jsonKind(v);
    if (k === "null") return undefined;
    if (k !== "object") return mismatch(k, at, name);
    const record = v as Record<string, unknown>;
    for (const key of Object.keys(record).sort()) {
      const path = at.path ? `${at.path}.${key}` : key;
      const e = fields[key]?.(record[key], { struct: short, path });
      if (e) return e;
    }
    return undefined;
  };
}

const OWNER_REFERENCE = struct("v1.OwnerReference", {
  apiVersion: STRING,
  kind: STRING,
  name: STRING,
  uid: UID,
  controller: BOOL,
  blockOwnerDeletion: BOOL,
});

const OBJECT_META = struct("v1.ObjectMeta", {
  name: STRING,
  generateName: STRING,
  namespace: STRING,
  selfLink: STRING,
  uid: UID,
  resourceVersion: STRING,
  generation: INT64,
  creationTimestamp: TIME,
  deletionTimestamp: TIME,
  deletionGracePeriodSeconds: INT64,
  labels: mapOf(STRING, "map[string]string"),
  annotations: mapOf(STRING, "map[string]string"),
  ownerReferences: listOf(OWNER_REFERENCE, "[]v1.OwnerReference"),
  finalizers: listOf(STRING, "[]string"),
});

/**
 * The decoding error of `metadata` in the API server's words, or `undefined` when it decodes: of a custom
 * resource (`within` omitted: decoded on its own) or of a built-in object of kind `within` (decoded with it).
 *
 * @example
 * ```ts
 * metadataDecodeError({ name: "a", labels: { on: true } });
 * // "json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type string"
 * metadataDecodeError({ name: "a", labels: { on: true } }, "Secret");
 * // "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"
 * ```
 */
export function metadataDecodeError(metadata: unknown, within?: string): string | undefined {
  if (within === undefined && jsonKind(metadata) !== "object" && jsonKind(metadata) !== "null") {
    return `json: cannot unmarshal ${jsonKind(metadata)} into Go value of type v1.ObjectMeta`;
  }
  return OBJECT_META(
    metadata,
    within === undefined ? { struct: "ObjectMeta", path: "" } : { struct: within, path: "metadata" },
  );
}

const str = (v: unknown) => (typeof v === "string" ? v : "");
const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {};

/**
 * `metadata` as Go holds it once decoded (it decodes: {@linkcode metadataDecodeError}): a null is the zero value
 * (an empty string, no map, no list), in maps and lists too.
 *
 * @example
 * ```ts
 * decodedMetadata({ name: "a", labels: { b: null }, finalizers: [null] });
 * // { name: "a", labels: { b: "" }, finalizers: [""] }
 * ```
 */
export function decodedMetadata(metadata: unknown): ObjectMetaFields {
  const m = record(metadata);
  const out: Record<string, unknown> = { ...m };
  for (const k of ["name", "generateName", "namespace"] as const) if (k in m) out[k] = str(m[k]);
  for (const k of ["labels", "annotations"] as const) {
    if (m[k] !== null && m[k] !== undefined) {
      out[k] = Object.fromEntries(Object.entries(record(m[k])).map(([key, v]) => [key, str(v)]));
    }
  }
  if (Array.isArray(m.finalizers)) out.finalizers = m.finalizers.map(str);
  if (Array.isArray(m.ownerReferences)) {
    out.ownerReferences = m.ownerReferences.map((r) => {
      const o = record(r);
      return {
        apiVersion: str(o.apiVersion),
        kind: str(o.kind),
        name: str(o.name),
        uid: str(o.uid),
        ...(typeof o.controller === "boolean" ? { controller: o.controller } : {}),
        ...(typeof o.blockOwnerDeletion === "boolean" ? { blockOwnerDeletion: o.blockOwnerDeletion } : {}),
      };
    });
  }
  return out as ObjectMetaFields;
}
