import { z } from "zod";
import { ControllerObject, KubeObject, objectKey } from "./object.ts";
import { groupKey, ObjectMap, RelatedMap } from "./object_map.ts";

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const nonEmpty = (v: unknown) => typeof v === "string" && v.length > 0;

/** What the API server would refuse of an object a hook returns, as `[path, message]` (none: it is sound). */
function objectProblems(o: unknown): [PropertyKey[], string][] {
  if (!isRecord(o)) return [[[], "expected an object"]];
  const problems: [PropertyKey[], string][] = [];
  if (!nonEmpty(o.apiVersion)) problems.push([["apiVersion"], "expected a non-empty string"]);
  if (!nonEmpty(o.kind)) problems.push([["kind"], "expected a non-empty string"]);
  const m = o.metadata;
  if (!isRecord(m)) return [...problems, [["metadata"], "expected an object"]];
  if (!nonEmpty(m.name)) problems.push([["metadata", "name"], "expected a non-empty string"]);
  if (m.namespace !== undefined && typeof m.namespace !== "string") {
    problems.push([["metadata", "namespace"], "expected a string"]);
  }
  for (const field of ["labels", "annotations"] as const) {
    const map = m[field];
    if (map === undefined || map === null) continue;
    if (!isRecord(map)) problems.push([["metadata", field], "expected an object"]);
    else {
      for (const k in map) {
        if (typeof map[k] !== "string") problems.push([["metadata", field, k], "expected a string"]);
      }
    }
  }
  if (o.status !== undefined && o.status !== null && !isRecord(o.status)) {
    problems.push([["status"], "expected an object"]);
  }
  return problems;
}

/**
 * Objects a hook returns, each a sound object ({@linkcode KubeObject}'s shape) named once: Metacontroller files
 * them in a map by group and name, so a second object of the same name silently replaces the first (whichever
 * comes last wins). Checked in place, not copied: a Team at its bounds returns hundreds of children.
 */
const UniqueObjects = z.array(z.unknown()).superRefine((objects, ctx) => {
  const seen = new Set<string>();
  objects.forEach((o, i) => {
    const problems = objectProblems(o);
    for (const [path, message] of problems) ctx.addIssue({ code: "custom", path: [i, ...path], message });
    if (problems.length) return;
    const key = `${groupKey(o as KubeObject)} ${objectKey(o as KubeObject)}`;
    if (seen.has(key)) {
      ctx.addIssue({ code: "custom", path: [i], message: `${key} is returned more than once` });
    }
    seen.add(key);
  });
}) as unknown as z.ZodType<KubeObject[]>;

/** Status as a hook returns it: a JSON object, or `null`. */
const Status = z.record(z.string(), z.unknown()).nullable();

/** A positive `resyncAfterSeconds` asks for one extra sync after that many seconds. */
const ResyncAfterSeconds = z.number().nonnegative().finite();

/** CompositeController sync/finalize request (hook `version: v2`). */
export const CompositeRequest = z.looseObject({
  controller: ControllerObject,
  parent: KubeObject,
  children: ObjectMap,
  related: RelatedMap,
  finalizing: z.boolean(),
});

/** A CompositeController sync/finalize request. */
export type CompositeRequest = z.infer<typeof CompositeRequest>;

/**
 * CompositeController sync/finalize response. Strict: v2 Metacontroller fails the call on any unknown
 * top-level key.
 */
export const CompositeResponse = z.strictObject({
  status: Status,
  children: UniqueObjects,
  resyncAfterSeconds: ResyncAfterSeconds.optional(),
  finalized: z.boolean().optional(),
});

/** A CompositeController sync/finalize response. */
export type CompositeResponse = z.infer<typeof CompositeResponse>;

/** DecoratorController sync/finalize request (hook `version: v2`): `object` and `attachments`. */
export const DecoratorRequest = z.looseObject({
  controller: ControllerObject,
  object: KubeObject,
  attachments: ObjectMap,
  related: RelatedMap,
  finalizing: z.boolean(),
});

/** A DecoratorController sync/finalize request. */
export type DecoratorRequest = z.infer<typeof DecoratorRequest>;

/** Labels or annotations a decorator sets (a string) or deletes (`null`); keys left out are untouched. */
const StringPatch = z.record(z.string(), z.string().nullable());

/**
 * DecoratorController sync/finalize response. Strict like the composite one. `status: null` (or absent)
 * leaves the target's status unchanged; an object replaces it.
 */
export const DecoratorResponse = z.strictObject({
  labels: StringPatch.optional(),
  annotations: StringPatch.optional(),
  status: Status.optional(),
  attachments: UniqueObjects,
  resyncAfterSeconds: ResyncAfterSeconds.optional(),
  finalized: z.boolean().optional(),
});

/** A DecoratorController sync/finalize response. */
export type DecoratorResponse = z.infer<typeof DecoratorResponse>;

/** Customize request: both controller kinds send `parent`. */
export const CustomizeRequest = z.looseObject({
  controller: ControllerObject,
  parent: KubeObject,
});

/** A customize hook request. */
export type CustomizeRequest = z.infer<typeof CustomizeRequest>;

/** A Kubernetes label selector (`matchLabels` and `matchExpressions`), as related rules and webhooks carry it. */
export const LabelSelector = z.strictObject({
  matchLabels: z.record(z.string(), z.string()).optional(),
  matchExpressions: z.array(z.strictObject({
    key: z.string(),
    operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
    values: z.array(z.string()).optional(),
  })).optional(),
});

/** A Kubernetes label selector. */
export type LabelSelector = z.infer<typeof LabelSelector>;

/** One related-resource rule, with Metacontroller's own combination rules enforced. */
export const RelatedResourceRule = z.strictObject({
  apiVersion: z.string().min(1),
  resource: z.string().min(1),
  labelSelector: LabelSelector.optional(),
  namespaceSelector: LabelSelector.optional(),
  namespace: z.string().optional(),
  names: z.array(z.string()).optional(),
}).refine((r) => !(r.names && (r.labelSelector || r.namespaceSelector)), {
  message: "names cannot be combined with labelSelector or namespaceSelector",
}).refine((r) => !(r.namespace && r.namespaceSelector), {
  message: "namespace cannot be combined with namespaceSelector",
});

/** A related-resource rule. */
export type RelatedResourceRule = z.infer<typeof RelatedResourceRule>;

/** Customize response. */
export const CustomizeResponse = z.strictObject({
  relatedResources: z.array(RelatedResourceRule),
});

/** A customize hook response. */
export type CustomizeResponse = z.infer<typeof CustomizeResponse>;
