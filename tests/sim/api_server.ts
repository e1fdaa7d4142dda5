/**
 * The simulator's API server: objects with resourceVersions and UIDs that differ per incarnation, optimistic
 * concurrency (a write carrying a `resourceVersion` that is not the stored one is a 409), the status subresource,
 * finalizers and `deletionTimestamp`, namespaces that terminate, background garbage collection, and one watch
 * event per change for the informers.
 *
 * @module
 */
import {
  comparable,
  groupOf,
  type Obj,
  objectId,
  type Resources,
  serverDefaults,
  specOf,
} from "../../lib/plan/mod.ts";

/** An API error as a client sees it. */
export class ApiError extends Error {
  constructor(readonly code: 403 | 404 | 409 | 422, readonly reason: string, message: string) {
    super(message);
  }
}

/** One change, as a watch delivers it. */
export interface WatchEvent {
  readonly type: "ADDED" | "MODIFIED" | "DELETED";
  readonly object: Obj;
}

/** The kind key informers are keyed by: `group/Kind`. */
export function kindKey(o: Pick<Obj, "apiVersion" | "kind">): string {
  return `${groupOf(o.apiVersion)}/${o.kind}`;
}

/** Kinds with the status subresource: ours and Cluster API's. */
const isCustom = (o: Obj) => /^(butler\.butlerlabs\.dev|ipam\.cluster\.x-k8s\.io)\//.test(o.apiVersion);

/** The in-memory API server of a simulation. */
export class ApiServer {
  readonly #objects = new Map<string, Obj>();
  #rv = 0;
  #uids = 0;
  /** Writes that changed something, over the whole run. */
  changes = 0;
  /** Called with every change, in order (the informers' watches). */
  readonly watchers: ((event: WatchEvent) => void)[] = [];

  constructor(readonly resources: Resources, readonly now: () => string) {}

  /** The stored object of an identity (`group/Kind/namespace/name`), as a copy. */
  get(id: string): Obj | undefined {
    const o = this.#objects.get(id);
    return o && structuredClone(o);
  }

  /** The stored object itself (read only: callers must not change it). */
  peek(id: string): Obj | undefined {
    return this.#objects.get(id);
  }

  /** Every stored object (read only), sorted by identity. */
  all(): Obj[] {
    return [...this.#objects.keys()].sort().map((k) => this.#objects.get(k)!);
  }

  /** Stored objects of a kind (read only), sorted by identity. */
  ofKind(apiVersion: string, kind: string): Obj[] {
    const prefix = `${groupOf(apiVersion)}/${kind}/`;
    return this.all().filter((o) => objectId(o).startsWith(prefix));
  }

  #emit(type: WatchEvent["type"], object: Obj): void {
    this.changes++;
    const event = { type, object: structuredClone(object) };
    for (const w of this.watchers) w(event);
  }

