/**
 * The LoadBalancer reporter: watches TenantClusters and ProviderConfigs in the management cluster, keeps its
 * membership Lease, and runs a {@linkcode startTenant} worker for each IPAM tenant that hashes to this replica
 * (its MetalLB configuration; its Services too when elastic). Started by `main.ts reporter`.
 *
 * @module
 */
import client from "prom-client";
import { API_OBJECT_EVENT_BYTES, type FullKubeClient, startWatch, type Watcher } from "../kube/mod.ts";
import { bounded, members, type Projection } from "../foreign/mod.ts";
import { type KubeconfigLocation, reportedTenants, type Tenant } from "./tenants.ts";
import { leaseName, liveMembers, MEMBER_LABEL, memberLease, ownerOf } from "./shards.ts";
import { FIELD_MANAGER, startTenant, type TenantContext, type TenantWorker } from "./tenant.ts";
import { coalesce } from "./coalesce.ts";
import { HEARTBEAT_SECONDS, IDLE_HEARTBEAT_SECONDS, UNREADABLE_STATES } from "./inventory.ts";

/** The shortest time between two reconciles of the tenant set (ms). */
const RECONCILE_INTERVAL_MS = 1000;

/** Options of {@linkcode startReporter}. */
export interface ReporterOptions {
  readonly kube: FullKubeClient;
  /** This replica's name (the pod name): its Lease holder identity. */
  readonly identity: string;
  /** Where the membership Leases live (the reporter's own namespace). */
  readonly namespace: string;
  readonly location: KubeconfigLocation;
  /** Lease duration; a replica silent this long loses its tenants (default 30 s). */
  readonly leaseSeconds?: number;
  /** How often the Lease is renewed and membership read (default 10 s). */
  readonly renewSeconds?: number;
  /** How often an elastic tenant's `observedAt` is refreshed while a decision waits on it (default 45 s). */
  readonly heartbeatSeconds?: number;
  /** How often it is refreshed while none does (default 600 s). */
  readonly idleHeartbeatSeconds?: number;
  /** How often a healthy tenant's kubeconfig Secret is read again (default 300 s; sooner while it is in trouble). */
  readonly kubeconfigRecheckSeconds?: number;
  /** How often each tenant's MetalLB configuration is applied again though nothing changed (default 60 s). */
  readonly metallbResyncSeconds?: number;
  readonly clock?: () => Date;
  readonly log: (record: Record<string, unknown>) => void;
  readonly registry?: client.Registry;
}

/** A running reporter. */
export interface Reporter {
  /** True once TenantClusters and ProviderConfigs are listed and the Lease was written. */
  ready(): boolean;
  /** The tenants this replica watches, by key, with their state. */
  tenants(): Record<string, string>;
  /** The live members as last read. */
  members(): readonly string[];
  /** Stops every watch and deletes this replica's Lease, so the others take its tenants at once. */
  stop(): Promise<void>;
}

/** Management API calls of all tenants in flight at once: bounds the burst when many tenants start or beat. */
const MAX_CONCURRENT_WRITES = 8;

