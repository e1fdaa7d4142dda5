/**
 * One simulated run: a list of operations (each a kind and two random numbers, resolved against the state when it
 * runs, so that any sub-list is a run too) applied to the simulated API server, Metacontroller and the real hook
 * service, with the invariants checked after every operation, then a quiet phase without faults that must
 * converge. Deterministic: the same operations give byte-identical results.
 *
 * @module
 */
import { adoptions, CHILD_KINDS, keyOf, type Listed, type Parents } from "../../cli/adopt.ts";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { createApp, type RouteRegistrar } from "../../lib/http/mod.ts";
import { KubeApiError, type KubeClient } from "../../lib/kube/mod.ts";
import {
  admit,
  apiPath,
  appCaller,
  BUILTIN_RESOURCES,
  canonical,
  controllerSpecs,
  crdResources,
  groupOf,
  type HookCall,
  matchesSelector,
  type Obj,
  objectId,
  readInstall,
  type Refusal,
  Resources,
  webhookSpecs,
} from "../../lib/plan/mod.ts";
import { parseAllDocuments } from "yaml";
import { admissionPolicies, crdKinds, judge, type ManifestObject } from "../../lib/schema/mod.ts";
import { fnv1a32 } from "../../lib/hash/mod.ts";
import {
  CHECKPOINT_ANNOTATION,
  GRANT_ANNOTATION,
  LEDGER_SEEN_ANNOTATION,
  parseGrantRecord,
} from "../../lib/api/mod.ts";
import { formatAddress } from "../../lib/ipam/mod.ts";
import { ApiError, ApiServer, type WatchEvent } from "./api_server.ts";
import { Invariants, type Violation } from "./invariants.ts";
import { Metacontroller, type SyncFault } from "./metacontroller.ts";
import { rng } from "./rng.ts";
import type { Action } from "./scenario.ts";
import * as w from "./workload.ts";

/** One operation: its kind (an index into {@linkcode OP_KINDS}) and two random 32-bit numbers. */
export type Op = readonly [kind: number, a: number, b: number];

/** The kinds of operation, with their weights in a generated run. */
export const OP_KINDS = [
  ["deliver", 34],
  ["sync", 30],
  ["user", 14],
  ["housekeep", 4],
  ["tick", 5],
  ["duplicate-event", 2],
  ["metacontroller-restart", 0.25],
  ["service-restart", 0.25],
  ["finalizer-removed", 0.4],
  ["recreate", 0.6],
  ["clock-jump", 0.4],
  ["webhook-down", 0.4],
  ["webhook-slow", 0.6],
  ["unreadable-parent", 0.3],
  ["status-lost", 0.4],
  ["restored", 0.08],
] as const;

export type OpKind = typeof OP_KINDS[number][0];

const TOTAL_WEIGHT = OP_KINDS.reduce((s, [, weight]) => s + weight, 0);

/** `n` operations from a seed. */
export function generateOps(seed: number, n: number): Op[] {
  const r = rng(seed);
  const ops: Op[] = [];
  for (let i = 0; i < n; i++) {
    let pick = (r.next() / 2 ** 32) * TOTAL_WEIGHT;
    let kind = 0;
    while (pick >= OP_KINDS[kind]![1]) pick -= OP_KINDS[kind++]![1];
    ops.push([kind, r.next(), r.next()]);
  }
  return ops;
}

/** How a run went. Everything in it follows from the operations (no timings), so a replay gives the same bytes. */
export interface SimResult {
  readonly ops: number;
  /** Steps of the quiet phase (deliveries, syncs, housekeeping) after the operations. */
  readonly quietSteps: number;
  readonly syncs: number;
  readonly hookCalls: number;
  readonly admitted: number;
  readonly refused: number;
  /** Faults injected, by kind. */
  readonly faults: Readonly<Record<string, number>>;
  readonly violation?: Violation;
  /** A hash of every object at the end and of the run's counts. */
  readonly digest: string;
}

/** What a run is given besides its operations. */
export interface SimOptions {
  /** Routes registered before the shipped ones (a test plants a bug this way). */
  readonly routes?: readonly RouteRegistrar[];
  /** Full passes of the quiet phase before it is called not converging. */
  readonly quietPasses?: number;
  /** Called with a line for each user write, fault and sync (what a failing trace did, for people). */
  readonly log?: (line: string) => void;
  /** Called with every change the API server makes, with the operation's number (for people debugging a trace). */
  readonly watch?: (step: number, event: WatchEvent) => void;
  /** Called with every object at the end (tests look at what the run built). */
  readonly end?: (objects: readonly Obj[]) => void;
  /** `empty`: no pools, providers or teams to start with (a scenario brings its own). */
  readonly world?: "default" | "empty";
  /**
   * The base install: admission cannot authenticate the API server, so it writes no quota ledger and reviews decided
   * on one view all pass; the controllers hold quotas. The quota invariant then reads what is in force (the
   * clusters' quota records), and the teams keep the limits they were made with.
   */
  readonly unauthenticated?: boolean;
}

