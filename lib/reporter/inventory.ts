/**
 * The reporter's pure core: a tenant's Services, what is stored, and the time in; the inventory to write out.
 * The tenant cluster is not trusted: every Service is validated, sizes are capped, and what was left out is
 * said in a condition rather than failing the whole inventory.
 *
 * @module
 */
import { z } from "zod";
import { demandAwaited, type InventoryService, InventorySpec, type InventoryStatus } from "../api/mod.ts";
import { API_VERSION, KINDS } from "../butler/mod.ts";
import { type ConditionInput, conditions, listNames, PreviousConditions } from "../conditions/mod.ts";
import { formatAddress, parseAddress } from "../ipam/mod.ts";
import { formatTime, parseTime } from "../time/mod.ts";

/** Caps that keep an inventory well under the API server's object size limit whatever the tenant reports. */
export const INVENTORY_LIMITS = {
  /** Services kept in one inventory (about 120 bytes each: 1,000 is ~120 KB of the 1.5 MiB limit). */
  maxServices: 1000,
  /** Ingress addresses kept per Service (dual stack needs two). */
  maxIngressIPs: 8,
} as const;

/**
 * How often `observedAt` is refreshed while the tenant is watched, nothing changes and a decision waits on the
 * demand ({@linkcode demandAwaited}; seconds): well within the TenantCluster's 300 s.
 */
export const HEARTBEAT_SECONDS = 45;

/**
 * How often it is refreshed while no decision waits on the demand (seconds): well within the TenantCluster's
 * 1,800 s. Each refresh wakes the TenantCluster, so at rest a tenant costs one sync in ten minutes, not one in 45 s.
 */
export const IDLE_HEARTBEAT_SECONDS = 600;

/** A Service as the inventory records it, after validation. */
export type ServiceFact = InventoryService & { ingressIPs: string[] };

/** What {@linkcode serviceFact} makes of one object the tenant returned. */
export type FactResult =
  | { readonly kind: "fact"; readonly key: string; readonly fact: ServiceFact }
  | { readonly kind: "ignored" }
  | { readonly kind: "invalid"; readonly key: string; readonly reason: string };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_1035_LABEL = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;

const RawService = z.object({
  metadata: z.object({
    namespace: z.string(),
    name: z.string(),
    creationTimestamp: z.string(),
  }),
  spec: z.object({ type: z.string().optional() }).optional(),
  status: z.object({
    loadBalancer: z.object({
      ingress: z.array(z.object({ ip: z.string().optional(), hostname: z.string().optional() })).nullish(),
    }).nullish(),
  }).nullish(),
});

/** A key for messages that cannot echo unbounded tenant text. */
function shortKey(raw: unknown): string {
  const m = (raw as { metadata?: { namespace?: unknown; name?: unknown } } | null)?.metadata;
  const part = (v: unknown) => typeof v === "string" ? (v.length > 63 ? `${v.slice(0, 60)}...` : v) : "?";
  return `${part(m?.namespace)}/${part(m?.name)}`;
}

/**
 * Reads one Service of the tenant: LoadBalancer Services become facts (names checked as Kubernetes checks them,
 * creation time parsed, ingress IPs parsed and written canonically); other types are ignored; anything
 * malformed is invalid with a reason. A Service whose ingress has a hostname but no IP is invalid too: the
 * inventory could only call it pending, which it is not.
 *
 * @example
 * ```ts
 * serviceFact({ metadata: { namespace: "web", name: "shop", creationTimestamp: "2026-01-01T00:00:00Z" },
 *   spec: { type: "LoadBalancer" }, status: { loadBalancer: { ingress: [{ ip: "10.0.0.5" }] } } });
 * // { kind: "fact", key: "web/shop", fact: { namespace: "web", name: "shop", createdAt: ..., ingressIPs: ["10.0.0.5"] } }
 * ```
 */
