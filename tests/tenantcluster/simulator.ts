/**
 * The TenantCluster, NetworkPool and IPAllocation controllers driven one sync at a time, over `plan`'s in-memory
 * API server and its Metacontroller (`lib/plan`: the shipped controllers' rules, customize asked, children
 * claimed by controller reference, created, updated by their rule's method and deleted, status written,
 * finalizers honoured), so the tests and `plan` share one simulator. The tests choose the order of syncs and move
 * the clock (`X-Butler-Now`), and count the creates and deletes Metacontroller performs.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { NOW_HEADER } from "../../lib/http/mod.ts";
import {
  type ControllerSpec,
  controllerSpecs,
  type HookCall,
  installResources,
  type Obj as StoredObject,
  readInstall,
  reconcile,
  type ResourceType,
  Store,
} from "../../lib/plan/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;
const API = "butler.butlerlabs.dev/v1alpha1";
const ROOT = new URL("../../", import.meta.url).pathname;

/** A Store that records every create and delete, for churn checks. */
class RecordingStore extends Store {
  readonly writes: string[] = [];
  override create(o: StoredObject): StoredObject {
    const stored = super.create(o);
    this.writes.push(`create ${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
    return stored;
  }
  override delete(o: Pick<StoredObject, "apiVersion" | "kind" | "metadata">): void {
    const stored = this.find(o);
    if (stored && !stored.metadata.deletionTimestamp) {
      this.writes.push(`delete ${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`);
    }
    super.delete(o);
  }
}

export class Cluster {
  readonly store: RecordingStore;
  readonly #controllers: ReadonlyMap<string, ControllerSpec>;
  readonly #call: HookCall;
  /** The answer of the last sync or finalize call. */
  #answer: Obj | undefined;
  now = new Date("2026-11-21T09:00:00Z");

  constructor() {
    const install = readInstall(ROOT);
    this.store = new RecordingStore(installResources(install), formatTime(this.now));
    this.#controllers = new Map(controllerSpecs(install).map((s) => [s.name, s]));
    const app = createTestApp(HOOK_ROUTES).app;
    this.#call = async (path, body) => {
      const res = await app.request(path, {
        method: "POST",
        headers: { "content-type": "application/json", [NOW_HEADER]: formatTime(this.now) },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const answer = JSON.parse(text);
      if (/\/(sync|finalize)$/.test(path)) this.#answer = answer;
      return { status: res.status, body: answer };
    };
  }

  /** Every create and delete Metacontroller performed. */
  get writes(): readonly string[] {
    return this.store.writes;
  }

  #type(kind: string): ResourceType {
    const type = this.store.resources.ofKind(kind === "ConfigMap" ? "v1" : API, kind);
    assert.ok(type, `unknown kind ${kind}`);
    return type;
  }

  /** Stores an object as given (status included), as if read from a cluster. */
  put(o: Obj): Obj {
    const obj = structuredClone(o);
    obj.metadata.creationTimestamp ??= formatTime(this.now);
    obj.metadata.generation ??= 1;
    this.store.load(obj as StoredObject);
    return this.store.find(obj as StoredObject)!;
  }
  get(kind: string, ns: string | undefined, name: string): Obj | undefined {
    return this.store.get(this.#type(kind), ns, name);
  }
  list(kind: string): Obj[] {
    return this.store.list(this.#type(kind));
  }
  advance(seconds: number): void {
    this.now = new Date(this.now.getTime() + seconds * 1000);
  }
  /** Deletes: with finalizers, marks it; without, removes it. */
  delete(o: Obj): void {
    this.store.delete(o as StoredObject);
  }
  /** Forgets an object without deleting it, as a cache that has not seen it yet. */
  forget(o: Obj): void {
    this.store.remove(o as StoredObject);
  }

  /** One sync (or finalize) of a parent as Metacontroller applies it; the hook's answer. */
  async #sync(controller: string, parent: Obj | undefined): Promise<Obj | undefined> {
    if (!parent) return undefined;
    this.#answer = undefined;
    const result = await reconcile(
      this.store,
      this.#controllers.get(controller)!,
      parent as StoredObject,
      this.#call,
    );
    assert.equal(result.error, undefined, `${controller}: ${result.error}`);
    return this.#answer;
  }

  /** One TenantCluster sync (or finalize), applied; the hook's answer. */
  syncTenantCluster(ns: string, name: string): Promise<Obj | undefined> {
    return this.#sync("butler-tenantcluster", this.get("TenantCluster", ns, name));
  }

  /** One NetworkPool sync (or finalize), applied; the hook's answer. */
  syncPool(ns: string, name: string): Promise<Obj | undefined> {
    return this.#sync("butler-networkpool", this.get("NetworkPool", ns, name));
  }

  /** One IPAllocation sync or finalize, for every IPAllocation. */
  async syncAllocations(): Promise<void> {
    for (const a of this.list("IPAllocation")) await this.#sync("butler-ipallocation", a);
  }

  /** Every controller once, in the order events would usually flow. */
  async round(tcNs: string, tcName: string, pool: [string, string]): Promise<void> {
    await this.syncTenantCluster(tcNs, tcName);
    await this.syncAllocations();
    await this.syncPool(...pool);
    await this.syncAllocations();
    await this.syncTenantCluster(tcNs, tcName);
  }
}

export const API_VERSION = API;