const START = Date.parse("2026-11-27T00:00:00Z");
/** The limits every team has without a ledger (`w.team`'s choice 1): two clusters, three nodes, tight caps. */
const FIXED_LIMITS = 1;
const ROOT = new URL("../../", import.meta.url).pathname;
/** The base install and the Cluster API IPAM component (its claim controller). */
const INSTALL = [
  ...readInstall(ROOT),
  ...parseAllDocuments(
    Deno.readTextFileSync(`${ROOT}manifests/components/cluster-api-ipam/decoratorcontroller.yaml`),
  )
    .map((d) => d.toJS() as Obj),
];
/** Cluster API's IPAM kinds, whose CRDs Cluster API installs. */
const CAPI_TYPES = [["IPAddressClaim", "ipaddressclaims"], ["IPAddress", "ipaddresses"]].map((
  [kind, resource],
) => ({
  apiVersion: w.CAPI_IPAM,
  kind: kind!,
  resource: resource!,
  namespaced: true,
}));
const RESOURCES = new Resources([
  ...BUILTIN_RESOURCES,
  ...crdResources(INSTALL.filter((m) => m.kind === "CustomResourceDefinition")),
  ...CAPI_TYPES,
]);
const CONTROLLERS = controllerSpecs(INSTALL);
const WEBHOOKS = webhookSpecs(INSTALL);
const KINDS = crdKinds(INSTALL);
const POLICIES = admissionPolicies(INSTALL);

/** Runs operations to their end (or the first violation), then the quiet phase. */
export async function simulate(ops: readonly Op[], options: SimOptions = {}): Promise<SimResult> {
  const sim = new Simulation(options);
  await sim.setUp();
  let done = 0;
  for (const op of ops) {
    await sim.run(op);
    done++;
    const v = sim.check(done);
    if (v) return sim.result(done, v);
  }
  const quiet = await sim.quiet(options.quietPasses ?? 40, done);
  options.end?.(sim.api.all());
  return sim.result(done, quiet);
}

class Simulation {
  clockMs = START;
  readonly api = new ApiServer(RESOURCES, () => new Date(this.clockMs).toISOString().replace(".000Z", "Z"));
  readonly mc: Metacontroller;
  readonly invariants = new Invariants();
  call!: HookCall;
  webhookDownUntil = 0;
  /** Unauthenticated: the TenantClusters admission's cache holds (it catches up at each tick). */
  admissionView: readonly Obj[] = [];
  webhookSlowNext = false;
  step = 0;
  quietSteps = 0;
  syncs = 0;
  hookCalls = 0;
  admitted = 0;
  refused = 0;
  readonly faults: Record<string, number> = {};
  /** The status of every object at the last status fault: what a rollback restores. */
  statusCopies = new Map<string, unknown>();

  constructor(readonly options: SimOptions) {
    if (options.watch) this.api.watchers.push((e) => options.watch!(this.step, e));
    this.mc = new Metacontroller(this.api, CONTROLLERS, () => this.clockMs);
    this.startService();
  }

  fault(kind: string): void {
    this.options.log?.(`#${this.step} fault ${kind}`);
    this.faults[kind] = (this.faults[kind] ?? 0) + 1;
  }

  /** The hook service (again): a restart loses whatever it kept in memory. */
  startService(): void {
    const service = createApp({
      bodyLimitBytes: 64 * 1024 * 1024,
      clockOverride: false,
      hookConfig: DEFAULT_HOOK_CONFIG,
      routes: [...(this.options.routes ?? []), ...HOOK_ROUTES],
      clock: () => new Date(this.clockMs),
      log: () => {},
      // Unauthenticated, admission decides on its watch cache, which may lag: here it catches up at each tick, so
      // the reviews between two ticks are decided on one view.
      kube: simKube(this.api, this.options.unauthenticated ? () => this.admissionView : undefined),
      admissionWrites: !this.options.unauthenticated,
    });
    const call = appCaller(service.app);
    this.call = (path, body) => {
      this.hookCalls++;
      return call(path, body);
    };
  }

  async setUp(): Promise<void> {
    for (const ns of ["default", "kube-system", "butler-system", w.CAPI_NAMESPACE]) {
      this.api.create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    }
    if (this.options.world === "empty") return;
    this.api.create(w.credentials());
    for (const [i, p] of ["p0", "p1", "nodes"].entries()) await this.apply(w.pool(p, i));
    for (const p of w.PROVIDERS) await this.apply(w.provider(p));
    for (const t of w.TEAMS.slice(0, 2)) {
      await this.apply(w.team(t, this.options.unauthenticated ? FIXED_LIMITS : 7));
    }
    await this.drain(20_000);
    this.mc.restart();
    await this.drain(20_000);
    this.invariants.observe(this.api, this.clockMs);
  }

  /** The webhook route, as the API server reaches it: down, slow (answered after its deadline) or up. */
  webhookCall(): HookCall {
    return async (path, body) => {
      if (this.step < this.webhookDownUntil) {
        return { status: 503, body: { error: "connect: connection refused" } };
      }
      const answer = await this.call(path, body);
      if (this.webhookSlowNext) {
        this.webhookSlowNext = false;
        return { status: 504, body: { error: "context deadline exceeded" } };
      }
      return answer;
    };
  }

