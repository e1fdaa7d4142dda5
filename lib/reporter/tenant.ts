/**
 * One served tenant: reads its kubeconfig Secret, watches its Services with that kubeconfig, writes its
 * LoadBalancerInventory as {@linkcode planInventory} decides, and applies its MetalLB configuration (the
 * TenantCluster's addresses) to the tenant by server-side apply, again every `metallbResyncSeconds` so that
 * manual edits are reverted. The adapter around the pure core.
 *
 * @module
 */
import { truncate } from "../conditions/mod.ts";
import {
  createKubeClient,
  type FullKubeClient,
  KubeApiError,
  kubeconfigConnection,
  type KubeConnection,
  startWatch,
  type Watcher,
} from "../kube/mod.ts";
import { decodeBase64 } from "../encoding/base64.ts";
import {
  type FactResult,
  INVENTORY_LIMITS,
  inventoryApply,
  planInventory,
  serviceFact,
  splitFacts,
  type TenantHealth,
} from "./inventory.ts";
import type { Tenant } from "./tenants.ts";
import { hash53 } from "./shards.ts";
import { classifyTenantError } from "./classify.ts";
import { type KubeconfigTrouble, recheckDelayMs } from "./recheck.ts";
import { METALLB_FIELD_MANAGER, metallbObjects } from "../metallb/mod.ts";
import { metallbCondition, metallbFailure, type MetalLBOutcome } from "./metallb.ts";

/** The field manager of every inventory write (all replicas share it, so none conflicts with another). */
export const FIELD_MANAGER = "butler-reporter";

/** What a tenant worker needs from the reporter. */
export interface TenantContext {
  /** The management cluster. */
  readonly kube: FullKubeClient;
  readonly clock: () => Date;
  /** How often an elastic tenant's `observedAt` is refreshed while a decision waits on its demand (seconds). */
  readonly heartbeatSeconds: number;
  /** How often while none does (seconds). */
  readonly idleHeartbeatSeconds: number;
  /** How often the kubeconfig Secret is read again to notice rotation (seconds). */
  readonly kubeconfigRecheckSeconds: number;
  /** How long without contact a watch still counts as healthy (seconds). */
  readonly contactMaxAgeSeconds: number;
  /** How often the MetalLB configuration is applied again though nothing changed (reverts drift; seconds). */
  readonly metallbResyncSeconds: number;
  readonly log: (record: Record<string, unknown>) => void;
  /** Runs a management API call when a slot is free: bounds the requests of all tenants together. */
  readonly limit: <T>(call: () => Promise<T>) => Promise<T>;
  /** Counts a write: `spec` (with why) or `status`, or a failed one. */
  readonly wrote: (part: "spec" | "status", reason: string, ok: boolean) => void;
}

/** A running tenant. */
export interface TenantWorker {
  /** The tenant as last given (its addresses change while it runs). */
  readonly tenant: Tenant;
  /**
   * Takes the tenant's new addresses (or allocation mode), applied to the tenant at once, and its release
   * countdowns, which set how soon `observedAt` is due.
   */
  update(tenant: Tenant): void;
  /** How the tenant is read now (`Connecting` before the first answer). */
  state(): TenantHealth["state"] | "Connecting";
  stop(): Promise<void>;
}

const INVENTORIES = "/apis/butler.butlerlabs.dev/v1alpha1/namespaces";
/** Spec writes of one tenant are at most this frequent; changes in between are coalesced (ms). */
const MIN_WRITE_INTERVAL_MS = 1000;
/** Coalesces a burst of Service events into one write (ms). */
const DEBOUNCE_MS = 100;
/** How often the worker checks whether a heartbeat is due or its health changed (ms). */
const TICK_MS = 5000;

/** A failed read of the tenant's Services, in fixed words (the tenant's own never reach status). */
function healthOf(error: KubeApiError): TenantHealth {
  const c = classifyTenantError(error, "the kubeconfig's identity may not list and watch Services");
  return { state: c.reason, message: `cannot read the tenant's Services: ${c.message}` };
}