/** A concurrency limiter: at most `max` calls run; the others wait in order. */
export function createLimiter(max: number): <T>(call: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async <T>(call: () => Promise<T>): Promise<T> => {
    // A finished call hands its slot straight to the next waiter, so `running` never passes `max`.
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await call();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

const GROUP_PATH = "/apis/butler.butlerlabs.dev/v1alpha1";
const STATES = ["Connecting", "Watching", ...UNREADABLE_STATES];

/**
 * What is read of a TenantCluster or ProviderConfig at all: what {@linkcode slim} keeps, each part bounded. A team's
 * free-form values and annotations are skipped in the bytes, never parsed (issue #55).
 */
const SLIM: Projection = members({
  metadata: members({
    namespace: bounded(256),
    name: bounded(256),
    uid: bounded(64),
    deletionTimestamp: bounded(64),
  }),
  spec: members({ providerConfigRef: bounded(4096), network: bounded(64 * 1024) }),
  status: members({
    effective: members({ providerConfigRef: bounded(4096) }),
    loadBalancer: members({ addresses: bounded(256 * 1024) }),
    ipam: members({ unusedSince: bounded(256 * 1024) }),
  }),
});

/** Keeps what {@linkcode reportedTenants} reads of a TenantCluster or ProviderConfig, nothing else. */
function slim(raw: unknown): unknown {
  const o = raw as {
    metadata?: Record<string, unknown>;
    spec?: { providerConfigRef?: unknown; network?: unknown };
    status?: {
      effective?: { providerConfigRef?: unknown };
      loadBalancer?: { addresses?: unknown };
      ipam?: { unusedSince?: unknown };
    };
  };
  const m = o.metadata ?? {};
  return {
    metadata: { namespace: m.namespace, name: m.name, uid: m.uid, deletionTimestamp: m.deletionTimestamp },
    spec: { providerConfigRef: o.spec?.providerConfigRef, network: o.spec?.network },
    status: {
      effective: { providerConfigRef: o.status?.effective?.providerConfigRef },
      loadBalancer: { addresses: o.status?.loadBalancer?.addresses },
      ipam: { unusedSince: o.status?.ipam?.unusedSince },
    },
  };
}

/** The reporter's own metrics: tenants by state, live members, inventory writes. */
function reporterMetrics(registry: client.Registry) {
  return {
    tenants: new client.Gauge({
      name: "butler_reporter_tenants",
      help: "Tenants this replica watches, by how they are read.",
      labelNames: ["state"] as const,
      registers: [registry],
    }),
    members: new client.Gauge({
      name: "butler_reporter_members",
      help: "Live reporter replicas this replica sees (itself included).",
      registers: [registry],
    }),
    writes: new client.Counter({
      name: "butler_reporter_inventory_writes_total",
      help:
        "LoadBalancerInventory writes, by part (spec, status) and reason (created, changed, heartbeat, failed).",
      labelNames: ["part", "reason"] as const,
      registers: [registry],
    }),
  };
}

/** This replica's membership Lease written; when, or undefined when it could not be. */
async function renewLease(
  { kube, identity, namespace, log }: ReporterOptions,
  leasePath: string,
  leaseSeconds: number,
  clock: () => Date,
): Promise<number | undefined> {
  const now = clock();
  try {
    await kube.apply(
      `${leasePath}/${leaseName(identity)}`,
      memberLease(identity, namespace, now, leaseSeconds),
      FIELD_MANAGER,
    );
    return now.getTime();
  } catch (err) {
    log({ msg: "cannot renew the reporter Lease", error: String(err) });
    return undefined;
  }
}

/** The live members by their Leases, or undefined when they cannot be read. */
async function readMembers(
  { kube, log }: ReporterOptions,
  leasePath: string,
  clock: () => Date,
): Promise<string[] | undefined> {
  try {
    return liveMembers(await kube.list(leasePath, { labelSelector: MEMBER_LABEL }), clock());
  } catch (err) {
    log({ msg: "cannot read the reporter Leases", error: String(err) });
    return undefined;
  }
}

/** The tenants by state, into the gauge (every state, zero included). */
function countTenants(workers: Iterable<TenantWorker>, gauge: client.Gauge<"state">): void {
  const counts = Object.fromEntries(STATES.map((s) => [s, 0]));
  for (const w of workers) counts[w.state()]! += 1;
  for (const [state, n] of Object.entries(counts)) gauge.set({ state }, n);
}

/** What every tenant worker shares: the write limiter, the API, the clock, the periods, the log and the metrics. */
function tenantContextOf(
  options: ReporterOptions,
  clock: () => Date,
  metrics: ReturnType<typeof reporterMetrics>,
): TenantContext {
  const { kube, log } = options;
  return {
    limit: createLimiter(MAX_CONCURRENT_WRITES),
    kube,
    clock,
    heartbeatSeconds: options.heartbeatSeconds ?? HEARTBEAT_SECONDS,
    idleHeartbeatSeconds: options.idleHeartbeatSeconds ?? IDLE_HEARTBEAT_SECONDS,
    kubeconfigRecheckSeconds: options.kubeconfigRecheckSeconds ?? 300,
    metallbResyncSeconds: options.metallbResyncSeconds ?? 60,
    // A healthy watch hears from the server at least when it ends (at most 60 s) and reconnects.
    contactMaxAgeSeconds: 80,
    log,
    wrote: (part: "spec" | "status", reason: string, ok: boolean) =>
      metrics.writes.inc({ part, reason: ok ? reason : "failed" }),
  };
}

/**
 * The workers follow the tenants this replica owns: those it no longer owns (or whose cluster was recreated) are
 * stopped first, then the others updated or started.
 */
async function followTenants(
  workers: Map<string, TenantWorker>,
  wanted: ReadonlyMap<string, Tenant>,
  context: TenantContext,
  log: ReporterOptions["log"],
): Promise<void> {
  const gone = [...workers.values()].filter((w) => wanted.get(w.tenant.key)?.uid !== w.tenant.uid);
  for (const w of gone) workers.delete(w.tenant.key);
  await Promise.all(gone.map((w) => w.stop()));
  for (const w of gone) log({ msg: "stopped watching tenant", tenant: w.tenant.key });
  for (const [key, t] of wanted) {
    const running = workers.get(key);
    if (running) running.update(t);
    else workers.set(key, startTenant(t, context));
  }
}

/**
 * Starts the reporter.
 *
 * @example
 * ```ts
 * const reporter = startReporter({ kube, identity: "reporter-0", namespace: "butler-system",
 *   location: { secretName: "{name}-kubeconfig", secretKey: "value" }, log: console.log });
 * ```
 */
export function startReporter(options: ReporterOptions): Reporter {
  const { kube, identity, namespace, log } = options;
  const clock = options.clock ?? (() => new Date());
  const leaseSeconds = options.leaseSeconds ?? 30;
  const renewSeconds = options.renewSeconds ?? 10;
  const registry = options.registry ?? new client.Registry();
  const metrics = reporterMetrics(registry);

  const workers = new Map<string, TenantWorker>();
  let members: string[] = [];
  let renewedAt = 0;
  let stopped = false;

  const tenantContext = tenantContextOf(options, clock, metrics);

  // Every TenantCluster event asks for a reconcile. A reconcile reads every cluster, and a burst writes cluster
  // statuses without pause: they are at most one a second, or the reconciles alone grow with the square of the
  // clusters.
  const reconciles = coalesce(() => reconcile(), RECONCILE_INTERVAL_MS, {
    onError: (err) => log({ msg: "reconcile failed", error: String(err) }),
  });
  const schedule = () => reconciles.request();
  const [tcs, pcs] = ["tenantclusters", "providerconfigs"].map((resource) =>
    startWatch({
      client: kube,
      path: `${GROUP_PATH}/${resource}`,
      projection: SLIM,
      select: slim,
      maxEventBytes: API_OBJECT_EVENT_BYTES,
      onChange: schedule,
    })
  ) as [Watcher<unknown>, Watcher<unknown>];

  async function reconcile(): Promise<void> {
    if (stopped || !tcs.synced || !pcs.synced) return;
    const wanted = new Map<string, Tenant>();
    for (const t of reportedTenants(tcs.items.values(), pcs.items.values(), options.location)) {
      if (ownerOf(t.key, members) === identity) wanted.set(t.key, t);
    }
    await followTenants(workers, wanted, tenantContext, log);
  }

  const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`;
  async function renew(): Promise<void> {
    const renewed = await renewLease(options, leasePath, leaseSeconds, clock);
    if (renewed !== undefined) renewedAt = renewed;
    const seen = (await readMembers(options, leasePath, clock)) ?? members;
    // Without a current Lease of its own this replica is invisible to the others, which take its tenants.
    const alive = clock().getTime() - renewedAt < leaseSeconds * 1000;
    const next = alive ? [...new Set([...seen, identity])].sort() : seen.filter((m) => m !== identity);
    if (next.join("\n") !== members.join("\n")) {
      log({ msg: "reporter members", members: next });
      members = next;
      schedule();
    }
    metrics.members.set(members.length);
  }
  void renew();
  const renewing = setInterval(() => void renew(), renewSeconds * 1000);
  const counting = setInterval(() => countTenants(workers.values(), metrics.tenants), 5000);

  return {
    ready: () => tcs.synced && pcs.synced && renewedAt > 0,
    tenants: () => Object.fromEntries([...workers].map(([k, w]) => [k, w.state()])),
    members: () => members,
    async stop() {
      stopped = true;
      clearInterval(renewing);
      clearInterval(counting);
      await reconciles.idle();
      await Promise.all([tcs.stop(), pcs.stop(), ...[...workers.values()].map((w) => w.stop())]);
      workers.clear();
      await kube.remove(`${leasePath}/${leaseName(identity)}`).catch((err) =>
        log({ msg: "cannot delete the reporter Lease", error: String(err) })
      );
    },
  };
}