  /** A user's create or update, admitted as the API server admits it. Returns the refusal, if any. */
  async apply(input: Obj): Promise<Refusal | undefined> {
    const type = RESOURCES.ofKind(input.apiVersion, input.kind)!;
    const existing = this.api.get(objectId(input));
    let next: Obj = existing
      ? {
        ...existing,
        ...input,
        metadata: {
          ...existing.metadata,
          ...input.metadata,
          // kubectl apply keeps what the server added that the manifest never named: Butler's records.
          annotations: {
            ...Object.fromEntries(
              Object.entries(existing.metadata.annotations ?? {}).filter(([k]) => RECORD_KEYS.includes(k)),
            ),
            ...(input.metadata.annotations ?? existing.metadata.annotations ?? {}),
          },
        },
        status: existing.status,
      }
      : structuredClone(input);
    if (!next.status) delete next.status;
    const namespace = type.namespaced ? this.api.get(`/Namespace//${input.metadata.namespace}`) : undefined;
    const refuse = (r: Refusal) => {
      this.refused++;
      return r;
    };
    if (type.namespaced && !namespace) {
      return refuse({ by: "API server", message: `namespaces "${input.metadata.namespace}" not found` });
    }
    // Cluster API's own webhook (validation.ipaddressclaim.ipam.cluster.x-k8s.io) keeps a claim's spec as created.
    if (existing?.kind === "IPAddressClaim" && canonical(existing.spec) !== canonical(next.spec)) {
      return refuse({
        by: "webhook validation.ipaddressclaim.ipam.cluster.x-k8s.io",
        message: "spec: Forbidden: the spec of IPAddressClaim is immutable",
      });
    }
    const own = KINDS.get(`${input.apiVersion}/${input.kind}`);
    if (own) {
      const verdict = judge(KINDS, next as ManifestObject, existing as ManifestObject | undefined);
      if (!verdict.ok) return refuse({ by: "schema", message: verdict.message });
      next = verdict.object as Obj;
    }
    const refusal = await admit(
      POLICIES,
      WEBHOOKS,
      {
        type,
        op: existing ? "UPDATE" : "CREATE",
        object: next,
        oldObject: existing,
        namespace,
        ...(own ? { schema: own.schema } : {}),
      },
      this.webhookCall(),
      { dryRun: false },
    );
    if (refusal) {
      this.options.log?.(
        `#${this.step} ${existing ? "update" : "create"} ${objectId(next)}: refused by ${refusal.by}: ${
          refusal.message.slice(0, 300)
        }`,
      );
      return refuse(refusal);
    }
    try {
      const stored = existing ? this.api.update(next) : this.api.create(next);
      this.options.log?.(
        `#${this.step} ${existing ? "update" : "create"} ${objectId(next)} ${
          JSON.stringify({
            labels: next.metadata.labels,
            annotations: next.metadata.annotations,
            spec: next.spec,
          })
        }`,
      );
      this.admitted++;
      if (stored.kind === "TenantCluster" && !this.options.unauthenticated) {
        this.invariants.admittedCluster(this.api, stored, existing);
      }
      return undefined;
    } catch (e) {
      if (e instanceof ApiError) return refuse({ by: "API server", message: e.message });
      throw e;
    }
  }

  /** A user's delete: the DELETE webhooks asked first (failurePolicy as configured), then the API server. */
  async remove(id: string): Promise<void> {
    const stored = this.api.get(id);
    if (!stored) return;
    const type = RESOURCES.ofKind(stored.apiVersion, stored.kind)!;
    const group = groupOf(stored.apiVersion);
    const version = stored.apiVersion.slice(group ? group.length + 1 : 0);
    for (const hook of WEBHOOKS) {
      const matches = hook.rules.some((r) =>
        r.apiGroups.includes(group) && r.operations.includes("DELETE") && r.resources.includes(type.resource)
      );
      if (!matches) continue;
      const answer = await this.webhookCall()(hook.path, {
        apiVersion: "admission.k8s.io/v1",
        kind: "AdmissionReview",
        request: {
          uid: `delete-${this.step}`,
          kind: { group, version, kind: type.kind },
          resource: { group, version, resource: type.resource },
          name: stored.metadata.name,
          ...(stored.metadata.namespace ? { namespace: stored.metadata.namespace } : {}),
          operation: "DELETE",
          userInfo: { username: "sim-user", groups: ["system:authenticated"] },
          object: null,
          oldObject: stored,
          dryRun: false,
        },
      });
      if (answer.status !== 200) {
        if (hook.failurePolicy === "Ignore") continue;
        this.refused++;
        return;
      }
      if (!answer.body.response?.allowed) {
        this.refused++;
        return;
      }
    }
    this.options.log?.(`#${this.step} delete ${id}`);
    this.api.delete(id);
  }

  async run([kind, a, b]: Op): Promise<void> {
    this.step++;
    const name = OP_KINDS[kind]![0] as OpKind;
    switch (name) {
      case "deliver": {
        const lagging = this.mc.lagging();
        if (lagging.length) this.mc.deliver(lagging[a % lagging.length]!);
        return;
      }
      case "duplicate-event": {
        const kinds = this.mc.lagging();
        if (kinds.length) {
          this.fault(name);
          this.mc.deliver(kinds[a % kinds.length]!, true);
        }
        return;
      }
      case "sync":
        return await this.syncOp(a, b);
      case "user":
        return await this.userOp(a, b);
      case "housekeep":
        this.api.housekeep();
        return;
      case "tick":
        this.clockMs += 1000 * (1 + (a % 30));
        this.mc.tick();
        this.admissionView = this.api.ofKind("butler.butlerlabs.dev/v1alpha1", "TenantCluster").map((o) =>
          structuredClone(o)
        );
        return;
      case "clock-jump":
        this.fault(name);
        this.clockMs += 1000 * [300, 660, 3600][a % 3]!;
        this.mc.tick();
        return;
      case "metacontroller-restart":
        this.fault(name);
        this.mc.restart();
        return;
      case "service-restart":
        this.fault(name);
        this.startService();
        return;
      case "webhook-down":
        this.fault(name);
        this.webhookDownUntil = this.step + 1 + (a % 40);
        return;
      case "webhook-slow":
        this.fault(name);
        this.webhookSlowNext = true;
        return;
      case "finalizer-removed":
        return this.stripFinalizers(a);
      case "recreate":
        return await this.recreate(a, b);
      case "unreadable-parent":
        return this.corrupt(a);
      case "status-lost":
        return this.loseStatus(a, b);
      case "restored":
        return b % 4 === 0 ? this.restore(b % 8 === 0) : this.restorePartially(a);
    }
  }