export function serviceFact(raw: unknown): FactResult {
  if ((raw as { spec?: { type?: unknown } } | null)?.spec?.type !== "LoadBalancer") {
    return { kind: "ignored" };
  }
  const parsed = RawService.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { kind: "invalid", key: shortKey(raw), reason: `${issue.path.join(".")}: ${issue.message}` };
  }
  const s = parsed.data;
  const { namespace, name, creationTimestamp } = s.metadata;
  const key = shortKey(raw);
  if (!DNS_LABEL.test(namespace)) {
    return { kind: "invalid", key, reason: "metadata.namespace is not a DNS label" };
  }
  if (!DNS_1035_LABEL.test(name)) {
    return { kind: "invalid", key, reason: "metadata.name is not a DNS-1035 label" };
  }
  const created = parseTime(creationTimestamp);
  if (!created) return { kind: "invalid", key, reason: "metadata.creationTimestamp is not an RFC 3339 time" };
  const ingress = s.status?.loadBalancer?.ingress ?? [];
  if (ingress.length > INVENTORY_LIMITS.maxIngressIPs) {
    return { kind: "invalid", key, reason: `more than ${INVENTORY_LIMITS.maxIngressIPs} ingress entries` };
  }
  const ips = new Set<string>();
  for (const entry of ingress) {
    if (entry.ip === undefined) {
      return { kind: "invalid", key, reason: "status.loadBalancer.ingress has an entry without an ip" };
    }
    const address = entry.ip.length <= 45 ? parseAddress(entry.ip) : undefined;
    if (!address) return { kind: "invalid", key, reason: "status.loadBalancer.ingress has an invalid ip" };
    ips.add(formatAddress(address.family, address.value));
  }
  return {
    kind: "fact",
    key,
    fact: { namespace, name, createdAt: formatTime(created), ingressIPs: [...ips].sort() },
  };
}

/** Why a tenant cannot be read: the reasons of `Reporting=False`. */
export const UNREADABLE_STATES = [
  "Unreachable",
  "Unauthorized",
  "Forbidden",
  "Timeout",
  "TLSError",
  "TooLarge",
  "Redirected",
  "KubeconfigMissing",
  "KubeconfigInvalid",
] as const;

/** How the reporter currently reads the tenant. */
export type TenantHealth =
  | { readonly state: "Watching" }
  | { readonly state: (typeof UNREADABLE_STATES)[number]; readonly message: string };

/** The facts of {@linkcode InventoryInput}: the read Services split into kept facts and invalid ones. */
export function splitFacts(
  results: Iterable<FactResult>,
): Pick<InventoryInput, "services" | "invalid"> & { services: ServiceFact[] } {
  const services: ServiceFact[] = [];
  const invalid: { key: string; reason: string }[] = [];
  for (const r of results) {
    if (r.kind === "fact") services.push(r.fact);
    else if (r.kind === "invalid") invalid.push({ key: r.key, reason: r.reason });
  }
  return { services, invalid };
}

/** The inputs of {@linkcode planInventory}. */
export interface InventoryInput {
  /** The valid LoadBalancer Services the reporter holds for the tenant (any order). */
  readonly services: Iterable<ServiceFact>;
  /** Services left out as invalid, by key, with why (any order). */
  readonly invalid: Iterable<{ readonly key: string; readonly reason: string }>;
  /** True when the reporter stopped holding Services at its own cap: the list is known to be incomplete. */
  readonly overflow?: boolean;
  /** The inventory as stored, if it exists. */
  readonly previous?: { readonly spec?: unknown; readonly status?: unknown } | undefined;
  readonly health: TenantHealth;
  readonly now: Date;
  /**
   * How often `observedAt` is refreshed while a decision waits on the demand; `Infinity` for a tenant whose
   * demand nobody reads (static IPAM).
   */
  readonly heartbeatSeconds?: number;
  /**
   * How often it is refreshed while none does; `Infinity` for static IPAM. Unset, it is `heartbeatSeconds` when
   * that is given (so `heartbeatSeconds: Infinity` alone means never), else {@linkcode IDLE_HEARTBEAT_SECONDS}.
   */
  readonly idleHeartbeatSeconds?: number;
  /** The TenantCluster's `status.ipam.unusedSince`: growth allocations counting down to their release. */
  readonly unusedSince?: Readonly<Record<string, unknown>>;
  /** More conditions to hold in status (the MetalLB configuration's). */
  readonly conditions?: readonly ConditionInput[];
}