  #namespaceOf(o: Obj): Obj | undefined {
    return o.metadata.namespace === undefined
      ? undefined
      : this.#objects.get(`/Namespace//${o.metadata.namespace}`);
  }

  /** Creates an object; 409 when its identity is taken, 404/403 when its namespace is missing or terminating. */
  create(input: Obj): Obj {
    const o = serverDefaults(structuredClone(input));
    const id = objectId(o);
    const type = this.resources.ofKind(o.apiVersion, o.kind);
    if (!type) throw new ApiError(404, "NotFound", `the server does not serve ${o.kind}`);
    if (type.namespaced) {
      const ns = this.#namespaceOf(o);
      if (!ns) throw new ApiError(404, "NotFound", `namespaces "${o.metadata.namespace}" not found`);
      if (ns.metadata.deletionTimestamp) {
        throw new ApiError(
          403,
          "Forbidden",
          `unable to create new content in namespace ${o.metadata.namespace} because it is being terminated`,
        );
      }
    }
    if (this.#objects.has(id)) {
      throw new ApiError(409, "AlreadyExists", `${type.resource} "${o.metadata.name}" already exists`);
    }
    const { status, ...rest } = o;
    const hex = (++this.#uids).toString(16).padStart(12, "0");
    const stored: Obj = {
      ...rest,
      ...(isCustom(o) || status === undefined ? {} : { status }),
      metadata: {
        ...o.metadata,
        uid: `00000000-0000-4000-8000-${hex}`,
        creationTimestamp: this.now(),
        generation: 1,
        resourceVersion: String(++this.#rv),
      },
    };
    delete stored.metadata.deletionTimestamp;
    if (o.kind === "Namespace" && o.apiVersion === "v1") stored.spec = { finalizers: ["kubernetes"] };
    this.#objects.set(id, stored);
    this.#emit("ADDED", stored);
    return structuredClone(stored);
  }

  /**
   * Replaces an object (its status kept, for kinds with the status subresource) or, with `status`, only its status.
   * A `resourceVersion` in the input is a precondition; a UID that is not the stored one is a 409 too.
   */
  update(input: Obj, options: { status?: boolean } = {}): Obj {
    const id = objectId(input);
    const before = this.#objects.get(id);
    if (!before) throw new ApiError(404, "NotFound", `${input.kind} "${input.metadata.name}" not found`);
    const rv = input.metadata.resourceVersion;
    if (
      (rv !== undefined && rv !== before.metadata.resourceVersion) ||
      (input.metadata.uid !== undefined && input.metadata.uid !== before.metadata.uid)
    ) {
      throw new ApiError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${input.kind} "${input.metadata.name}": the object has been modified; please apply your changes to the latest version and try again`,
      );
    }
    const o = serverDefaults(structuredClone(input));
    const next: Obj = options.status
      ? { ...before, status: o.status }
      : { ...o, ...(isCustom(o) ? { status: before.status } : {}) };
    if (next.status === undefined) delete next.status;
    const finalizers: string[] = next.metadata.finalizers ?? [];
    if (!options.status) {
      const old: string[] = before.metadata.finalizers ?? [];
      if (before.metadata.deletionTimestamp && finalizers.some((f) => !old.includes(f))) {
        throw new ApiError(
          422,
          "Invalid",
          "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted",
        );
      }
      next.metadata = {
        ...next.metadata,
        uid: before.metadata.uid,
        creationTimestamp: before.metadata.creationTimestamp,
        generation: before.metadata.generation,
        ...(before.metadata.deletionTimestamp
          ? { deletionTimestamp: before.metadata.deletionTimestamp }
          : {}),
      };
      if (!before.metadata.deletionTimestamp) delete next.metadata.deletionTimestamp;
    } else next.metadata = { ...before.metadata };
    next.metadata.resourceVersion = before.metadata.resourceVersion;
    if (comparable(before) === comparable(next)) return structuredClone(before);
    if (specOf(before) !== specOf(next)) next.metadata.generation = (before.metadata.generation ?? 0) + 1;
    next.metadata.resourceVersion = String(++this.#rv);
    if (next.metadata.deletionTimestamp && !(next.metadata.finalizers ?? []).length && !this.#held(next)) {
      this.#objects.delete(id);
      this.#emit("DELETED", next);
      return structuredClone(next);
    }
    this.#objects.set(id, next);
    this.#emit("MODIFIED", next);
    return structuredClone(next);
  }

  /** Every object gone at once, without events (a fresh control plane; informers relist after it). */
  wipe(): void {
    for (const o of this.#objects.values()) this.#emit("DELETED", o);
    this.#objects.clear();
  }

  /** A namespace stays while it holds anything (the namespace controller empties it first). */
  #held(o: Obj): boolean {
    if (o.kind !== "Namespace" || o.apiVersion !== "v1") return false;
    return (o.spec?.finalizers ?? []).length > 0;
  }

  /**
   * Deletes an object: one with finalizers (or a namespace) gets a `deletionTimestamp`, one without is removed.
   * `uid` is a precondition, as Metacontroller sends it for children.
   */
  delete(id: string, uid?: string): void {
    const stored = this.#objects.get(id);
    if (!stored) throw new ApiError(404, "NotFound", `${id} not found`);
    if (uid !== undefined && uid !== stored.metadata.uid) {
      throw new ApiError(409, "Conflict", `Precondition failed: UID in precondition: ${uid}`);
    }
    if (stored.metadata.deletionTimestamp) return;
    if ((stored.metadata.finalizers ?? []).length || this.#held(stored)) {
      const next = structuredClone(stored);
      next.metadata.deletionTimestamp = this.now();
      if (isCustom(next)) next.metadata.generation = (next.metadata.generation ?? 0) + 1;
      next.metadata.resourceVersion = String(++this.#rv);
      this.#objects.set(id, next);
      this.#emit("MODIFIED", next);
      return;
    }
    this.#objects.delete(id);
    this.#emit("DELETED", stored);
  }

  /**
   * One step of the cluster's own controllers: the garbage collector deletes the first object whose owners are all
   * gone, else the namespace controller deletes what a terminating namespace holds or, once empty, the namespace.
   * Returns whether it did anything.
   */
  housekeep(): boolean {
    const uids = new Set([...this.#objects.values()].map((o) => o.metadata.uid));
    for (const [id, o] of [...this.#objects].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const owners: { uid: string }[] = o.metadata.ownerReferences ?? [];
      if (owners.length && owners.every((r) => !uids.has(r.uid)) && !o.metadata.deletionTimestamp) {
        this.delete(id);
        return true;
      }
    }
    for (const ns of this.ofKind("v1", "Namespace")) {
      if (!ns.metadata.deletionTimestamp) continue;
      const inside = this.all().filter((o) => o.metadata.namespace === ns.metadata.name);
      const live = inside.find((o) => !o.metadata.deletionTimestamp);
      if (live) {
        this.delete(objectId(live));
        return true;
      }
      if (!inside.length) {
        this.#objects.delete(objectId(ns));
        this.#emit("DELETED", ns);
        return true;
      }
    }
    return false;
  }
}
