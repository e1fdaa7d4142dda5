import { z } from "zod";
import type { KubeObject } from "./object.ts";

/** What every hook relies on in an object it may hand back: its identity. */
const Identity = z.object({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: z.object({
    name: z.string().min(1),
    namespace: z.string().optional(),
    uid: z.string().optional(),
  }),
});

/**
 * An object a hook may hand back (an observed child or attachment kept as desired): its identity, and labels and
 * annotations the API server could have sent, so that an object it could not have sent is refused, not echoed.
 */
const Echoable = Identity.extend({
  metadata: Identity.shape.metadata.extend({
    labels: z.record(z.string(), z.string()).nullable().optional(),
    annotations: z.record(z.string(), z.string()).nullable().optional(),
  }),
});

/**
 * A map checked object by object with `entry`, and passed on as sent: no copy of its objects is built. Problems
 * are reported at `[group][key].field`, as if the map had been parsed.
 */
function objectMap(entry: z.ZodType): z.ZodType<Record<string, Record<string, KubeObject> | null>> {
  return groups((ctx, key, objects) => {
    for (const [name, obj] of Object.entries(objects)) {
      const checked = entry.safeParse(obj);
      if (checked.success) continue;
      for (const issue of checked.error.issues) {
        ctx.addIssue({ ...issue, path: [key, name, ...issue.path] } as never);
      }
    }
  }) as z.ZodType<Record<string, Record<string, KubeObject> | null>>;
}

const GROUP = z.record(z.string(), z.unknown()).nullable();
const OBJECT = z.record(z.string(), z.unknown());
const isObject = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);

/** A map whose groups are JSON objects (or null), each group then checked by `check`. */
function groups(
  check: (ctx: z.RefinementCtx, key: string, objects: Record<string, unknown>) => void,
): z.ZodType<Record<string, Record<string, unknown> | null>> {
  return z.record(z.string(), z.unknown()).superRefine((map, ctx) => {
    for (const [key, objects] of Object.entries(map)) {
      if (objects === null) continue;
      if (!isObject(objects)) {
        for (const issue of GROUP.safeParse(objects).error?.issues ?? []) {
          ctx.addIssue({ ...issue, path: [key, ...issue.path] } as never);
        }
        continue;
      }
      check(ctx, key, objects as Record<string, unknown>);
    }
  }) as unknown as z.ZodType<Record<string, Record<string, unknown> | null>>;
}

/**
 * A Metacontroller object map: outer key `Kind.apiVersion`, inner key `namespace/name` (v2, namespaced) or
 * `name`. Metacontroller sends every declared group, empty ones as `{}`; an absent or `null` group was not
 * delivered and is kept distinct from an empty one ({@linkcode missingGroups}). Children and attachments, which
 * hooks may hand back, are checked as {@linkcode Echoable}.
 */
export const ObjectMap = objectMap(Echoable);

/** A related object as sent: a JSON object that hooks read through their own schema ({@linkcode readGroup}). */
export type RelatedObject = Readonly<Record<string, unknown>>;

/**
 * A map of related objects. They are never handed back, and every hook reads what it needs of them through its
 * own schema, so only their shape as JSON objects is checked here: a pool sync relates thousands of
 * IPAllocations and reads the spec of a handful, and checking every one's identity cost a fifth of the call.
 */
export const RelatedMap: z.ZodType<Record<string, Record<string, RelatedObject> | null>> = groups(
  (ctx, key, objects) => {
    for (const name in objects) {
      if (isObject(objects[name])) continue;
      for (const issue of OBJECT.safeParse(objects[name]).error?.issues ?? []) {
        ctx.addIssue({ ...issue, path: [key, name, ...issue.path] } as never);
      }
    }
  },
) as z.ZodType<Record<string, Record<string, RelatedObject> | null>>;

/** A map of related objects as parsed by {@linkcode RelatedMap}. */
export type RelatedMap = z.infer<typeof RelatedMap>;

/** An object map as parsed by {@linkcode ObjectMap}. */
export type ObjectMap = z.infer<typeof ObjectMap>;

/** A kind with the exact apiVersion declared in a controller's child, attachment or related rule. */
export interface TypeRef {
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The outer key of an object map for a type.
 *
 * @example
 * ```ts
 * groupKey({ kind: "IPAllocation", apiVersion: "butler.butlerlabs.dev/v1alpha1" });
 * // "IPAllocation.butler.butlerlabs.dev/v1alpha1"
 * ```
 */
export function groupKey(type: TypeRef): string {
  return `${type.kind}.${type.apiVersion}`;
}

/** The maps of a hook request whose groups a hook can require. */
export type MapField = "children" | "related" | "attachments";

/**
 * A request lacks a group the hook needs: the group is absent or `null`, which means "not delivered" (a
 * controller deployed without its customize hook, or a child type missing from its rules), never "none". Hooks
 * throw it instead of reading the group as empty, which would drop grants or delete children; the HTTP layer
 * answers 400 with one problem per missing group.
 */
export class UndeliveredGroupsError extends Error {
  /** One entry per missing group: the field path and why. */
  readonly problems: readonly { path: string; message: string }[];

