/**
 * The simulator's Metacontroller (v4.17.2, docs/simulation.md#metacontroller-as-the-simulator-assumes-it states each assumption with its
 * source): one informer per kind fed by watch events the simulation delivers one at a time (so caches lag, and
 * events of different kinds interleave as the simulation chooses), a work queue of parent keys per controller
 * (duplicates merged, order chosen by the simulation), the customize cache by parent UID and generation, and a sync
 * that reads the caches and writes to the API server as `syncParentObject` does for composite and decorator
 * controllers.
 *
 * @module
 */
import {
  type ControllerSpec,
  groupOf,
  type HookCall,
  matchesSelector,
  type Obj,
  objectId,
  ownedChild,
  updatedInPlace,
} from "../../lib/plan/mod.ts";
import { objectKey, type RelatedResourceRule } from "../../lib/contract/mod.ts";
import { ApiError, type ApiServer, kindKey, type WatchEvent } from "./api_server.ts";

/** One kind's informer: its cache and the events not yet delivered. */
interface Informer {
  readonly cache: Map<string, Obj>;
  pending: WatchEvent[];
  last?: WatchEvent;
}

/** What a fault does to one sync. */
export type SyncFault = "none" | "hook-error" | "hook-timeout" | "write-lost" | "conflict";

/** The outcome of one sync, for the simulation's checks. */
export interface SyncOutcome {
  readonly controller: string;
  readonly parent: string;
  readonly error?: string;
  /** Observed children the hook's 200 answer left out (Metacontroller deletes them), as observed. */
  readonly dropped: readonly Obj[];
  readonly deleting: boolean;
  /** The parent's UID and generation as the hook saw it. */
  readonly uid?: string;
  readonly generation?: number;
}

/** The annotation Metacontroller puts on a decorator's attachments, naming the controller. */
const DECORATOR = "metacontroller.k8s.io/decorator-controller";

const controllerRefOf = (o: Obj) =>
  (o.metadata.ownerReferences ?? []).find((r: { controller?: boolean }) => r.controller === true);

/** A simulated Metacontroller over a simulated API server. */
export class Metacontroller {
  readonly #informers = new Map<string, Informer>();
  /** Parent keys waiting, per controller: `controller\tparentId`, in arrival order. */
  readonly queue = new Set<string>();
  /** Delayed enqueues (resyncAfterSeconds, periodic resync), by due time in ms. */
  timers: { at: number; key: string }[] = [];
  readonly #customize = new Map<string, RelatedResourceRule[]>();
  readonly #kinds: Map<string, { apiVersion: string; kind: string }>;
  #lastPeriodic = 0;

