/**
 * A small world in which the Team and TenantCluster syncs decide quotas with no serialising admission: every
 * create, update, move and owner change a user sends is stored (an unauthenticated webhook writes no ledger, so two
 * reviews decided on the same view both pass), and the controllers alone keep the team within its limits.
 *
 * It drives the real sync functions (pure: they are handed the caches' objects, never copies) as Metacontroller
 * drives their hooks: one informer per kind (TenantClusters,
 * ConfigMaps, Teams), each delivering the API's events in order but as late as the run chooses, and shared by both
 * controllers; a sync reads its parent, children and related objects from them, and its writes may land later,
 * after other actions (a sync in flight). Children are written as Metacontroller writes them: a create fails if the
 * name exists, an update or delete carries the resourceVersion observed (a conflict when stale); status replaces
 * whatever the latest object holds (`AtomicStatusUpdate`). One team, two ProviderConfigs (one allows a team one
 * cluster), environments `dev` (one cluster per member) and `prod` (one cluster).
 *
 * What is in force is read from the stored objects only: a cluster's quota record (its `{tc}-quota` ConfigMap) where
 * it has one, else, once it says `Admitted`, what its status says it was given (`status.effective`) where it stood
 * (environment, owner, provider) when that status was computed.
 *
 * @module
 */
import { customizeTeam, syncTeam } from "../../hooks/team/mod.ts";
import { CHILD_TYPES } from "../../hooks/team/rbac.ts";
import { customizeTenantCluster, syncTenantCluster } from "../../hooks/tenantcluster/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import type { CompositeRequest, CompositeResponse, RelatedResourceRule } from "../../lib/contract/mod.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

const API = "butler.butlerlabs.dev/v1alpha1";
const NS = "team-a";
const SYSTEM = "butler-system";
const ENV = "butler.butlerlabs.dev/environment";
const OWNER = "butler.butlerlabs.dev/owner";
const NOW = new Date("2026-11-27T10:00:00Z");

/** The cluster names a run uses. */
export const NAMES = ["w", "x", "y", "z"] as const;

/** What a user asks a cluster to be. */
export interface Ask {
  readonly env?: "dev" | "prod" | undefined;
  readonly owner: "m1" | "m2";
  readonly provider: "p1" | "p2";
  readonly replicas: number;
  readonly cpu: number;
}

/** The team's limits in a run. */
export interface Limits {
  readonly maxClusters: number;
  readonly maxTotalNodes: number;
  readonly maxCPUCores: number;
}

/** What a cluster uses where it counts. */
export interface InForce {
  readonly name: string;
  readonly env?: string | undefined;
  readonly owner?: string | undefined;
  readonly provider?: string | undefined;
  readonly nodes: number;
  readonly cpu: number;
}

type Informer = "tc" | "cm" | "team";

interface Parked {
  readonly key: string;
  readonly due: number;
  readonly apply: () => void;
}

const key = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
const KIND_OF: Record<string, Informer> = { TenantCluster: "tc", ConfigMap: "cm", Team: "team" };

function provider(name: string, maxClustersPerTeam?: number): Obj {
  return {
    apiVersion: API,
    kind: "ProviderConfig",
    metadata: { name, namespace: SYSTEM, uid: `pc-${name}` },
    spec: {
      provider: "aws",
      credentialsRef: { name: "aws-credentials" },
      aws: { region: "us-east-1", vpcID: "vpc-1", subnetIDs: ["subnet-1"], securityGroupIDs: ["sg-1"] },
      ...(maxClustersPerTeam ? { limits: { maxClustersPerTeam } } : {}),
    },
  };
}

const PROVIDERS = [provider("p1", 1), provider("p2")];

/** The world: the API's objects, the informers' caches and their undelivered events, syncs in flight. */
export class World {
  #rv = 0;
  #uid = 0;
  step = 0;
  readonly objects = new Map<string, Obj>();
  readonly caches: Record<Informer, Map<string, Obj>> = { tc: new Map(), cm: new Map(), team: new Map() };
  readonly events: Record<Informer, { key: string; object: Obj | undefined }[]> = {
    tc: [],
    cm: [],
    team: [],
  };
  /** Where each cluster stood when the status it holds was computed, by UID. */
  readonly acted = new Map<string, { env?: string; owner?: string; provider?: string }>();
  parked: Parked[] = [];
  /** Records written with something newly admitted: a start, or a change that adds to what a cluster has. */
  readonly applied = { starts: 0, changes: 0 };