  constructor(problems: readonly { path: string; message: string }[]) {
    super(
      `invalid request: ${
        problems.map((p) => p.path).join(", ")
      }: not delivered (an absent or null group is not an ` +
        `empty one; check the controller's customize hook and child rules)`,
    );
    this.name = "UndeliveredGroupsError";
    this.problems = problems;
  }
}

/**
 * The groups of `types` that `map` lacks (absent or `null`), as problems located by field path. Metacontroller
 * initialises every declared child type and every related rule's group before listing (`InitGroup`), so a
 * missing group is a deployment problem, not an empty set.
 *
 * @example
 * ```ts
 * missingGroups({}, "related", [{ apiVersion: "v1", kind: "Secret" }]);
 * // [{ path: 'related["Secret.v1"]', message: "group Secret.v1 not delivered" }]
 * ```
 */
export function missingGroups(
  map: ObjectMap | RelatedMap,
  field: MapField,
  types: readonly TypeRef[],
): { path: string; message: string }[] {
  return [...new Set(types.map(groupKey))].filter((key) => map[key] == null).sort().map((key) => ({
    path: formatPath([field, key]),
    message: `group ${key} not delivered`,
  }));
}

/** One object of a group that did or did not match the schema the hook expects for that type. */
export type GroupEntry<T, O = KubeObject> =
  | { readonly key: string; readonly ok: true; readonly value: T; readonly raw: O }
  | { readonly key: string; readonly ok: false; readonly error: string; readonly raw: O };

/**
 * Reads one typed group from an object map, sorted by key so that hooks are deterministic. Objects that do not
 * match `schema` are returned as failed entries with the first problem's path, never dropped, so a hook can
 * keep them instead of deleting what it does not understand.
 */
export function readGroup<S extends z.ZodType, O = KubeObject>(
  map: Readonly<Record<string, Readonly<Record<string, O>> | null>>,
  type: TypeRef,
  schema: S,
): GroupEntry<z.infer<S>, O>[] {
  const group = map[groupKey(type)] ?? {};
  return Object.keys(group).sort().map((key) => {
    const raw = group[key]!;
    const parsed = schema.safeParse(raw);
    return parsed.success
      ? { key, ok: true as const, value: parsed.data as z.infer<S>, raw }
      : { key, ok: false as const, error: describeIssue(parsed.error), raw };
  });
}

/** Describes the first issue of a zod error as `path: message`. */
export function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return "invalid";
  const path = formatPath(issue.path);
  return path ? `${path}: ${issue.message}` : issue.message;
}

/**
 * Formats a zod issue path as a field path: `spec.reserved[1].cidr`.
 *
 * @example
 * ```ts
 * formatPath(["spec", "reserved", 1, "cidr"]); // "spec.reserved[1].cidr"
 * ```
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))) out += out ? `.${String(part)}` : String(part);
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out;
}

/** A desired object of a declared type, built with exactly the declared apiVersion and kind. */
export type Desired<T extends Record<string, unknown>> = T & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
};

/**
 * Builds a child/attachment object with the exact declared apiVersion and kind, so Metacontroller files it
 * under the same group key as the observed objects of that type.
 *
 * @example
 * ```ts
 * const cm = buildObject({ apiVersion: "v1", kind: "ConfigMap" }, { name: "x", namespace: "ns" }, { data: {} });
 * ```
 */
export function buildObject<T extends Record<string, unknown>>(
  type: TypeRef,
  metadata: Desired<T>["metadata"],
  body: T,
): Desired<T> {
  return { apiVersion: type.apiVersion, kind: type.kind, metadata, ...body } as Desired<T>;
}

/** Metadata the API server owns; never part of a desired object. */
const SERVER_METADATA = [
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "managedFields",
  "selfLink",
  "ownerReferences",
  "finalizers",
] as const;
const LAST_APPLIED = "metacontroller.k8s.io/last-applied-configuration";

/**
 * The observed children of the given types, as desired objects: unchanged except for status and what the API
 * server or Metacontroller own. Returning these keeps every child as it is, which is what a hook must do when it
 * cannot understand its parent (returning fewer children deletes them).
 */
export function keepObserved(map: ObjectMap, types: readonly TypeRef[]): KubeObject[] {
  return types.flatMap((type) =>
    Object.keys(map[groupKey(type)] ?? {}).sort().map((key) => asDesired(map[groupKey(type)]![key]!))
  );
}

/** One observed object as a desired one: status and server- or Metacontroller-owned metadata removed. */
export function asDesired(observed: KubeObject): KubeObject {
  const { status: _status, metadata, ...rest } = observed;
  const meta: Record<string, unknown> = { ...metadata };
  for (const k of SERVER_METADATA) delete meta[k];
  if (meta.annotations && typeof meta.annotations === "object") {
    const { [LAST_APPLIED]: _last, ...annotations } = meta.annotations as Record<string, string>;
    meta.annotations = annotations;
    if (!Object.keys(annotations).length) delete meta.annotations;
  }
  return { ...rest, metadata: meta } as KubeObject;
}