  constructor(
    readonly api: ApiServer,
    readonly controllers: readonly ControllerSpec[],
    readonly clock: () => number,
  ) {
    this.#kinds = new Map();
    const add = (apiVersion: string, resource: string) => {
      const t = api.resources.ofResource(groupOf(apiVersion), resource);
      if (!t) throw new Error(`unknown resource ${resource}`);
      this.#kinds.set(kindKey(t), t);
    };
    for (const c of controllers) {
      for (const p of c.parents) add(p.apiVersion, p.resource);
      for (const r of c.children) add(r.apiVersion, r.resource);
    }
    for (
      const t of [
        "NetworkPool",
        "ProviderConfig",
        "Team",
        "TenantCluster",
        "LoadBalancerInventory",
        "IPAllocation",
      ]
    ) {
      const type = api.resources.ofKind("butler.butlerlabs.dev/v1alpha1", t);
      if (type) this.#kinds.set(kindKey(type), type);
    }
    const secret = api.resources.ofKind("v1", "Secret")!;
    this.#kinds.set(kindKey(secret), secret);
    for (const k of this.#kinds.keys()) this.#informers.set(k, { cache: new Map(), pending: [] });
    api.watchers.push((e) => this.#informers.get(kindKey(e.object))?.pending.push(e));
    this.restart();
  }

  /** Informers with events waiting, by kind key (sorted). */
  lagging(): string[] {
    return [...this.#informers].filter(([, i]) => i.pending.length).map(([k]) => k).sort();
  }

  /** Events not yet delivered, over all informers. */
  behind(): number {
    let n = 0;
    for (const i of this.#informers.values()) n += i.pending.length;
    return n;
  }

  /** Metacontroller (re)starting: caches listed afresh, queues and the customize cache emptied, every parent queued. */
  restart(): void {
    for (const [k, inf] of this.#informers) {
      inf.cache.clear();
      inf.pending = [];
      delete inf.last;
      const t = this.#kinds.get(k)!;
      for (const o of this.api.ofKind(t.apiVersion, t.kind)) inf.cache.set(objectId(o), structuredClone(o));
    }
    this.queue.clear();
    this.timers = [];
    this.#customize.clear();
    this.#lastPeriodic = this.clock();
    this.enqueueAll();
  }

  /** Every parent of every controller queued (a relist, or the quiet phase's full pass). */
  enqueueAll(): void {
    for (const c of this.controllers) {
      for (const p of c.parents) {
        const t = this.api.resources.ofResource(groupOf(p.apiVersion), p.resource)!;
        for (const id of [...this.#informers.get(kindKey(t))!.cache.keys()].sort()) {
          this.queue.add(`${c.name}\t${id}`);
        }
      }
    }
  }

  /** Delivers the next event of one informer (`duplicate`: delivers its last event again). */
  deliver(kind: string, duplicate = false): void {
    const inf = this.#informers.get(kind)!;
    const event = duplicate ? inf.last : inf.pending.shift();
    if (!event) return;
    inf.last = event;
    const id = objectId(event.object);
    if (event.type === "DELETED") inf.cache.delete(id);
    else inf.cache.set(id, event.object);
    this.#route(event.object);
  }

  /** The parents an event concerns, queued: the object itself, its controller, the parents whose related rules select it. */
  #route(o: Obj): void {
    const kind = kindKey(o);
    for (const c of this.controllers) {
      const parentKinds = c.parents.map((p) =>
        kindKey(this.api.resources.ofResource(groupOf(p.apiVersion), p.resource)!)
      );
      if (parentKinds.includes(kind)) this.queue.add(`${c.name}\t${objectId(o)}`);
      const ref = controllerRefOf(o);
      if (
        ref &&
        c.children.some((r) =>
          kindKey(this.api.resources.ofResource(groupOf(r.apiVersion), r.resource)!) === kind
        )
      ) {
        for (const pk of parentKinds) {
          for (const [pid, p] of this.#informers.get(pk)!.cache) {
            if (p.metadata.uid === ref.uid) this.queue.add(`${c.name}\t${pid}`);
          }
        }
      }
    }
    for (const [key, rules] of this.#customize) {
      const [name, , parentId] = key.split("\t");
      if (rules.some((r) => this.#selects(r, o))) this.queue.add(`${name}\t${parentId}`);
    }
  }

  #selects(rule: RelatedResourceRule, o: Obj): boolean {
    const t = this.api.resources.ofResource(groupOf(rule.apiVersion), rule.resource);
    if (!t || kindKey(t) !== kindKey(o)) return false;
    if (rule.namespace !== undefined && o.metadata.namespace !== rule.namespace) return false;
    if (rule.names) return rule.names.includes(o.metadata.name);
    return matchesSelector(o.metadata.labels, rule.labelSelector);
  }

  #related(rules: readonly RelatedResourceRule[]): Record<string, Record<string, Obj>> {
    const related: Record<string, Record<string, Obj>> = {};
    for (const rule of rules) {
      const t = this.api.resources.ofResource(groupOf(rule.apiVersion), rule.resource)!;
      const group = related[`${t.kind}.${rule.apiVersion}`] ??= {};
      for (const o of this.#informers.get(kindKey(t))!.cache.values()) {
        if (this.#selects(rule, o)) group[objectKey(o)] = o;
      }
    }
    return related;
  }

  /** Moves due timers into the queue, and queues every parent of a controller with a resync period each period. */
  tick(): void {
    const now = this.clock();
    const due = this.timers.filter((t) => t.at <= now);
    this.timers = this.timers.filter((t) => t.at > now);
    for (const t of due) this.queue.add(t.key);
    if (now - this.#lastPeriodic >= 60_000) {
      this.#lastPeriodic = now;
      for (const c of this.controllers) {
        const period = c.object.spec?.resyncPeriodSeconds;
        if (!period) continue;
        for (const p of c.parents) {
          const t = this.api.resources.ofResource(groupOf(p.apiVersion), p.resource)!;
          for (const id of this.#informers.get(kindKey(t))!.cache.keys()) this.queue.add(`${c.name}\t${id}`);
        }
      }
    }
  }

  /** Takes one queued key and syncs it; a failed sync is queued again (rate limited: at the back). */
  async syncOne(key: string, call: HookCall, fault: SyncFault, cut: number): Promise<SyncOutcome> {
    this.queue.delete(key);
    const [name, id] = key.split("\t") as [string, string];
    const spec = this.controllers.find((c) => c.name === name)!;
    const parent = this.#informers.get(id.split("/").slice(0, 2).join("/"))!.cache.get(id);
    const none = { controller: name, parent: id, dropped: [], deleting: false };
    if (!parent) return none;
    let writes = 0;
    const write = <T>(f: () => T): T => {
      if (fault === "write-lost" && writes >= cut) throw new LostWrite();
      writes++;
      return f();
    };
    try {
      const outcome = await this.#sync(spec, structuredClone(parent), call, fault, write);
      if (outcome.error) this.queue.add(key);
      return outcome;
    } catch (e) {
      this.queue.add(key);
      if (e instanceof LostWrite || e instanceof ApiError) return { ...none, error: e.message };
      throw e;
    }
  }

  async #sync(
    spec: ControllerSpec,
    cached: Obj,
    call: HookCall,
    fault: SyncFault,
    write: <T>(f: () => T) => T,
  ): Promise<SyncOutcome> {
    const id = objectId(cached);
    const deleting = Boolean(cached.metadata.deletionTimestamp);
    const base = {
      controller: spec.name,
      parent: id,
      dropped: [] as Obj[],
      deleting,
      uid: cached.metadata.uid as string,
      generation: cached.metadata.generation as number,
    };
    const finalizer = `metacontroller.io/${
      spec.type === "composite" ? "composite" : "decorator"
    }controller-${spec.name}`;
    let parent = cached;
    if (spec.hooks.finalize && !deleting && !(parent.metadata.finalizers ?? []).includes(finalizer)) {
      parent = write(() =>
        this.#atomic(id, parent.metadata.uid, (o) => {
          o.metadata.finalizers = [...(o.metadata.finalizers ?? []), finalizer];
        })
      );
    }
    const hookFault = (path: string, body: unknown) =>
      fault === "hook-error"
        ? Promise.resolve({ status: 500, body: { error: "simulated hook failure" } })
        : fault === "hook-timeout"
        ? Promise.resolve({ status: 504, body: { error: "context deadline exceeded" } })
        : call(path, body);

    const observed = [...this.#observed(spec, parent), ...this.#adopt(spec, parent, write)]
      .sort((a, b) => (objectId(a) < objectId(b) ? -1 : 1));
    let related: Record<string, Record<string, Obj>> = {};
    if (spec.hooks.customize) {
      const ckey = `${spec.name}\t${parent.metadata.uid}/${parent.metadata.generation}\t${id}`;
      let rules = this.#customize.get(ckey);
      if (!rules) {
        const answer = await hookFault(spec.hooks.customize, { controller: spec.object, parent });
        if (answer.status !== 200) return { ...base, error: `customize hook failed (HTTP ${answer.status})` };
        rules = answer.body.relatedResources as RelatedResourceRule[];
        for (const k of [...this.#customize.keys()]) if (k.endsWith(`\t${id}`)) this.#customize.delete(k);
        this.#customize.set(ckey, rules);
      }
      related = this.#related(rules);
    }
    const groups: Record<string, Record<string, Obj>> = Object.fromEntries(
      spec.children.map((
        r,
      ) => [`${this.api.resources.ofResource(groupOf(r.apiVersion), r.resource)!.kind}.${r.apiVersion}`, {}]),
    );
    for (const o of observed) groups[`${o.kind}.${o.apiVersion}`]![objectKey(o)] = o;
    const hook = deleting ? spec.hooks.finalize ?? spec.hooks.sync : spec.hooks.sync;
    const body = spec.type === "composite"
      ? { controller: spec.object, parent, children: groups, related, finalizing: deleting }
      : { controller: spec.object, object: parent, attachments: groups, related, finalizing: deleting };
    const answer = await hookFault(hook, body);
    if (answer.status !== 200) return { ...base, error: `sync hook failed (HTTP ${answer.status})` };
    const res = answer.body;
    if (res.resyncAfterSeconds > 0) {
      this.timers.push({ at: this.clock() + res.resyncAfterSeconds * 1000, key: `${spec.name}\t${id}` });
    }
    if (fault === "conflict") this.#touch(id);
    const desired: Obj[] = (spec.type === "composite" ? res.children : res.attachments) ?? [];
    const wanted = new Set(
      desired.map((d) =>
        objectId({
          ...d,
          metadata: { ...d.metadata, namespace: d.metadata.namespace ?? parent.metadata.namespace },
        })
      ),
    );
    const dropped = observed.filter((o) => !wanted.has(objectId(o)));
    const outcome = { ...base, dropped };
    return spec.type === "composite"
      ? this.#applyComposite(spec, parent, observed, desired, res, finalizer, write, outcome)
      : this.#applyDecorator(spec, parent, observed, desired, res, finalizer, write, outcome);
  }

  /** Someone else writes the parent between the hook's read and Metacontroller's write (the conflict fault). */
  #touch(id: string): void {
    const o = this.api.get(id);
    if (!o) return;
    o.metadata.labels = { ...o.metadata.labels, "sim.butler.test/touched": String(this.api.changes) };
    this.api.update(o);
  }

  /** A read-modify-write of the live object (client-go's retry on conflict), stopped when its UID changed. */
  #atomic(id: string, uid: string, change: (o: Obj) => void, status = false): Obj {
    const o = this.api.get(id);
    if (!o || o.metadata.uid !== uid) throw new ApiError(404, "NotFound", `${id} not found`);
    change(o);
    return this.api.update(o, { status });
  }

  /**
   * Orphans of a composite's child kinds that match its selector (`controller-uid=<parent UID>` with
   * `generateSelector`), adopted: an owner reference added to the live object, as `claimChildren` does (not while
   * the parent or the orphan is being deleted).
   */
  #adopt(spec: ControllerSpec, parent: Obj, write: <T>(f: () => T) => T): Obj[] {
    if (spec.type !== "composite" || !spec.generateSelector || parent.metadata.deletionTimestamp) return [];
    const out: Obj[] = [];
    for (const r of spec.children) {
      const t = this.api.resources.ofResource(groupOf(r.apiVersion), r.resource)!;
      for (const o of this.#informers.get(kindKey(t))!.cache.values()) {
        if (t.namespaced && parent.metadata.namespace && o.metadata.namespace !== parent.metadata.namespace) {
          continue;
        }
        if (controllerRefOf(o) || o.metadata.deletionTimestamp) continue;
        if (o.metadata.labels?.["controller-uid"] !== parent.metadata.uid) continue;
        const ref = {
          apiVersion: parent.apiVersion,
          kind: parent.kind,
          name: parent.metadata.name,
          uid: parent.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        };
        const adopted = write(() =>
          this.#atomic(objectId(o), o.metadata.uid, (live) => {
            if (controllerRefOf(live)) return;
            live.metadata.ownerReferences = [...(live.metadata.ownerReferences ?? []), ref];
          })
        );
        if (controllerRefOf(adopted)?.uid === parent.metadata.uid) out.push(adopted);
      }
    }
    return out;
  }

  #observed(spec: ControllerSpec, parent: Obj): Obj[] {
    const out: Obj[] = [];
    for (const r of spec.children) {
      const t = this.api.resources.ofResource(groupOf(r.apiVersion), r.resource)!;
      for (const o of this.#informers.get(kindKey(t))!.cache.values()) {
        if (t.namespaced && parent.metadata.namespace && o.metadata.namespace !== parent.metadata.namespace) {
          continue;
        }
        if (controllerRefOf(o)?.uid !== parent.metadata.uid) continue;
        if (spec.type === "decorator" && o.metadata.annotations?.[DECORATOR] !== spec.name) continue;
        out.push(o);
      }
    }
    return out.sort((a, b) => (objectId(a) < objectId(b) ? -1 : 1));
  }