  async syncOp(a: number, b: number): Promise<void> {
    const keys = [...this.mc.queue];
    if (!keys.length) return;
    const roll = b % 100;
    const fault: SyncFault = roll < 2
      ? "hook-error"
      : roll < 4
      ? "hook-timeout"
      : roll < 7
      ? "write-lost"
      : roll < 10
      ? "conflict"
      : "none";
    if (fault !== "none") this.fault(fault);
    await this.sync(keys[a % keys.length]!, fault, (b >>> 8) % 4);
  }

  async sync(key: string, fault: SyncFault, cut: number): Promise<void> {
    this.syncs++;
    const outcome = await this.mc.syncOne(key, this.call, fault, cut);
    this.options.log?.(
      `#${this.step} sync ${key.replace("\t", " ")}${fault === "none" ? "" : ` (${fault})`}${
        outcome.error ? `: ${outcome.error.slice(0, 200)}` : ""
      }${
        outcome.dropped.length
          ? ` dropped ${outcome.dropped.map(objectId).join(", ")}; ${
            JSON.stringify(this.api.peek(outcome.parent)?.status ?? {})
          }`
          : ""
      }`,
    );
    this.invariants.synced(this.api, outcome);
  }

  async userOp(a: number, b: number): Promise<void> {
    const team = w.TEAMS[b % 3]!;
    const ns = `team-${team}`;
    const cluster = w.CLUSTERS[(b >>> 2) % 4]!;
    // Without a ledger, half the writes scale (or create) clusters: the races the controllers must hold.
    switch (this.options.unauthenticated && a % 2 ? 4 : a % 13) {
      case 0:
        await this.apply(w.team(team, this.teamLimits(b)));
        return;
      case 1: {
        const t = this.api.get(`butler.butlerlabs.dev/Team//${team}`);
        if (t) await this.apply({ ...t, spec: w.team(team, this.teamLimits(b)).spec });
        return;
      }
      case 2:
        if ((b >>> 10) % 4 === 0) await this.remove(`butler.butlerlabs.dev/Team//${team}`);
        return;
      case 3:
        await this.apply(w.tenantCluster(ns, cluster, b >>> 4));
        return;
      case 4: {
        // Scaled: the same cluster (labels and owner kept, which the policies guard) with another worker count.
        const c = this.api.get(`butler.butlerlabs.dev/TenantCluster/${ns}/${cluster}`);
        if (!c) await this.apply(w.tenantCluster(ns, cluster, b >>> 4));
        else await this.apply({ ...c, spec: { ...c.spec, workers: { replicas: 1 + ((b >>> 9) % 3) } } });
        return;
      }
      case 5:
        return this.migrate(ns, cluster);
      case 6:
        await this.remove(`butler.butlerlabs.dev/TenantCluster/${ns}/${cluster}`);
        return;
      case 7:
      case 8: {
        const c = this.api.get(`butler.butlerlabs.dev/TenantCluster/${ns}/${cluster}`);
        if (!c) return;
        const services = (b >>> 8) % 5;
        await this.apply(w.inventory(c, services, Math.min(services, (b >>> 11) % 3), this.api.now()));
        return;
      }
      case 9:
        if ((b >>> 12) % 2) await this.apply(w.handAllocation(ns, b >>> 4));
        else await this.remove(`butler.butlerlabs.dev/IPAllocation/${ns}/hand-${(b >>> 12) % 3}`);
        return;
      case 10: {
        const p = w.POOLS[(b >>> 4) % 4]!;
        await this.apply(w.pool(p, b >>> 6, (b >>> 8) % 2 === 1));
        return;
      }
      case 11: {
        const p = w.POOLS[(b >>> 4) % 4]!;
        if ((b >>> 10) % 3 === 0) {
          await this.remove(`butler.butlerlabs.dev/NetworkPool/${w.poolNamespace(p)}/${p}`);
        }
        return;
      }
      case 12:
        if ((b >>> 12) % 3) await this.apply(w.claim(b >>> 4));
        else {await this.remove(
            `ipam.cluster.x-k8s.io/IPAddressClaim/${w.CAPI_NAMESPACE}/node-${(b >>> 4) % 4}`,
          );}
        return;
    }
  }

  /** The limits of a team a user writes: chosen by `b`, or (unauthenticated) those every team starts with. */
  teamLimits(b: number): number {
    return this.options.unauthenticated ? FIXED_LIMITS : b >>> 4;
  }

  /** An environment migration: the label moved with the migration annotation set, then the annotation removed. */
  async migrate(ns: string, name: string): Promise<void> {
    const c = this.api.get(`butler.butlerlabs.dev/TenantCluster/${ns}/${name}`);
    if (!c || c.metadata.deletionTimestamp) return;
    const env = c.metadata.labels?.["butler.butlerlabs.dev/environment"] === "dev" ? "prod" : "dev";
    const key = "butler.butlerlabs.dev/migration-operation";
    const moved = await this.apply({
      ...c,
      metadata: {
        ...c.metadata,
        labels: { ...c.metadata.labels, "butler.butlerlabs.dev/environment": env },
        annotations: { ...c.metadata.annotations, [key]: "true" },
      },
    });
    const after = this.api.get(objectId(c));
    if (moved || !after) return;
    const annotations = { ...after.metadata.annotations };
    delete annotations[key];
    await this.apply({ ...after, metadata: { ...after.metadata, annotations } });
  }