  constructor(readonly limits: Limits) {
    this.#write({
      apiVersion: API,
      kind: "Team",
      metadata: { name: "a", generation: 1 },
      spec: {
        access: { users: [{ name: "m1@example.com", role: "admin" }] },
        resourceLimits: { ...limits },
        environments: [
          { name: "dev", limits: { maxClustersPerMember: 1 } },
          { name: "prod", limits: { maxClusters: 1 } },
        ],
      },
    });
    this.deliverAll();
  }

  #write(o: Obj | undefined, k = o && key(o)): void {
    if (!k) return;
    if (o) {
      o.metadata.resourceVersion = String(++this.#rv);
      o.metadata.uid ??= `uid-${++this.#uid}`;
      this.objects.set(k, o);
    } else this.objects.delete(k);
    const informer = KIND_OF[k.split("/")[0]!];
    if (informer) this.events[informer].push({ key: k, object: o && structuredClone(o) });
  }

  /** Delivers up to `n` events of one informer to its cache. */
  deliver(informer: Informer, n: number): void {
    for (const e of this.events[informer].splice(0, n)) {
      if (e.object) this.caches[informer].set(e.key, e.object);
      else this.caches[informer].delete(e.key);
    }
  }

  deliverAll(): void {
    for (const i of ["tc", "cm", "team"] as const) this.deliver(i, Infinity);
  }

  /** A user's create or update of a cluster, stored whatever its limits (no ledger serialises it). */
  apply(name: string, ask: Ask): void {
    const k = `TenantCluster/${NS}/${name}`;
    const was = this.objects.get(k);
    const spec = {
      providerConfigRef: { name: ask.provider, namespace: SYSTEM },
      kubernetesVersion: "v1.31.0",
      workers: { replicas: ask.replicas, machineTemplate: { cpu: String(ask.cpu) } },
    };
    const next: Obj = was ? structuredClone(was) : {
      apiVersion: API,
      kind: "TenantCluster",
      metadata: {
        name,
        namespace: NS,
        generation: 0,
        creationTimestamp: `2026-11-27T10:00:0${this.step % 2}Z`,
      },
    };
    next.metadata.labels = ask.env ? { [ENV]: ask.env } : {};
    next.metadata.annotations = { [OWNER]: ask.owner };
    if (JSON.stringify(next.spec) !== JSON.stringify(spec)) next.metadata.generation++;
    next.spec = spec;
    this.#write(next);
  }

  /** A user's delete: the cluster and, by garbage collection, its children go at once. */
  remove(name: string): void {
    const tc = this.objects.get(`TenantCluster/${NS}/${name}`);
    if (!tc) return;
    this.#write(undefined, key(tc));
    for (const [k, o] of this.objects) {
      if (o.metadata.ownerReferences?.some((r: Obj) => r.uid === tc.metadata.uid)) this.#write(undefined, k);
    }
  }

  /** Related objects for a customize answer, from the caches (ProviderConfigs never change). */
  #related(rules: readonly RelatedResourceRule[]): CompositeRequest["related"] {
    const sources: Record<string, { kind: string; apiVersion: string; objects: Obj[] }> = {
      tenantclusters: { kind: "TenantCluster", apiVersion: API, objects: [...this.caches.tc.values()] },
      configmaps: { kind: "ConfigMap", apiVersion: "v1", objects: [...this.caches.cm.values()] },
      teams: { kind: "Team", apiVersion: API, objects: [...this.caches.team.values()] },
      providerconfigs: { kind: "ProviderConfig", apiVersion: API, objects: PROVIDERS },
      networkpools: { kind: "NetworkPool", apiVersion: API, objects: [] },
      loadbalancerinventories: { kind: "LoadBalancerInventory", apiVersion: API, objects: [] },
      ipallocations: { kind: "IPAllocation", apiVersion: API, objects: [] },
    };
    const related: Record<string, Record<string, Obj>> = {};
    for (const rule of rules) {
      const s = sources[rule.resource]!;
      const group = related[`${s.kind}.${rule.apiVersion}`] ??= {};
      for (const o of s.objects) {
        const m = o.metadata;
        if (rule.namespace !== undefined && m.namespace !== rule.namespace) continue;
        if (rule.names && !rule.names.includes(m.name)) continue;
        const labels = rule.labelSelector?.matchLabels ?? {};
        if (Object.entries(labels).some(([k, v]) => m.labels?.[k] !== v)) continue;
        group[m.namespace ? `${m.namespace}/${m.name}` : m.name] = o;
      }
    }
    return related as CompositeRequest["related"];
  }

  #controller = (name: string) => ({
    apiVersion: "metacontroller.k8s.io/v1alpha1",
    kind: "CompositeController",
    metadata: { name },
  });

  #park(k: string, delay: number, apply: () => void): void {
    if (this.parked.some((p) => p.key === k)) return; // Metacontroller syncs one parent at a time
    if (delay === 0) apply();
    else this.parked.push({ key: k, due: this.step + delay, apply });
  }

  /** Applies the writes of syncs in flight that are due; then the garbage collector deletes children of no owner. */
  land(all = false): void {
    const due = this.parked.filter((p) => all || p.due <= this.step);
    this.parked = this.parked.filter((p) => !due.includes(p));
    for (const p of due) p.apply();
    const live = new Set(this.clusters().map((c) => c.metadata.uid));
    for (const [k, o] of this.objects) {
      const owner = o.metadata.ownerReferences?.[0]?.uid;
      if (owner && !live.has(owner)) this.#write(undefined, k);
    }
  }

  /** A TenantCluster sync from the caches; its writes land after `delay` further actions. */
  syncCluster(name: string, delay: number): void {
    const parent = this.caches.tc.get(`TenantCluster/${NS}/${name}`);
    if (!parent) return;
    const uid = parent.metadata.uid;
    const observed = Object.fromEntries(
      [...this.caches.cm.values()]
        .filter((o) => o.metadata.ownerReferences?.some((r: Obj) => r.uid === uid && r.controller))
        .map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]),
    );
    const base = { controller: this.#controller("butler-tenantcluster"), parent };
    const rules = customizeTenantCluster(base as never).relatedResources;
    const request = {
      ...base,
      children: { [`IPAllocation.${API}`]: {}, "ConfigMap.v1": observed },
      related: this.#related(rules),
      finalizing: false,
    } as unknown as CompositeRequest;
    const response = syncTenantCluster(request, { now: NOW, config: DEFAULT_HOOK_CONFIG });
    const stood = {
      env: parent.metadata.labels?.[ENV],
      owner: parent.metadata.annotations?.[OWNER],
      provider: `${SYSTEM}/${parent.spec.providerConfigRef.name}`,
    };
    this.#park(`tc/${name}`, delay, () => {
      this.#writeChildren(parent, observed, response);
      const live = this.objects.get(key(parent));
      if (!live || live.metadata.uid !== uid) return;
      this.acted.set(uid, stood);
      this.#write({ ...structuredClone(live), status: structuredClone(response.status) });
    });
  }

  /** Metacontroller's ManageChildren for the ConfigMaps: create-if-absent, updates and deletes under the observed version. */
  #writeChildren(parent: Obj, observed: Record<string, Obj>, response: CompositeResponse): void {
    const desired = new Map(
      (response.children as Obj[]).filter((c) => c.kind === "ConfigMap").map((c) => [c.metadata.name, c]),
    );
    for (const [name, want] of desired) {
      const seen = observed[`${NS}/${name}`];
      const stored = this.objects.get(`ConfigMap/${NS}/${name}`);
      if (!seen) {
        if (stored) continue; // AlreadyExists
        this.#write({
          ...structuredClone(want),
          metadata: {
            ...structuredClone(want.metadata),
            namespace: NS,
            ownerReferences: [{
              uid: parent.metadata.uid,
              controller: true,
              kind: "TenantCluster",
              name: parent.metadata.name,
            }],
          },
        });
        continue;
      }
      const same = JSON.stringify([seen.data, seen.metadata.labels]) ===
        JSON.stringify([want.data, { ...seen.metadata.labels, ...want.metadata.labels }]);
      if (same || stored?.metadata.resourceVersion !== seen.metadata.resourceVersion) continue; // conflict
      if (want.data?.admitted && want.data.admitted !== seen.data?.admitted) {
        if (!seen.data?.admitted) this.applied.starts++;
        else if (adds(JSON.parse(seen.data.admitted), JSON.parse(want.data.admitted))) this.applied.changes++;
      }
      this.#write({ ...structuredClone(seen), data: structuredClone(want.data) });
    }
    for (const seen of Object.values(observed)) {
      if (desired.has(seen.metadata.name)) continue;
      const stored = this.objects.get(key(seen));
      if (stored?.metadata.resourceVersion === seen.metadata.resourceVersion) {
        this.#write(undefined, key(seen));
      }
    }
  }

  /** A Team sync from the caches; its status lands after `delay` further actions. */
  syncTeam(delay: number): void {
    const parent = this.caches.team.get("Team//a");
    if (!parent) return;
    const base = { controller: this.#controller("butler-team"), parent };
    const request = {
      ...base,
      children: Object.fromEntries(Object.values(CHILD_TYPES).map((t) => [`${t.kind}.${t.apiVersion}`, {}])),
      related: this.#related(customizeTeam(base as never).relatedResources),
      finalizing: false,
    } as unknown as CompositeRequest;
    const response = syncTeam(request, { now: NOW, config: DEFAULT_HOOK_CONFIG });
    this.#park("team", delay, () => {
      const live = this.objects.get("Team//a")!;
      this.#write({ ...structuredClone(live), status: structuredClone(response.status) });
    });
  }

  /** The stored clusters. */
  clusters(): Obj[] {
    return [...this.objects.values()].filter((o) => o.kind === "TenantCluster");
  }

  /** A cluster's quota record as stored, if it has one. */
  record(tc: Obj): Obj | undefined {
    const cm = this.objects.get(`ConfigMap/${NS}/${tc.metadata.name}-quota`);
    return cm?.metadata.ownerReferences?.some((r: Obj) => r.uid === tc.metadata.uid) ? cm : undefined;
  }

  /** What each cluster uses where it counts, read from the stored objects. */
  inForce(): InForce[] {
    return this.clusters().flatMap((tc): InForce[] => {
      const admitted = this.record(tc)?.data?.admitted;
      if (admitted) {
        const a = JSON.parse(admitted);
        const nodes = a.workerCount.value;
        return [{ name: tc.metadata.name, ...where(a), nodes, cpu: nodes * Number(a.workerCPU.value) }];
      }
      const started = (tc.status?.conditions ?? []).some((c: Obj) =>
        c.type === "Admitted" && c.status === "True"
      );
      const e = tc.status?.effective;
      if (!started || !e) return [];
      const nodes = e.workerCount.value;
      return [{
        name: tc.metadata.name,
        ...where(this.acted.get(tc.metadata.uid) ?? {}),
        nodes,
        cpu: nodes * Number(e.workerCPU.value),
      }];
    });
  }

  /** Every limit the clusters in force pass, in words. */
  overLimits(): string[] {
    const used = this.inForce();
    const l = this.limits;
    const over: string[] = [];
    const check = (what: string, n: number, max: number) => n > max && over.push(`${what} ${n} > ${max}`);
    check("clusters", used.length, l.maxClusters);
    check("worker nodes", used.reduce((s, c) => s + c.nodes, 0), l.maxTotalNodes);
    check("CPU", used.reduce((s, c) => s + c.cpu, 0), l.maxCPUCores);
    check("clusters in prod", used.filter((c) => c.env === "prod").length, 1);
    for (const m of ["m1", "m2"]) {
      check(`clusters of ${m} in dev`, used.filter((c) => c.env === "dev" && c.owner === m).length, 1);
    }
    check("clusters on p1", used.filter((c) => c.provider === `${SYSTEM}/p1`).length, 1);
    return over.length ? [...over, JSON.stringify(used)] : [];
  }
}

const where = (a: { env?: string; owner?: string; provider?: string }) => ({
  env: a.env,
  owner: a.owner,
  provider: a.provider,
});

/** Whether a change of what a cluster has adds usage: more nodes or CPU, or another place. */
function adds(from: Obj, to: Obj): boolean {
  const cpu = (a: Obj) => a.workerCount.value * Number(a.workerCPU.value);
  return to.workerCount.value > from.workerCount.value || cpu(to) > cpu(from) || to.env !== from.env ||
    to.owner !== from.owner || to.provider !== from.provider;
}
