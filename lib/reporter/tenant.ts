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
  type KubeConnection,
  startWatch,
  type Watcher,
} from "../kube/mod.ts";
import { kubeconfigSecret, SERVICE, tenantConnection } from "./views.ts";
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
import { classifyTenantError, TENANT_ANSWER_BYTES } from "./classify.ts";
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
  const t = new TenantLoop(initial, ctx);
  t.start();
  return {
    get tenant() {
      return t.tenant;
    },
    update: (next) => t.update(next),
    state: () => t.health()?.state ?? "Connecting",
    stop: () => t.stop(),
  };
}

/**
 * One tenant's state and the steps of its work: read its kubeconfig Secret and watch its Services, apply its
 * MetalLB configuration, and write its inventory when the plan says so (spec writes at most one a second).
 */
/** The inventory as stored: what the next plan compares with. */
type StoredInventory = { spec?: unknown; status?: unknown };

class TenantLoop {
  tenant: Tenant;
  readonly #ctx: TenantContext;
  readonly #inventoryPath: string;
  readonly #secretPath: string;
  readonly #secretRef: string;
  #stopped = false;
  #previous: StoredInventory | undefined;
  #loaded = false;
  #secretVersion: string | undefined;
  #connection: KubeConnection | undefined;
  #tenantClient: FullKubeClient | undefined;
  #watcher: Watcher<FactResult> | undefined;
  #metallb: MetalLBOutcome = { state: "NotConnected" };
  #metallbApplied = ""; // the addresses last applied, as JSON
  #metallbDueAt = 0;
  #metallbRun: Promise<void> = Promise.resolve();
  #problem: TenantHealth | undefined; // kubeconfig problems, before any watch
  #writing: Promise<void> = Promise.resolve();
  #lastSpecWrite = 0;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #recheckAt = 0;
  // Tenants started together would heartbeat together: each gets its own periods in the last fifth below the
  // configured ones, the same on every replica.
  readonly #spread: number;

  constructor(initial: Tenant, ctx: TenantContext) {
    this.tenant = initial;
    this.#ctx = ctx;
    this.#inventoryPath = `${INVENTORIES}/${initial.namespace}/loadbalancerinventories/${initial.name}`;
    this.#secretPath = `/api/v1/namespaces/${initial.namespace}/secrets/${initial.secretName}`;
    this.#secretRef = `Secret ${initial.namespace}/${initial.secretName}`;
    this.#spread = 0.8 + 0.2 * ((hash53(initial.key) % 1000) / 1000);
  }

