import { encodeBase64 } from "../encoding/mod.ts";
import { groupOf, type Resources, type ResourceType } from "./resources.ts";
import { fnv1a32 } from "../hash/mod.ts";

/** A Kubernetes object as the plan holds it: plain JSON. */
// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any> & {
  apiVersion: string;
  kind: string;
  // deno-lint-ignore no-explicit-any
  metadata: Record<string, any> & { name: string; namespace?: string };
};

/**
 * JSON with object keys sorted, so that two objects that differ only in key order compare equal.
 *
 * @example
 * ```ts
 * canonical({ b: 1, a: [{ d: 2, c: 3 }] }); // '{"a":[{"c":3,"d":2}],"b":1}'
 * ```
 */
export function canonical(value: unknown): string {
  return JSON.stringify(
    value,
    (_, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
  );
}

/**
 * A UID derived from an object's identity, so that a plan gives the same UIDs (and so the same ledgers, labels
 * and owner references) on every run.
 */
export function planUid(key: string): string {
  const hex = [0x811c9dc5, 0x01000193, 0x5bd1e995, 0x27d4eb2f]
    .map((seed) => fnv1a32(key, seed).toString(16).padStart(8, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${
    hex.slice(20, 32)
  }`;
}

/** `group/Kind/namespace/name`: one stored object, whatever version it was written at. */
export function objectId(o: Pick<Obj, "apiVersion" | "kind" | "metadata">): string {
  return `${groupOf(o.apiVersion)}/${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name ?? ""}`;
}

/** What a user reads for an object: `Kind namespace/name` or `Kind name`. */
export function describe(o: Pick<Obj, "kind" | "metadata">): string {
  const ns = o.metadata?.namespace;
  return `${o.kind} ${ns ? `${ns}/` : ""}${o.metadata?.name ?? ""}`;
}

/**
 * What the API server does to an object before storing it, where our hooks can tell: a Secret's `stringData`
 * becomes base64 `data` (and a Secret without a type is `Opaque`).
 */
export function serverDefaults(o: Obj): Obj {
  if (o.apiVersion !== "v1" || o.kind !== "Secret") return o;
  const { stringData, ...rest } = o;
  const data = { ...rest.data };
  for (const [k, v] of Object.entries(stringData ?? {})) {
    data[k] = encodeBase64(new TextEncoder().encode(String(v)));
  }
  return { ...rest, type: rest.type ?? "Opaque", ...(Object.keys(data).length ? { data } : {}) };
}

/**
 * An object without the fields the API server owns (`resourceVersion`), as canonical JSON: two that compare equal
 * differ by no change.
 */
export function comparable(o: Obj): string {
  const { resourceVersion: _rv, ...metadata } = o.metadata;
  return canonical({ ...o, metadata });
}

/** Everything but metadata and status, as canonical JSON: what bumps `metadata.generation` when it changes. */
export function specOf(o: Obj): string {
  const { metadata: _m, status: _s, ...rest } = o;
  return canonical(rest);
}

/**
 * The in-memory API server of a plan: objects by identity, with the fields the server sets on create
 * (`uid`, `creationTimestamp`, `generation`, `resourceVersion`) set deterministically from `now` and the
 * object's identity, and every change counted.
 */
export class Store {
  readonly #objects = new Map<string, Obj>();
  #rv = 0;
  /** Incremented by every write that changed something: a round of syncs that leaves it alone is a fixed point. */
  changes = 0;

  constructor(readonly resources: Resources, readonly now: string) {}

  /** The type of an object, or `undefined` when the plan does not know its kind. */
  typeOf(o: Pick<Obj, "apiVersion" | "kind">): ResourceType | undefined {
    return this.resources.ofKind(o.apiVersion, o.kind);
  }

  /** One object, or `undefined`. */
  get(type: ResourceType, namespace: string | undefined, name: string): Obj | undefined {
    return this.#objects.get(`${groupOf(type.apiVersion)}/${type.kind}/${namespace ?? ""}/${name}`);
  }

  /** The stored object with the identity of `o`, or `undefined`. */
  find(o: Pick<Obj, "apiVersion" | "kind" | "metadata">): Obj | undefined {
    return this.#objects.get(objectId(o));
  }

  /** Objects of a type (in one namespace when given), sorted by identity. */
  list(type: ResourceType, namespace?: string): Obj[] {
    const prefix = `${groupOf(type.apiVersion)}/${type.kind}/${
      namespace === undefined ? "" : `${namespace}/`
    }`;
    return [...this.#objects].filter(([k]) => k.startsWith(prefix)).sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, o]) => o);
  }

  /** Every object, sorted by identity. */
  all(): Obj[] {
    return [...this.#objects].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, o]) => o);
  }

  /** Stores an object read from a live cluster as it is (a UID is derived when the export lacks one). */
  load(o: Obj): void {
    const obj = structuredClone(o);
    obj.metadata.uid ??= planUid(objectId(obj));
    obj.metadata.resourceVersion ??= String(++this.#rv);
    this.#objects.set(objectId(obj), obj);
  }

  /** Creates an object as the API server would, and returns what is stored. */
  create(o: Obj): Obj {
    const obj = serverDefaults(structuredClone(o));
    const { status: _status, ...rest } = obj;
    const stored: Obj = {
      ...rest,
      metadata: {
        ...obj.metadata,
        uid: planUid(objectId(obj)),
        creationTimestamp: this.now,
        generation: 1,
        resourceVersion: String(++this.#rv),
      },
    };
    this.#objects.set(objectId(stored), stored);
    this.changes++;
    return stored;
  }

  /**
   * Replaces a stored object when it differs (apart from `resourceVersion`); `generation` follows changes outside
   * metadata and status. Returns whether anything changed.
   */
  replace(o: Obj): boolean {
    const id = objectId(o);
    const before = this.#objects.get(id);
    const next = serverDefaults(structuredClone(o));
    if (before && comparable(before) === comparable(next)) return false;
    if (before && specOf(before) !== specOf(next)) {
      next.metadata.generation = (before.metadata.generation ?? 0) + 1;
    }
    next.metadata.resourceVersion = String(++this.#rv);
    this.#objects.set(id, next);
    this.changes++;
    return true;
  }

  /**
   * Deletes an object as the API server does: one with finalizers only gets a `deletionTimestamp` (its
   * controllers' finalize hooks then run); one without is removed.
   */
  delete(o: Pick<Obj, "apiVersion" | "kind" | "metadata">): void {
    const stored = this.find(o);
    if (!stored || stored.metadata.deletionTimestamp) return;
    if ((stored.metadata.finalizers ?? []).length) {
      this.replace({ ...stored, metadata: { ...stored.metadata, deletionTimestamp: this.now } });
    } else {
      this.remove(stored);
    }
  }

  /** Removes an object; returns whether it was there. */
  remove(o: Pick<Obj, "apiVersion" | "kind" | "metadata">): boolean {
    const removed = this.#objects.delete(objectId(o));
    if (removed) this.changes++;
    return removed;
  }
}