  /** Someone removes every finalizer of an object that has some (by hand, past admission's reach). */
  stripFinalizers(a: number): void {
    const held = this.api.all().filter((o) =>
      o.apiVersion.startsWith("butler.") && (o.metadata.finalizers ?? []).length
    );
    if (!held.length) return;
    this.fault("finalizer-removed");
    const o = structuredClone(held[a % held.length]!);
    o.metadata.finalizers = [];
    delete o.metadata.resourceVersion;
    this.api.update(o);
  }

  /**
   * A Team or TenantCluster stored with a spec no hook can read (written before a schema tightened, or by hand
   * past admission): its hooks must fail, or keep every child.
   */
  corrupt(a: number): void {
    const parents = this.api.all().filter((o) =>
      (o.kind === "TenantCluster" || o.kind === "Team") && !o.metadata.deletionTimestamp
    );
    if (!parents.length) return;
    this.fault("unreadable-parent");
    const o = structuredClone(parents[a % parents.length]!);
    if (o.kind === "Team") o.spec.resourceLimits = { ...o.spec.resourceLimits, maxClusters: "lots" };
    else o.spec.workers = { ...o.spec.workers, replicas: "many" };
    delete o.metadata.resourceVersion;
    this.invariants.corrupted(this.api.update(o));
  }

  /** An object deleted and created again under the same name at once (a new UID), as GitOps tools do. */
  async recreate(a: number, b: number): Promise<void> {
    const kinds = ["TenantCluster", "IPAllocation", "NetworkPool", "LoadBalancerInventory", "IPAddressClaim"];
    const objects = this.api.all().filter((o) => kinds.includes(o.kind) && !o.metadata.deletionTimestamp);
    if (!objects.length) return;
    this.fault("recreate");
    const o = objects[a % objects.length]!;
    const { status: _s, ...rest } = structuredClone(o);
    const { name, namespace, labels } = rest.metadata;
    // Applied again from its source (Git): what Butler recorded on it is not in it.
    const annotations = Object.fromEntries(
      Object.entries(rest.metadata.annotations ?? {}).filter(([k]) => !RECORD_KEYS.includes(k)),
    );
    await this.remove(objectId(o));
    if (b % 2) this.api.housekeep();
    await this.apply({ ...rest, metadata: { name, namespace, labels, annotations } } as Obj);
  }

  /**
   * Status lost: one object's or every object's status emptied, or rolled back to the copy kept at the last such
   * fault (a script, a tool that drops status, a restore of one object), through the status subresource.
   */
  loseStatus(a: number, b: number): void {
    const objects = this.api.all().filter((o) => STATUS_KINDS.includes(o.kind) && o.status !== undefined);
    if (!objects.length) return;
    const all = b % 2 === 1;
    const rollback = (b >>> 1) % 2 === 1;
    this.fault(`status-${rollback ? "rolled-back" : "emptied"}-${all ? "all" : "one"}`);
    for (const o of all ? objects : [objects[a % objects.length]!]) {
      const old = this.statusCopies.get(o.metadata.uid);
      const status = rollback && old !== undefined ? structuredClone(old) : {};
      const { resourceVersion: _rv, ...metadata } = o.metadata;
      this.api.update({ ...structuredClone(o), metadata, status }, { status: true });
    }
    this.statusCopies = new Map(this.api.all().map((o) => [o.metadata.uid, structuredClone(o.status)]));
    // A nightly backup, as an operator keeps: what a later restore into the same cluster reads.
    this.backup ??= this.api.all().map((o) => structuredClone(o));
  }

  /**
   * Restored from a backup into a fresh control plane, as Velero restores (pkg/restore/restore.go,
   * resetMetadataAndStatus): every object recreated with a new UID, without owner references, resourceVersion,
   * generation, timestamps or (unless `withStatus`) status, in Velero's order (namespaces, RBAC, Secrets and
   * ConfigMaps first), while Metacontroller is stopped; then the step docs/operations.md gives (each Butler child's
   * `controller-uid` label set to its parent's new UID, so Metacontroller adopts it), and Metacontroller started.
   */
  restore(withStatus: boolean): void {
    this.fault(`restored-${withStatus ? "with" : "without"}-status`);
    const backup = this.api.all().map((o) => structuredClone(o));
    this.api.wipe();
    const rank = (o: Obj) => {
      const i = VELERO_ORDER.indexOf(o.kind);
      return i < 0 ? VELERO_ORDER.length : i;
    };
    const ordered = backup.map((o, i) => ({ o, i })).sort((x, y) => rank(x.o) - rank(y.o) || x.i - y.i);
    for (const { o } of ordered) {
      const {
        uid: _u,
        resourceVersion: _r,
        generation: _g,
        creationTimestamp: _c,
        deletionTimestamp: _d,
        ownerReferences: _o,
        ...metadata
      } = o.metadata;
      const { status, ...rest } = o;
      try {
        const created = this.api.create({ ...rest, metadata } as Obj);
        if (withStatus && status !== undefined && isButler(o)) {
          this.api.update({ ...created, status }, { status: true });
        }
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
      }
    }
    relabelRestoredChildren(this.api);
    this.mc.restart();
  }