  /** Reads the Secret and starts watching; then every tick: the Secret when due, MetalLB, the inventory. */
  start(): void {
    this.#tick = setInterval(() => {
      if (Date.now() >= this.#recheckAt) this.#writing = this.#writing.then(() => this.#connect());
      this.#applyMetalLB();
      this.#schedule();
    }, Math.min(TICK_MS, this.#ctx.kubeconfigRecheckSeconds * 1000));
    this.#writing = this.#writing.then(() => this.#connect()).then(() => {
      this.#applyMetalLB();
      this.#schedule();
    });
  }

  /**
   * Takes the tenant's new addresses (or allocation mode), applied to the tenant at once, and its release
   * countdowns, which set how soon `observedAt` is due.
   */
  update(next: Tenant): void {
    const changed = JSON.stringify(next.addresses) !== JSON.stringify(this.tenant.addresses) ||
      next.elastic !== this.tenant.elastic;
    // A release countdown starting needs a fresh observation soon: the heartbeat period shortens at once.
    const awaiting = JSON.stringify(next.unusedSince) !== JSON.stringify(this.tenant.unusedSince);
    this.tenant = next;
    if (changed) this.#applyMetalLB();
    if (changed || awaiting) this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#tick);
    if (this.#debounce !== undefined) clearTimeout(this.#debounce);
    await this.#writing.catch(() => {});
    await this.#metallbRun.catch(() => {});
    await this.#stopWatch();
  }

  health(): TenantHealth | undefined {
    if (this.#problem) return this.#problem;
    const watcher = this.#watcher;
    if (!watcher) return undefined;
    const h = watcher.health;
    if (h.state === "failing") return healthOf(h.error);
    if (!watcher.synced) return undefined;
    const age = (this.#ctx.clock().getTime() - watcher.lastContact) / 1000;
    return age <= this.#ctx.contactMaxAgeSeconds ? { state: "Watching" } : {
      state: "Unreachable",
      message: `no answer from the tenant's API server for ${Math.round(age)}s`,
    };
  }

  async #stopWatch(): Promise<void> {
    const [w, c] = [this.#watcher, this.#connection];
    this.#watcher = undefined;
    this.#connection = undefined;
    this.#tenantClient = undefined;
    this.#metallbApplied = "";
    await w?.stop();
    c?.httpClient?.close();
  }

  /** Brings the next read of the Secret forward as {@linkcode recheckDelayMs} says for this trouble. */
  #recheckSooner(trouble: KubeconfigTrouble): void {
    this.#recheckAt = Math.min(
      this.#recheckAt,
      Date.now() + recheckDelayMs(trouble, this.#ctx.kubeconfigRecheckSeconds),
    );
  }

  /** Reads the kubeconfig Secret; (re)starts the watch when it is new or changed. */
  async #connect(): Promise<void> {
    const ctx = this.#ctx;
    this.#recheckAt = Date.now() + recheckDelayMs("none", ctx.kubeconfigRecheckSeconds);
    let secret: { metadata?: { resourceVersion?: string }; data?: Record<string, unknown> } | undefined;
    try {
      secret = await ctx.limit(() =>
        ctx.kube.get(this.#secretPath, { projection: kubeconfigSecret(this.tenant.secretKey) })
      ) as typeof secret;
    } catch (err) {
      ctx.log({ msg: "cannot read the kubeconfig Secret", tenant: this.tenant.key, error: String(err) });
      this.#recheckSooner("troubled");
      return; // keep what runs
    }
    const version = secret?.metadata?.resourceVersion;
    if (secret && version === this.#secretVersion && (this.#watcher || this.#problem)) {
      if (this.#problem || this.#watcher?.health.state === "failing") this.#recheckSooner("troubled");
      return;
    }
    this.#secretVersion = version;
    await this.#stopWatch();
    const read = tenantConnection(secret, this.tenant.secretKey, this.#secretRef, ctx.kube.budget);
    if (read === "later") this.#secretVersion = undefined;
    if (read === "later" || "state" in read) {
      if (read !== "later") this.#problem = read;
      this.#recheckSooner("troubled");
      return;
    }
    this.#connection = read.connection;
    this.#problem = undefined;
    this.#watchServices(this.#connection);
  }

  /** Watches the tenant's Services through its kubeconfig. */
  #watchServices(connection: KubeConnection): void {
    // A tenant answers what it likes: every answer is capped (list pages and watch events by the watch itself).
    // The process's one heap budget: every tenant's answers are charged to it before they are parsed.
    const client = createKubeClient(connection, {
      retries: 0,
      maxResponseBytes: TENANT_ANSWER_BYTES,
      budget: this.#ctx.kube.budget,
    });
    this.#tenantClient = client;
    this.#watcher = startWatch({
      client,
      path: "/api/v1/services",
      projection: SERVICE,
      select: (raw) => {
        const fact = serviceFact(raw);
        return fact.kind === "ignored" ? undefined : fact;
      },
      // Invalid Services are held too (to be named); twice the cap leaves room to choose the kept ones.
      maxItems: INVENTORY_LIMITS.maxServices * 2,
      clock: () => this.#ctx.clock().getTime(),
      onChange: () => this.#schedule(),
      onHealth: (h) => {
        // Refused credentials may be rotated ones, an unreachable server a moved one: read the Secret again
        // soon rather than at the next periodic recheck.
        if (h.state === "failing") {
          const refused = h.error.status === 401 || h.error.status === 403;
          this.#recheckSooner(refused ? "refused" : "troubled");
        }
        this.#schedule();
      },
    });
    this.#ctx.log({ msg: "watching tenant", tenant: this.tenant.key, server: connection.server });
  }

  /** Asks for a write of the inventory: after a short debounce, and at most one spec write a second. */
  #schedule(): void {
    if (this.#stopped || this.#debounce !== undefined) return;
    const wait = Math.max(DEBOUNCE_MS, this.#lastSpecWrite + MIN_WRITE_INTERVAL_MS - Date.now());
    this.#debounce = setTimeout(() => {
      this.#debounce = undefined;
      this.#writing = this.#writing.then(() => this.#reconcile());
    }, wait);
  }

  #applyMetalLB(): void {
    this.#metallbRun = this.#metallbRun.then(() => this.#syncMetalLB()).catch((err) =>
      this.#ctx.log({ msg: "MetalLB sync failed", tenant: this.tenant.key, error: String(err) })
    );
  }

  /**
   * Applies the MetalLB pool and advertisement when the addresses changed since the last success, or the resync
   * is due (so an edit in the tenant is reverted); records the outcome for the inventory's status.
   */
  async #syncMetalLB(): Promise<void> {
    const client = this.#tenantClient;
    const before = this.#metallb;
    const addresses = this.tenant.addresses;
    const wanted = JSON.stringify(addresses);
    if (this.#stopped) return;
    if (!client) this.#metallb = { state: "NotConnected" };
    else if (!addresses.length) this.#metallb = { state: "NoAddresses" };
    else if (wanted !== this.#metallbApplied || Date.now() >= this.#metallbDueAt) {
      this.#metallbDueAt = Date.now() + this.#ctx.metallbResyncSeconds * 1000;
      try {
        for (const o of metallbObjects(addresses)) await client.apply(o.path, o.body, METALLB_FIELD_MANAGER);
        this.#metallbApplied = wanted;
        this.#metallb = { state: "Applied", addresses };
      } catch (err) {
        this.#metallbApplied = "";
        this.#metallb = metallbFailure(err);
        // The tenant writes the error's text: bounded in the log, never in status.
        this.#ctx.log({
          msg: "MetalLB configuration not applied",
          tenant: this.tenant.key,
          error: truncate(String(err), 300),
        });
      }
    }
    if (JSON.stringify(this.#metallb) !== JSON.stringify(before)) this.#schedule();
  }

  /** Plans the inventory from what the watch holds, and writes its spec and status as the plan says. */
  async #reconcile(): Promise<void> {
    if (this.#stopped || !(await this.#load())) return;
    const ctx = this.#ctx;
    const tenant = this.tenant;
    const h = this.health();
    if (!h) return;
    const plan = planInventory({
      ...splitFacts(this.#watcher?.items.values() ?? []),
      overflow: this.#watcher?.overflow ?? false,
      previous: this.#previous,
      health: h,
      now: ctx.clock(),
      heartbeatSeconds: tenant.elastic ? ctx.heartbeatSeconds * this.#spread : Infinity,
      idleHeartbeatSeconds: tenant.elastic ? ctx.idleHeartbeatSeconds * this.#spread : Infinity,
      unusedSince: tenant.unusedSince,
      conditions: [metallbCondition(this.#metallb)],
    });
    try {
      if (plan.spec) {
        this.#lastSpecWrite = Date.now();
        await this.#write(this.#inventoryPath, { spec: plan.spec });
        ctx.wrote("spec", plan.reason!, true);
      }
      if (plan.status) {
        await this.#write(`${this.#inventoryPath}/status`, { status: plan.status });
        ctx.wrote("status", "changed", true);
      }
    } catch (err) {
      ctx.wrote(plan.spec ? "spec" : "status", "failed", false);
      // An inventory deleted under us (or never there for the status) is read again next time.
      if (err instanceof KubeApiError && err.status === 404) this.#loaded = false;
      ctx.log({ msg: "inventory not written", tenant: tenant.key, error: String(err) });
    }
  }

  /** Reads the stored inventory once (and again after it was found gone); false when it cannot be read. */
  async #load(): Promise<boolean> {
    if (this.#loaded) return true;
    const ctx = this.#ctx;
    try {
      const stored = await ctx.limit(() => ctx.kube.get(this.#inventoryPath)) as StoredInventory | undefined;
      this.#previous = stored ? { spec: stored.spec, status: stored.status } : undefined;
      this.#loaded = true;
      return true;
    } catch (err) {
      ctx.log({ msg: "cannot read the inventory", tenant: this.tenant.key, error: String(err) });
      return false;
    }
  }

  /** Applies part of the inventory, and keeps what the API server stored. */
  async #write(path: string, part: Parameters<typeof inventoryApply>[1]): Promise<void> {
    const body = inventoryApply(this.tenant, part);
    const stored = await this.#ctx.limit(() => this.#ctx.kube.apply(path, body, FIELD_MANAGER)) as {
      spec?: unknown;
      status?: unknown;
    };
    this.#previous = { spec: stored.spec, status: stored.status };
  }
}