/** What to write: `spec` when the Services changed or the heartbeat is due, `status` when it changed. */
export interface InventoryPlan {
  readonly spec?: InventorySpec;
  readonly status?: InventoryStatus;
  /** Why `spec` is written. */
  readonly reason?: "created" | "changed" | "heartbeat";
}

const byKey = (a: InventoryService, b: InventoryService) =>
  a.namespace < b.namespace
    ? -1
    : a.namespace > b.namespace
    ? 1
    : a.name < b.name
    ? -1
    : a.name > b.name
    ? 1
    : 0;

/**
 * Chooses the Services an inventory keeps when there are more than the cap: those with addresses first (so an
 * address in use is never reported unused and shrunk), then the longest pending (they drive growth first).
 */
function capped(services: ServiceFact[]): ServiceFact[] {
  if (services.length <= INVENTORY_LIMITS.maxServices) return services;
  const ranked = [...services].sort((a, b) =>
    (b.ingressIPs.length ? 1 : 0) - (a.ingressIPs.length ? 1 : 0) ||
    (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) || byKey(a, b)
  );
  return ranked.slice(0, INVENTORY_LIMITS.maxServices).sort(byKey);
}

/** The stored spec, read leniently: anything unreadable counts as absent (and is rewritten). */
const StoredSpec = InventorySpec.partial().catch({});

/** The spec's Services as a comparable string (ingress omitted when empty, as written). */
function servicesText(services: readonly InventoryService[]): string {
  return JSON.stringify(services.map((s) => [s.namespace, s.name, s.createdAt, s.ingressIPs ?? []]));
}

/** The heartbeat period that applies: the short one while a decision waits on the demand, else the idle one. */
function heartbeatPeriod(input: InventoryInput, services: readonly InventoryService[]): number {
  return demandAwaited(services, input.unusedSince)
    ? input.heartbeatSeconds ?? HEARTBEAT_SECONDS
    : input.idleHeartbeatSeconds ?? input.heartbeatSeconds ?? IDLE_HEARTBEAT_SECONDS;
}

/** The `observedAt` of an inventory created for a tenant that could not be read yet: the epoch, never. */
export const NEVER_OBSERVED = "1970-01-01T00:00:00Z";

/**
 * The next inventory of a tenant. While the tenant is watched, the spec is written when its Services differ
 * from what is stored or `observedAt` is due: `heartbeatSeconds` old while a decision waits on the demand (a
 * Service pending, a growth allocation counting down to its release), `idleHeartbeatSeconds` otherwise. While it
 * is not watched, nothing in the spec is touched, so `observedAt` ages and the TenantCluster reports
 * `DemandUnknown` (after 5 or 30 minutes) instead of acting on a list nobody can vouch for; a tenant never read
 * gets an inventory observed {@linkcode NEVER_OBSERVED}, so that its status can say why. The status (conditions
 * `Reporting` and `Complete`, counts) is written when it changes.
 *
 * @example
 * ```ts
 * const plan = planInventory({ services: [], invalid: [], health: { state: "Watching" }, now });
 * // plan.spec: { observedAt: "...", services: [] }, plan.reason: "created"
 * ```
 */