  /** A backup (taken at a status fault, or by {@linkcode restorePartially}), until a restore reads it. */
  backup: Obj[] | undefined;

  /**
   * docs/operations.md, restore into the same cluster after a loss: without a backup, one is taken (every
   * object, as Velero keeps it); with one, the objects of one namespace of it that no longer exist are restored
   * (Velero skips those that exist), with new UIDs and without status, beside everything made since, Metacontroller
   * running; then `kubectl butler adopt`. A restored record whose addresses were granted to another since must
   * not be served.
   */
  restorePartially(a: number, only?: string): void {
    if (!this.backup) {
      this.fault("backup-taken");
      this.backup = this.api.all().map((o) => structuredClone(o));
      return;
    }
    const backup = this.backup;
    this.backup = undefined;
    const existing = new Set(
      this.api.all().map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`),
    );
    // A namespace something of which was lost since the backup (a restore of an intact one restores nothing), one
    // that lost a recorded grant first: the restore this fault is here for.
    // (A team's namespace only while its Team exists: a restore of one namespace brings no cluster-scoped Team.)
    const teamGone = (ns: string) => {
      const team = /^team-(.+)$/.exec(ns)?.[1];
      return team !== undefined && !this.api.peek(`butler.butlerlabs.dev/Team//${team}`);
    };
    // (A team's namespace: the claims' namespace restored beside its claims is a question of its own.)
    const lost = backup.filter((o) =>
      o.metadata.namespace?.startsWith("team-") && !teamGone(o.metadata.namespace) &&
      !existing.has(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)
    );
    const recorded = lost.filter((o) =>
      o.kind === "IPAllocation" && o.metadata.annotations?.[GRANT_ANNOTATION]
    );
    const namespaces = [...new Set((recorded.length ? recorded : lost).map((o) => o.metadata.namespace!))]
      .sort();
    const ns = only ?? namespaces[a % Math.max(1, namespaces.length)];
    if (ns === undefined) return;
    this.fault("restored-partially");
    const rank = (o: Obj) => {
      const i = VELERO_ORDER.indexOf(o.kind);
      return i < 0 ? VELERO_ORDER.length : i;
    };
    const chosen = backup.filter((o) =>
      o.metadata.namespace === ns && !existing.has(`${o.kind}/${ns}/${o.metadata.name}`)
    );
    for (const o of chosen.sort((x, y) => rank(x) - rank(y))) {
      const {
        uid: _u,
        resourceVersion: _r,
        generation: _g,
        creationTimestamp: _c,
        deletionTimestamp: _d,
        ownerReferences: _o,
        ...metadata
      } = o.metadata;
      const { status: _s, ...rest } = o;
      try {
        const created = this.api.create({ ...rest, metadata } as Obj);
        if (created.kind === "IPAllocation") {
          this.invariants.restoredBeside.add(created.metadata.uid as string);
        }
      } catch (e) {
        if (!(e instanceof ApiError)) throw e;
      }
    }
    relabelRestoredChildren(this.api);
  }

  check(done: number): Violation | undefined {
    if (this.options.unauthenticated) this.invariants.inForce(this.api);
    return this.invariants.observe(this.api, this.clockMs, done);
  }

  /** Everything pending done in a fixed order: events delivered, housekeeping, the queue synced, first to last. */
  async drain(limit: number): Promise<boolean> {
    for (let n = 0; n < limit; n++) {
      this.quietSteps++;
      const lagging = this.mc.lagging();
      if (lagging.length) {
        this.mc.deliver(lagging[0]!);
        continue;
      }
      if (this.api.housekeep()) continue;
      const first = this.mc.queue.values().next();
      if (first.done) return true;
      await this.sync(first.value, "none", 0);
    }
    return false;
  }

  /**
   * Faults stop: the webhook is back, and every parent is synced pass after pass (two minutes apart, so that
   * cooldowns and delayed resyncs come due) until a pass after the tenth minute changes nothing.
   */
  async quiet(passes: number, done: number): Promise<Violation | undefined> {
    this.webhookDownUntil = 0;
    this.webhookSlowNext = false;
    const started = this.clockMs;
    for (let pass = 0; pass < passes; pass++) {
      const before = this.api.changes;
      if (!await this.drain(50_000)) break;
      const v = this.check(done);
      if (v) return v;
      if (this.api.changes === before && this.clockMs - started > 12 * 60_000) {
        return this.invariants.settled(this.api, done);
      }
      this.clockMs += 120_000;
      this.mc.tick();
      this.mc.enqueueAll();
    }
    return { step: done, invariant: "convergence", message: `no fixed point after ${passes} quiet passes` };
  }

  result(done: number, violation: Violation | undefined): SimResult {
    const counts = {
      ops: done,
      quietSteps: this.quietSteps,
      syncs: this.syncs,
      hookCalls: this.hookCalls,
      admitted: this.admitted,
      refused: this.refused,
      faults: Object.fromEntries(Object.entries(this.faults).sort()),
    };
    const state = canonical({ objects: this.api.all(), counts });
    const digest = [0x811c9dc5, 0x01000193].map((s) => fnv1a32(state, s).toString(16).padStart(8, "0")).join(
      "",
    );
    return { ...counts, ...(violation ? { violation } : {}), digest };
  }
}

/** What Butler records in metadata: never in a manifest applied from Git. */
const RECORD_KEYS = [GRANT_ANNOTATION, LEDGER_SEEN_ANNOTATION, CHECKPOINT_ANNOTATION];

