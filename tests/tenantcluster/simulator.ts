/**
 * A tiny in-memory stand-in for the API server plus Metacontroller, enough to drive the TenantCluster,
 * NetworkPool and IPAllocation hooks through the real HTTP routes and apply their answers the way Metacontroller
 * does: composite children created/deleted (IPAllocations never updated: OnDelete; ConfigMaps InPlace), status
 * replaced, decorator labels merged, finalizers honoured (a deleted object with a finalizer only gets a
 * deletionTimestamp until its finalize hook says `finalized`).
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { NOW_HEADER } from "../../lib/http/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;
const API = "butler.butlerlabs.dev/v1alpha1";
const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const mapKey = (
  o: Obj,
) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);

/** Objects keyed as Metacontroller keys a group (`namespace/name`). */
const group = (objs: Obj[]) => Object.fromEntries(objs.map((o) => [mapKey(o), o]));

export class Cluster {
  readonly objects = new Map<string, Obj>();
  readonly app = createTestApp(HOOK_ROUTES).app;
  now = new Date("2026-11-21T09:00:00Z");
  #uid = 0;
  #rv = 0;
  /** Every create and delete Metacontroller performed, for churn checks. */
  readonly writes: string[] = [];

  put(o: Obj): Obj {
    const obj = structuredClone(o);
    obj.metadata.uid ??= `uid-${++this.#uid}`;
    obj.metadata.creationTimestamp ??= formatTime(this.now);
    obj.metadata.generation ??= 1;
    obj.metadata.resourceVersion = String(++this.#rv);
    this.objects.set(key(obj), obj);
    return obj;
  }
  get(kind: string, ns: string | undefined, name: string): Obj | undefined {
    return this.objects.get(`${kind}/${ns ?? ""}/${name}`);
  }
  list(kind: string): Obj[] {
    return [...this.objects.values()].filter((o) => o.kind === kind).sort((
      a,
      b,
    ) => (key(a) < key(b) ? -1 : 1));
  }
  advance(seconds: number): void {
    this.now = new Date(this.now.getTime() + seconds * 1000);
  }
  /** Deletes: with finalizers, marks it; without, removes it. */
  delete(o: Obj): void {
    const cur = this.objects.get(key(o));
    if (!cur) return;
    if (cur.metadata.finalizers?.length) cur.metadata.deletionTimestamp ??= formatTime(this.now);
    else this.objects.delete(key(cur));
  }

  async #post(path: string, body: unknown): Promise<Obj> {
    const res = await this.app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", [NOW_HEADER]: formatTime(this.now) },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    assert.equal(res.status, 200, `${path}: ${text}`);
    return JSON.parse(text);
  }