/** Starts watching one tenant. */
export function startTenant(initial: Tenant, ctx: TenantContext): TenantWorker {
  let tenant = initial;
  const inventoryPath = `${INVENTORIES}/${tenant.namespace}/loadbalancerinventories/${tenant.name}`;
  const secretPath = `/api/v1/namespaces/${tenant.namespace}/secrets/${tenant.secretName}`;
  const secretRef = `Secret ${tenant.namespace}/${tenant.secretName}`;
  let stopped = false;
  let previous: { spec?: unknown; status?: unknown } | undefined;
  let loaded = false;
  let secretVersion: string | undefined;
  let connection: KubeConnection | undefined;
  let tenantClient: FullKubeClient | undefined;
  let watcher: Watcher<FactResult> | undefined;
  let metallb: MetalLBOutcome = { state: "NotConnected" };
  let metallbApplied = ""; // the addresses last applied, as JSON
  let metallbDueAt = 0;
  let metallbRun: Promise<void> = Promise.resolve();
  let problem: TenantHealth | undefined; // kubeconfig problems, before any watch
  let writing: Promise<void> = Promise.resolve();
  let lastSpecWrite = 0;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let recheckAt = 0;
  // Tenants started together would heartbeat together: each gets its own periods in the last fifth below the
  // configured ones, the same on every replica.
  const spread = 0.8 + 0.2 * ((hash53(tenant.key) % 1000) / 1000);

  function health(): TenantHealth | undefined {
    if (problem) return problem;
    if (!watcher) return undefined;
    const h = watcher.health;
    if (h.state === "failing") return healthOf(h.error);
    if (!watcher.synced) return undefined;
    const age = (ctx.clock().getTime() - watcher.lastContact) / 1000;
    return age <= ctx.contactMaxAgeSeconds ? { state: "Watching" } : {
      state: "Unreachable",
      message: `no answer from the tenant's API server for ${Math.round(age)}s`,
    };
  }

  async function stopWatch(): Promise<void> {
    const [w, c] = [watcher, connection];
    watcher = undefined;
    connection = undefined;
    tenantClient = undefined;
    metallbApplied = "";
    await w?.stop();
    c?.httpClient?.close();
  }

  /** Brings the next read of the Secret forward as {@linkcode recheckDelayMs} says for this trouble. */
  function recheckSooner(trouble: KubeconfigTrouble): void {
    recheckAt = Math.min(recheckAt, Date.now() + recheckDelayMs(trouble, ctx.kubeconfigRecheckSeconds));
  }

  /** Reads the kubeconfig Secret; (re)starts the watch when it is new or changed. */
  async function connect(): Promise<void> {
    recheckAt = Date.now() + recheckDelayMs("none", ctx.kubeconfigRecheckSeconds);
    let secret: { metadata?: { resourceVersion?: string }; data?: Record<string, string> } | undefined;
    try {
      secret = await ctx.limit(() => ctx.kube.get(secretPath)) as typeof secret;
    } catch (err) {
      ctx.log({ msg: "cannot read the kubeconfig Secret", tenant: tenant.key, error: String(err) });
      recheckSooner("troubled");
      return; // keep what runs
    }
    const version = secret?.metadata?.resourceVersion;
    if (secret && version === secretVersion && (watcher || problem)) {
      if (problem || watcher?.health.state === "failing") recheckSooner("troubled");
      return;
    }
    secretVersion = version;
    await stopWatch();
    const encoded = secret?.data?.[tenant.secretKey];
    if (!secret || encoded === undefined) {
      problem = {
        state: "KubeconfigMissing",
        message: secret ? `${secretRef} has no key "${tenant.secretKey}"` : `${secretRef} not found`,
      };
      recheckSooner("troubled");
      return;
    }
    try {
      const text = new TextDecoder().decode(decodeBase64(encoded));
      connection = kubeconfigConnection(text, `${secretRef} key "${tenant.secretKey}"`, undefined, {
        requireTls: true,
      });
    } catch (err) {
      problem = { state: "KubeconfigInvalid", message: err instanceof Error ? err.message : String(err) };
      recheckSooner("troubled");
      return;
    }
    problem = undefined;
    const client = createKubeClient(connection, { retries: 0 });
    tenantClient = client;
    watcher = startWatch({
      client,
      path: "/api/v1/services",
      select: (raw) => {
        const fact = serviceFact(raw);
        return fact.kind === "ignored" ? undefined : fact;
      },
      // Invalid Services are held too (to be named); twice the cap leaves room to choose the kept ones.
      maxItems: INVENTORY_LIMITS.maxServices * 2,
      clock: () => ctx.clock().getTime(),
      onChange: schedule,
      onHealth: (h) => {
        // Refused credentials may be rotated ones, an unreachable server a moved one: read the Secret again
        // soon rather than at the next periodic recheck.
        if (h.state === "failing") {
          const refused = h.error.status === 401 || h.error.status === 403;
          recheckSooner(refused ? "refused" : "troubled");
        }
        schedule();
      },
    });
    ctx.log({ msg: "watching tenant", tenant: tenant.key, server: connection.server });
  }

  function schedule(): void {
    if (stopped || debounce !== undefined) return;
    const wait = Math.max(DEBOUNCE_MS, lastSpecWrite + MIN_WRITE_INTERVAL_MS - Date.now());
    debounce = setTimeout(() => {
      debounce = undefined;
      writing = writing.then(reconcile);
    }, wait);
  }

  /**
   * Applies the MetalLB pool and advertisement when the addresses changed since the last success, or the resync
   * is due (so an edit in the tenant is reverted); records the outcome for the inventory's status.
   */
  async function syncMetalLB(): Promise<void> {
    const client = tenantClient;
    const before = metallb;
    const addresses = tenant.addresses;
    const wanted = JSON.stringify(addresses);
    if (stopped) return;
    if (!client) metallb = { state: "NotConnected" };
    else if (!addresses.length) metallb = { state: "NoAddresses" };
    else if (wanted !== metallbApplied || Date.now() >= metallbDueAt) {
      metallbDueAt = Date.now() + ctx.metallbResyncSeconds * 1000;
      try {
        for (const o of metallbObjects(addresses)) await client.apply(o.path, o.body, METALLB_FIELD_MANAGER);
        metallbApplied = wanted;
        metallb = { state: "Applied", addresses };
      } catch (err) {
        metallbApplied = "";
        metallb = metallbFailure(err);
        // The tenant writes the error's text: bounded in the log, never in status.
        ctx.log({
          msg: "MetalLB configuration not applied",
          tenant: tenant.key,
          error: truncate(String(err), 300),
        });
      }
    }
    if (JSON.stringify(metallb) !== JSON.stringify(before)) schedule();
  }

  async function reconcile(): Promise<void> {
    if (stopped) return;
    if (!loaded) {
      try {
        const stored = await ctx.limit(() => ctx.kube.get(inventoryPath)) as typeof previous;
        previous = stored ? { spec: stored.spec, status: stored.status } : undefined;
        loaded = true;
      } catch (err) {
        ctx.log({ msg: "cannot read the inventory", tenant: tenant.key, error: String(err) });
        return;
      }
    }
    const h = health();
    if (!h) return;
    const plan = planInventory({
      ...splitFacts(watcher?.items.values() ?? []),
      overflow: watcher?.overflow ?? false,
      previous,
      health: h,
      now: ctx.clock(),
      heartbeatSeconds: tenant.elastic ? ctx.heartbeatSeconds * spread : Infinity,
      idleHeartbeatSeconds: tenant.elastic ? ctx.idleHeartbeatSeconds * spread : Infinity,
      unusedSince: tenant.unusedSince,
      conditions: [metallbCondition(metallb)],
    });
    try {
      if (plan.spec) {
        lastSpecWrite = Date.now();
        const body = inventoryApply(tenant, { spec: plan.spec });
        const stored = await ctx.limit(() => ctx.kube.apply(inventoryPath, body, FIELD_MANAGER)) as {
          spec?: unknown;
          status?: unknown;
        };
        ctx.wrote("spec", plan.reason!, true);
        previous = { spec: stored.spec, status: stored.status };
      }
      if (plan.status) {
        const body = inventoryApply(tenant, { status: plan.status });
        const stored = await ctx.limit(() =>
          ctx.kube.apply(`${inventoryPath}/status`, body, FIELD_MANAGER)
        ) as {
          spec?: unknown;
          status?: unknown;
        };
        ctx.wrote("status", "changed", true);
        previous = { spec: stored.spec, status: stored.status };
      }
    } catch (err) {
      ctx.wrote(plan.spec ? "spec" : "status", "failed", false);
      // An inventory deleted under us (or never there for the status) is read again next time.
      if (err instanceof KubeApiError && err.status === 404) loaded = false;
      ctx.log({ msg: "inventory not written", tenant: tenant.key, error: String(err) });
    }
  }

  const applyMetalLB = () => {
    metallbRun = metallbRun.then(syncMetalLB).catch((err) =>
      ctx.log({ msg: "MetalLB sync failed", tenant: tenant.key, error: String(err) })
    );
  };
  const tick = setInterval(() => {
    if (Date.now() >= recheckAt) writing = writing.then(connect);
    applyMetalLB();
    schedule();
  }, Math.min(TICK_MS, ctx.kubeconfigRecheckSeconds * 1000));
  writing = writing.then(connect).then(() => {
    applyMetalLB();
    schedule();
  });

  return {
    get tenant() {
      return tenant;
    },
    update(next: Tenant) {
      const changed = JSON.stringify(next.addresses) !== JSON.stringify(tenant.addresses) ||
        next.elastic !== tenant.elastic;
      // A release countdown starting needs a fresh observation soon: the heartbeat period shortens at once.
      const awaiting = JSON.stringify(next.unusedSince) !== JSON.stringify(tenant.unusedSince);
      tenant = next;
      if (changed) applyMetalLB();
      if (changed || awaiting) schedule();
    },
    state: () => health()?.state ?? "Connecting",
    async stop() {
      stopped = true;
      clearInterval(tick);
      if (debounce !== undefined) clearTimeout(debounce);
      await writing.catch(() => {});
      await metallbRun.catch(() => {});
      await stopWatch();
    },
  };
}