/** Kinds whose status a fault may lose: every Butler kind with a status, and Cluster API's claims. */
const STATUS_KINDS = [
  "Team",
  "TenantCluster",
  "NetworkPool",
  "IPAllocation",
  "ProviderConfig",
  "IPAddressClaim",
];
/** Velero's restore order for the kinds the simulator stores (its defaultRestorePriorities); the rest after. */
const VELERO_ORDER = [
  "Namespace",
  "ClusterRole",
  "Role",
  "ClusterRoleBinding",
  "RoleBinding",
  "Secret",
  "ConfigMap",
  "LimitRange",
];

function isButler(o: Obj): boolean {
  return o.apiVersion.startsWith("butler.butlerlabs.dev/") ||
    o.apiVersion.startsWith("ipam.cluster.x-k8s.io/");
}

/**
 * The post-restore step of docs/operations.md, `kubectl butler adopt`, by its own code (cli/adopt.ts): each orphaned
 * child of Butler's controllers given back to the parent its labels name (a composite's child relabelled with its
 * parent's new UID, so that Metacontroller adopts it; a claim's IPAllocation and IPAddress given their claim as
 * controller).
 */
export function relabelRestoredChildren(api: ApiServer): void {
  const all = api.all() as unknown as Listed[];
  const keyed = (kind: string) =>
    new Map(all.filter((o) => (o as unknown as Obj).kind === kind).map((o) => [keyOf(o), o]));
  const parents: Parents = {
    Team: keyed("Team"),
    TenantCluster: keyed("TenantCluster"),
    IPAddressClaim: keyed("IPAddressClaim"),
  };
  for (const child of CHILD_KINDS) {
    const objects = all.filter((o) => {
      const x = o as unknown as Obj;
      return x.kind === child.kind && x.apiVersion === child.apiVersion;
    });
    for (const a of adoptions(child, objects, parents)) {
      const next = structuredClone(a.object) as Obj;
      delete next.metadata.resourceVersion;
      api.update(next);
    }
  }
}

/** What a scenario did in the simulator: each write's refusal (or `undefined`), and the state at the end. */
export interface ScenarioRun {
  readonly refusals: readonly (string | undefined)[];
  /** Every object once the write before converged, write by write. */
  readonly after: readonly (readonly Obj[])[];
}

/**
 * Runs a scenario's writes one at a time, each followed by convergence (events delivered, the queue synced, the
 * cluster's own controllers run, until a full pass changes nothing), without faults: what the real controller tier
 * does with the same writes (`tests/e2e/sim_replay.e2e.ts`).
 */
export async function replayScenario(actions: readonly Action[]): Promise<ScenarioRun> {
  const sim = new Simulation({ world: "empty" });
  await sim.setUp();
  const refusals: (string | undefined)[] = [];
  const after: Obj[][] = [];
  for (const action of actions) {
    sim.step++;
    if ("apply" in action) {
      refusals.push((await sim.apply(action.apply))?.message);
    } else {
      const { kind, namespace, name } = action.delete;
      await sim.remove(`${RESOURCES_BY_KIND.get(kind)}/${kind}/${namespace ?? ""}/${name}`);
      refusals.push(undefined);
    }
    for (let pass = 0; pass < 10; pass++) {
      const before = sim.api.changes;
      await sim.drain(50_000);
      sim.mc.enqueueAll();
      await sim.drain(50_000);
      if (sim.api.changes === before) break;
    }
    after.push(structuredClone(sim.api.all()));
  }
  return { refusals, after };
}

/** The faults of {@linkcode durabilityRun}. */
export type DurabilityFault =
  | "status-emptied-all"
  | "status-emptied-each"
  | "status-rolled-back-all"
  | "restored-with-status"
  | "restored-without-status";

/** What each IPAllocation holds (`namespace/name` → `first-last`), from the grant it records, else its status. */
export function heldRanges(objects: readonly Obj[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of objects) {
    if (o.kind !== "IPAllocation") continue;
    const r = parseGrantRecord(o.metadata.annotations?.[GRANT_ANNOTATION]);
    const text = r
      ? `${formatAddress(r.family, r.range.start)}-${formatAddress(r.family, r.range.end)}`
      : o.status?.phase === "Allocated"
      ? `${o.status.startAddress}-${o.status.endAddress}`
      : undefined;
    if (text) out.set(`${o.metadata.namespace}/${o.metadata.name}`, text);
  }
  return out;
}

/**
 * Tenants built and settled (then one of the first deleted, so that the survivors' ranges are not simply the
 * lowest and the pool has a gap), then one fault, then settled again: what each IPAllocation held before and after, and the first
 * invariant broken on the way.
 */