  #applyComposite(
    spec: ControllerSpec,
    parent: Obj,
    observed: readonly Obj[],
    desired: readonly Obj[],
    // deno-lint-ignore no-explicit-any
    res: any,
    finalizer: string,
    write: <T>(f: () => T) => T,
    outcome: SyncOutcome,
  ): SyncOutcome {
    const id = objectId(parent);
    if (res.finalized && parent.metadata.deletionTimestamp) {
      write(() =>
        this.#atomic(id, parent.metadata.uid, (o) => {
          o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f: string) => f !== finalizer);
        })
      );
    }
    const errors: string[] = [];
    if (!parent.metadata.deletionTimestamp || spec.hooks.finalize) {
      this.#manageChildren(spec, parent, observed, desired, write, errors);
    }
    try {
      write(() =>
        this.#atomic(id, parent.metadata.uid, (o) => {
          o.status = { ...(res.status ?? {}), observedGeneration: parent.metadata.generation };
        }, true)
      );
    } catch (e) {
      if (!(e instanceof ApiError && e.code === 404)) throw e;
    }
    return errors.length ? { ...outcome, error: errors.join("; ") } : outcome;
  }

  #manageChildren(
    spec: ControllerSpec,
    parent: Obj,
    observed: readonly Obj[],
    desired: readonly Obj[],
    write: <T>(f: () => T) => T,
    errors: string[],
  ): void {
    const byId = new Map(observed.map((o) => [objectId(o), o]));
    const wanted = new Set<string>();
    const prepared = desired.map((d) => ownedChild(spec, parent, d));
    for (const child of prepared) wanted.add(objectId(child));
    for (const o of observed) {
      if (o.metadata.deletionTimestamp || wanted.has(objectId(o))) continue;
      try {
        write(() => this.api.delete(objectId(o), o.metadata.uid));
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 404) {
          errors.push(`can't delete ${objectId(o)}: ${(e as Error).message}`);
        }
      }
    }
    for (const child of prepared) {
      const seen = byId.get(objectId(child));
      const rule = spec.children.find((r) =>
        r.apiVersion === child.apiVersion &&
        this.api.resources.ofResource(groupOf(r.apiVersion), r.resource)!.kind === child.kind
      );
      if (!rule) {
        errors.push(`${objectId(child)} is not a declared child`);
        continue;
      }
      try {
        if (!seen) {
          write(() => this.api.create(child));
        } else if (rule.method === "OnDelete" || seen.metadata.deletionTimestamp) {
          continue;
        } else if (rule.method === "Recreate" || rule.method === "RollingRecreate") {
          const { metadata: _m, status: _s, ...a } = seen;
          const { metadata: _n, status: _t, ...b } = child;
          if (JSON.stringify(a) !== JSON.stringify(b)) {
            write(() => this.api.delete(objectId(seen), seen.metadata.uid));
          }
        } else {
          write(() => this.api.update(updatedInPlace(seen, child)));
        }
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
        if (e.code === 409 || e.code === 404) continue;
        errors.push(`can't apply ${objectId(child)}: ${e.message}`);
      }
    }
  }

  #applyDecorator(
    spec: ControllerSpec,
    parent: Obj,
    observed: readonly Obj[],
    desired: readonly Obj[],
    // deno-lint-ignore no-explicit-any
    res: any,
    finalizer: string,
    write: <T>(f: () => T) => T,
    outcome: SyncOutcome,
  ): SyncOutcome {
    const next = structuredClone(parent);
    const status = res.status == null ? parent.status : res.status;
    let labelsChanged = false;
    for (const field of ["labels", "annotations"] as const) {
      const merged = { ...next.metadata[field] };
      for (const [k, v] of Object.entries(res[field] ?? {})) {
        if (v === null ? k in merged : merged[k] !== v) labelsChanged = true;
        v === null ? delete merged[k] : (merged[k] = v);
      }
      next.metadata[field] = merged;
    }
    const statusChanged = JSON.stringify(status ?? null) !== JSON.stringify(parent.status ?? null);
    const removing = Boolean(res.finalized) && (parent.metadata.finalizers ?? []).includes(finalizer);
    const errors: string[] = [];
    const attach = () => {
      if (spec.children.length) this.#manageChildren(spec, parent, observed, desired, write, errors);
      return errors.length ? { ...outcome, error: errors.join("; ") } : outcome;
    };
    if (!labelsChanged && !statusChanged && !removing) return attach();
    try {
      if (statusChanged) {
        const written = write(() => this.api.update({ ...next, status }, { status: true }));
        next.metadata.resourceVersion = written.metadata.resourceVersion;
      }
      if (res.finalized) {
        next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f: string) => f !== finalizer);
      }
      if (labelsChanged || removing) write(() => this.api.update(next));
    } catch (e) {
      if (e instanceof ApiError && (e.code === 409 || e.code === 404)) return outcome;
      throw e;
    }
    return attach();
  }
}

/** A write the simulation dropped (the connection went after the hook answered). */
class LostWrite extends Error {
  constructor() {
    super("simulated: the write was lost (connection reset)");
  }
}
