import { z } from "zod";

/** Standard Kubernetes object metadata; unknown fields are kept. */
export const ObjectMeta = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.number().int().optional(),
  resourceVersion: z.string().optional(),
  creationTimestamp: z.string().nullable().optional(),
  deletionTimestamp: z.string().nullable().optional(),
  labels: z.record(z.string(), z.string()).nullable().optional(),
  annotations: z.record(z.string(), z.string()).nullable().optional(),
});

/** Kubernetes object metadata as parsed. */
export type ObjectMeta = z.infer<typeof ObjectMeta>;

/**
 * Any Kubernetes object: `apiVersion`, `kind` and `metadata.name` are required, every other field is kept
 * as it came.
 */
export const KubeObject = z.looseObject({
  apiVersion: z.string().min(1),
  kind: z.string().min(1),
  metadata: ObjectMeta,
  // The API server stores a status as an object; anything else is not an object we were sent by it, and hooks
  // copy previous status fields forward, so a string here would be spread character by character.
  status: z.record(z.string(), z.unknown()).nullable().optional(),
});

/** A Kubernetes object as parsed by {@linkcode KubeObject}. */
export type KubeObject = z.infer<typeof KubeObject>;

/**
 * The controller object Metacontroller sends. Its `apiVersion`/`kind` may be missing (the reference marks
 * them UNCONFIRMED), and hooks never depend on it, so only its shape as an object is checked.
 */
export const ControllerObject = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({ name: z.string().optional() }).optional(),
});

/** The controller object as parsed by {@linkcode ControllerObject}. */
export type ControllerObject = z.infer<typeof ControllerObject>;

/**
 * The inner key Metacontroller v2 uses for an object: `namespace/name` for namespaced objects, `name`
 * otherwise.
 *
 * @example
 * ```ts
 * objectKey({ metadata: { name: "w1", namespace: "team-a" } }); // "team-a/w1"
 * ```
 */
export function objectKey(obj: { metadata: { name: string; namespace?: string | undefined } }): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : obj.metadata.name;
}