export async function durabilityRun(fault: DurabilityFault): Promise<{
  before: Map<string, string>;
  after: Map<string, string>;
  violation?: Violation;
}> {
  const sim = new Simulation({});
  await sim.setUp();
  const settle = async () => {
    for (let pass = 0; pass < 12; pass++) {
      const before = sim.api.changes;
      await sim.drain(50_000);
      sim.clockMs += 120_000;
      sim.mc.tick();
      sim.mc.enqueueAll();
      await sim.drain(50_000);
      const v = sim.check(sim.step);
      if (v) return v;
      if (sim.api.changes === before) break;
    }
    return undefined;
  };
  const clusters: [string, string, number][] = [
    ["team-t0", "c0", 1],
    ["team-t0", "c1", 4],
    ["team-t1", "c0", 1],
    ["team-t0", "c2", 13],
    ["team-t1", "c1", 4],
    ["team-t0", "c3", 16],
    ["team-t1", "c2", 16],
  ];
  for (const [ns, name, b] of clusters) {
    sim.step++;
    await sim.apply(w.tenantCluster(ns, name, b));
    const v = await settle();
    if (v) return { before: new Map(), after: new Map(), violation: v };
  }
  await sim.remove("butler.butlerlabs.dev/TenantCluster/team-t0/c1");
  await settle();
  const before = heldRanges(sim.api.all());
  sim.step++;
  if (fault === "status-emptied-all") sim.loseStatus(0, 1);
  else if (fault === "status-rolled-back-all") {
    sim.statusCopies = new Map();
    sim.loseStatus(0, 3);
  } else if (fault === "status-emptied-each") {
    const n = sim.api.all().filter((o) => STATUS_KINDS.includes(o.kind) && o.status !== undefined).length;
    for (let i = 0; i < n; i++) {
      sim.loseStatus(i, 0);
      await sim.drain(50_000);
    }
  } else sim.restore(fault === "restored-with-status");
  const violation = await settle();
  return { before, after: heldRanges(sim.api.all()), ...(violation ? { violation } : {}) };
}

/**
 * docs/operations.md's restore into the same cluster after a loss, the reviewer's path of issue #56: tenants built,
 * a backup taken, one team's TenantCluster deleted (the pool drops its grants, no cooldown), a new tenant granted
 * those addresses, then the team's namespace restored beside it. What each IPAllocation holds after, its phase, and
 * the first invariant broken (a refused record served as a grant is `granted-twice`).
 */
export async function partialRestoreRun(): Promise<{
  violation?: Violation;
  phases: Map<string, string>;
  held: Map<string, string>;
}> {
  const sim = new Simulation({});
  await sim.setUp();
  const settle = async () => {
    for (let pass = 0; pass < 12; pass++) {
      const before = sim.api.changes;
      await sim.drain(50_000);
      sim.clockMs += 120_000;
      sim.mc.tick();
      sim.mc.enqueueAll();
      await sim.drain(50_000);
      const v = sim.check(sim.step);
      if (v) return v;
      if (sim.api.changes === before) break;
    }
    return undefined;
  };
  const phases = () =>
    new Map(
      sim.api.all().filter((o) => o.kind === "IPAllocation").map((o) => [
        `${o.metadata.namespace}/${o.metadata.name}`,
        String(o.status?.phase),
      ]),
    );
  const steps: (() => Promise<void> | void)[] = [
    () => sim.apply(w.tenantCluster("team-t0", "c0", 1)),
    () => sim.apply(w.tenantCluster("team-t1", "c0", 1)),
    () => sim.apply(w.tenantCluster("team-t0", "c1", 4)),
    () => sim.restorePartially(0),
    () => sim.remove("butler.butlerlabs.dev/TenantCluster/team-t1/c0"),
    () => sim.apply(w.tenantCluster("team-t0", "c9", 1)),
    () => sim.restorePartially(0, "team-t1"),
  ];
  for (const step of steps) {
    sim.step++;
    await step();
    const violation = await settle();
    if (violation) return { violation, phases: phases(), held: heldRanges(sim.api.all()) };
  }
  return { phases: phases(), held: heldRanges(sim.api.all()) };
}

/** The API group of each kind a scenario deletes. */
const RESOURCES_BY_KIND = new Map([
  ["Team", "butler.butlerlabs.dev"],
  ["TenantCluster", "butler.butlerlabs.dev"],
  ["IPAllocation", "butler.butlerlabs.dev"],
  ["NetworkPool", "butler.butlerlabs.dev"],
  ["ProviderConfig", "butler.butlerlabs.dev"],
  ["Secret", ""],
]);

/** The webhook's API client over the simulated API server: reads, and writes with their preconditions. */
function simKube(
  api: ApiServer,
  lagging?: (type: { apiVersion: string; kind: string }) => readonly Obj[],
): KubeClient {
  const typeOf = (path: string) => {
    const p = apiPath(path);
    const type = p && api.resources.ofResource(p.group, p.resource);
    if (!p || !type) throw new Error(`sim: ${path} is not served`);
    return { p, type };
  };
  return {
    get(path: string) {
      const { p, type } = typeOf(path);
      const id = `${type.apiVersion.includes("/") ? type.apiVersion.split("/")[0] : ""}/${type.kind}/${
        p.namespace ?? ""
      }/${p.name}`;
      return Promise.resolve(api.get(id));
    },
    list(path: string, options: { labelSelector?: string } = {}) {
      const { p, type } = typeOf(path);
      const selector = Object.fromEntries(
        (options.labelSelector ?? "").split(",").filter(Boolean).map((t) =>
          t.split(/==?/) as [string, string]
        ),
      );
      const items = lagging && type.kind === "TenantCluster"
        ? lagging(type)
        : api.ofKind(type.apiVersion, type.kind);
      return Promise.resolve(
        items.filter((o) =>
          (p.namespace === undefined || o.metadata.namespace === p.namespace) &&
          matchesSelector(o.metadata.labels, { matchLabels: selector })
        ).map((o) => structuredClone(o)),
      );
    },
    write(method: "POST" | "PUT", path: string, body: unknown) {
      try {
        return Promise.resolve(method === "POST" ? api.create(body as Obj) : api.update(body as Obj));
      } catch (e) {
        return Promise.reject(e instanceof ApiError ? kubeError(e, path) : e);
      }
    },
  };
}

function kubeError(e: ApiError, path: string): Error {
  return new KubeApiError(e.code, e.reason, e.message, path);
}