export function planInventory(input: InventoryInput): InventoryPlan {
  const now = input.now;
  const stored = StoredSpec.parse(input.previous?.spec);
  const exists = input.previous?.spec !== undefined;
  const all = [...input.services].sort(byKey);
  const kept = capped(all);
  const invalid = [...input.invalid].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  const watching = input.health.state === "Watching";

  const services = kept.map((s) => ({
    namespace: s.namespace,
    name: s.name,
    createdAt: s.createdAt,
    ...(s.ingressIPs.length ? { ingressIPs: s.ingressIPs } : {}),
  }));
  let spec: InventorySpec | undefined;
  let reason: InventoryPlan["reason"];
  if (watching) {
    const observedAt = parseTime(stored.observedAt);
    const age = observedAt ? (now.getTime() - observedAt.getTime()) / 1000 : Infinity;
    reason = !exists
      ? "created"
      : servicesText(services) !== servicesText(stored.services ?? [])
      ? "changed"
      : age >= heartbeatPeriod(input, services) || age < 0
      ? "heartbeat"
      : undefined;
    if (reason) spec = { observedAt: formatTime(now), services };
  }

  // A tenant that cannot be read still gets an inventory, to say why: observed at the epoch, that is never, so
  // the TenantCluster takes its demand as unknown, as without one.
  if (!exists && !spec) {
    spec = { observedAt: NEVER_OBSERVED, services: [] };
    reason = "created";
  }

  const [reporting, complete] = inventoryConditions(input, all.length, kept.length, invalid);
  const written = spec?.services ?? stored.services ?? [];
  const previousStatus = (input.previous?.status ?? {}) as { conditions?: unknown };
  const status: InventoryStatus = {
    services: written.length,
    pending: written.filter((s) => !(s.ingressIPs ?? []).length).length,
    conditions: conditions(
      [reporting, complete, ...(input.conditions ?? [])],
      PreviousConditions.parse(previousStatus.conditions),
      now,
    ),
  };
  // The API server returns objects with sorted keys: compare by content, not by key order.
  const statusChanged = sortedJson(status) !== sortedJson(input.previous?.status ?? null);
  return {
    ...(spec ? { spec, reason } : {}),
    ...(statusChanged ? { status } : {}),
  };
}

/**
 * `Reporting` (whether the tenant is watched) and `Complete` (whether every LoadBalancer Service is listed: none
 * left out past the cap, by the reporter's own bound, or as invalid).
 */
function inventoryConditions(
  input: InventoryInput,
  total: number,
  kept: number,
  invalid: readonly { key: string; reason: string }[],
): [ConditionInput, ConditionInput] {
  const left = total - kept;
  const reporting: ConditionInput = input.health.state === "Watching"
    ? { type: "Reporting", status: "True", reason: "Watching", message: "watching the tenant's Services" }
    : {
      type: "Reporting",
      status: "False",
      reason: input.health.state,
      message: `${input.health.message}; observedAt is no longer refreshed`,
    };
  const missing = [
    ...(left > 0
      ? [
        `${total} LoadBalancer Services exceed the cap of ${INVENTORY_LIMITS.maxServices}: ${left} left out (kept: those with addresses, then the longest pending)`,
      ]
      : []),
    ...(input.overflow
      ? ["the tenant has more Services than the reporter holds: the list is incomplete"]
      : []),
    ...(invalid.length
      ? [
        `${invalid.length} Service(s) left out as invalid: ${
          listNames(invalid.map((i) => `${i.key} (${i.reason})`), 5)
        }`,
      ]
      : []),
  ];
  const complete: ConditionInput = missing.length
    ? {
      type: "Complete",
      status: "False",
      reason: left > 0 || input.overflow ? "Truncated" : "InvalidServices",
      message: missing.join("; "),
    }
    : {
      type: "Complete",
      status: "True",
      reason: "Complete",
      message: "every LoadBalancer Service is listed",
    };
  return [reporting, complete];
}

/** JSON with object keys sorted at every level. */
function sortedJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
        : v,
  );
}

/** The TenantCluster an inventory belongs to. */
export interface TenantRef {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

/**
 * The server-side apply body of an inventory: same name and namespace as its TenantCluster, owned by it (so
 * garbage collection removes it with the cluster), with `spec` or `status` (apply the status to the `/status`
 * subresource).
 */
export function inventoryApply(
  tenant: TenantRef,
  part: { spec: InventorySpec } | { status: InventoryStatus },
): Record<string, unknown> {
  return {
    apiVersion: API_VERSION,
    kind: KINDS.LoadBalancerInventory.kind,
    metadata: {
      name: tenant.name,
      namespace: tenant.namespace,
      ...("spec" in part
        ? {
          ownerReferences: [{
            apiVersion: API_VERSION,
            kind: KINDS.TenantCluster.kind,
            name: tenant.name,
            uid: tenant.uid,
          }],
        }
        : {}),
    },
    ...part,
  };
}