  /** One TenantCluster sync (or finalize), applied. */
  async syncTenantCluster(ns: string, name: string): Promise<Obj | undefined> {
    const tc = this.get("TenantCluster", ns, name);
    if (!tc) return undefined;
    const deleting = Boolean(tc.metadata.deletionTimestamp);
    if (!deleting) tc.metadata.finalizers = ["metacontroller.io/compositecontroller-butler-tenantcluster"];
    const owned = (kind: string) =>
      this.list(kind).filter((o) => o.metadata.labels?.["controller-uid"] === tc.metadata.uid);
    const related = {
      [`Team.${API}`]: group(this.list("Team")),
      [`ProviderConfig.${API}`]: group(this.list("ProviderConfig")),
      [`NetworkPool.${API}`]: group(this.list("NetworkPool")),
      [`LoadBalancerInventory.${API}`]: group(
        this.list("LoadBalancerInventory").filter((o) => o.metadata.name === name),
      ),
      [`IPAllocation.${API}`]: group(
        this.list("IPAllocation").filter((o) =>
          o.metadata.namespace === ns && o.metadata.labels?.["butler.butlerlabs.dev/tenant"] === name
        ),
      ),
    };
    const res = await this.#post(`/hooks/tenantcluster/${deleting ? "finalize" : "sync"}`, {
      controller: { metadata: { name: "butler-tenantcluster" } },
      parent: tc,
      children: {
        [`IPAllocation.${API}`]: group(owned("IPAllocation")),
        "ConfigMap.v1": group(owned("ConfigMap")),
      },
      related,
      finalizing: deleting,
    });
    tc.status = { ...res.status, observedGeneration: tc.metadata.generation };
    const desired = new Set((res.children as Obj[]).map(key));
    for (const child of res.children as Obj[]) {
      child.metadata.namespace ??= ns;
      const existing = this.objects.get(key(child));
      if (!existing) {
        child.metadata.labels = { ...child.metadata.labels, "controller-uid": tc.metadata.uid };
        this.put(child);
        this.writes.push(`create ${key(child)}`);
      } else if (child.kind === "ConfigMap" && JSON.stringify(existing.data) !== JSON.stringify(child.data)) {
        existing.data = child.data;
        this.writes.push(`update ${key(child)}`);
      }
    }
    for (const kind of ["IPAllocation", "ConfigMap"]) {
      for (const o of owned(kind)) {
        if (!desired.has(key(o)) && !o.metadata.deletionTimestamp) {
          this.delete(o);
          this.writes.push(`delete ${key(o)}`);
        }
      }
    }
    if (deleting && res.finalized) this.objects.delete(key(tc));
    return res;
  }

  /** One NetworkPool sync (decorator; the status write is fenced by resourceVersion). */
  async syncPool(ns: string, name: string, staleStatus?: Obj): Promise<Obj | undefined> {
    const pool = this.get("NetworkPool", ns, name);
    if (!pool) return undefined;
    const deleting = Boolean(pool.metadata.deletionTimestamp);
    const seen = staleStatus
      ? {
        ...pool,
        status: staleStatus.status,
        metadata: { ...pool.metadata, resourceVersion: staleStatus.rv },
      }
      : pool;
    const allocations = this.list("IPAllocation").filter((a) =>
      a.metadata.labels?.["butler.butlerlabs.dev/network-pool"] === name
    );
    const res = await this.#post(`/hooks/networkpool/${deleting ? "finalize" : "sync"}`, {
      controller: { metadata: { name: "butler-networkpool" } },
      object: seen,
      attachments: {},
      related: { [`IPAllocation.${API}`]: Object.fromEntries(allocations.map((a) => [mapKey(a), a])) },
      finalizing: deleting,
    });
    if (seen.metadata.resourceVersion !== pool.metadata.resourceVersion) return res; // 409: dropped
    pool.status = res.status;
    pool.metadata.resourceVersion = String(++this.#rv);
    if (deleting && res.finalized) this.objects.delete(key(pool));
    return res;
  }

  /** One IPAllocation sync or finalize (decorator), for every IPAllocation. */
  async syncAllocations(): Promise<void> {
    for (const a of this.list("IPAllocation")) {
      const deleting = Boolean(a.metadata.deletionTimestamp);
      if (!deleting) a.metadata.finalizers = ["metacontroller.io/decoratorcontroller-butler-ipallocation"];
      const ref = a.spec.poolRef;
      const pool = this.get("NetworkPool", ref.namespace ?? "butler-system", ref.name);
      const res = await this.#post(`/hooks/ipallocation/${deleting ? "finalize" : "sync"}`, {
        controller: { metadata: { name: "butler-ipallocation" } },
        object: a,
        attachments: {},
        related: {
          [`NetworkPool.${API}`]: pool ? { [mapKey(pool)]: pool } : {},
          // The TenantCluster it names, in its own namespace (the IPAllocation customize hook asks for it).
          ...(a.spec.tenantClusterRef?.name && (a.spec.tenantClusterRef.namespace ?? a.metadata.namespace) ===
              a.metadata.namespace
            ? {
              [`TenantCluster.${API}`]: group(
                this.list("TenantCluster").filter((t) =>
                  t.metadata.namespace === a.metadata.namespace &&
                  t.metadata.name === a.spec.tenantClusterRef.name
                ),
              ),
            }
            : {}),
        },
        finalizing: deleting,
      });
      if (res.labels) a.metadata.labels = { ...a.metadata.labels, ...res.labels };
      if (res.status) a.status = res.status;
      if (deleting && res.finalized) this.objects.delete(key(a));
    }
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
