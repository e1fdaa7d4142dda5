/**
 * TenantCluster quotas, environments and feature restrictions at admission (issue #14): pure checks of a
 * proposed cluster against its Team, its ProviderConfig and the team's usage (the TenantClusters that exist plus
 * the ledger's fresh reservations). Upstream's messages verbatim; every failing check is reported, as a Kubernetes
 * field error list.
 *
 * @module
 */
import { CREATOR_ANNOTATION, LABELS, OWNER_ANNOTATIONS, ownerOf } from "../../lib/butler/mod.ts";
import {
  add,
  compare,
  formatQuantity,
  fromCount,
  parseQuantity,
  positiveLimit,
  type Quantity,
  ZERO,
} from "../../lib/quantity/mod.ts";
import { type ClusterSpecInput, type ResolvedShape, resolveTeamShape } from "../../lib/shape/mod.ts";
import { versionAllowed } from "../../lib/version/mod.ts";
import type { ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import { type Footprint, type QuotaLedger, reservationFresh } from "./reservations.ts";

/** A field error as Kubernetes prints it (`path: Type: detail`). */
export interface FieldError {
  readonly path: string;
  readonly type: "Forbidden" | "Required value" | "Unsupported value";
  readonly detail: string;
  /** The rule that failed, named after the limit (`maxClusters`, `deniedAddons`, ...): metrics count by it. */
  readonly rule: string;
}

/** `field.ErrorList.ToAggregate().Error()`: one error alone, several as `[e1, e2]`. */
export function aggregate(errors: readonly FieldError[]): string {
  const text = errors.map((e) => `${e.path}: ${e.type}: ${e.detail}`);
  return text.length === 1 ? text[0]! : `[${text.join(", ")}]`;
}

/** A TenantCluster as admission reads it (the review's object, or one listed). */
export interface ClusterObject {
  readonly metadata?: {
    readonly name?: string;
    readonly labels?: Readonly<Record<string, string>> | null;
    readonly annotations?: Readonly<Record<string, string>> | null;
    readonly deletionTimestamp?: string | null;
  };
  readonly spec?: Record<string, unknown>;
}

const ENV_PATH = `metadata.labels[${LABELS.environment}]`;
const CREATOR_PATH = `metadata.annotations[${CREATOR_ANNOTATION}]`;

const q = (text: string): Quantity => {
  const p = parseQuantity(text);
  return p.ok ? p.value : ZERO;
};

/** A footprint with exact quantities, as the checks add them up (a {@linkcode Footprint} is its ledger text). */
export interface Load {
  readonly env?: string;
  readonly owner?: string;
  readonly provider?: string;
  readonly nodes: number;
  readonly cpu: Quantity;
  readonly memory: Quantity;
  readonly storage: Quantity;
}

/** A ledger footprint as a {@linkcode Load}. */
export function loadOf(f: Footprint): Load {
  return { ...f, cpu: q(f.cpu), memory: q(f.memory), storage: q(f.storage) };
}

/** A {@linkcode Load} as the ledger records it (canonical quantities). */
export function footprintText(l: Load): Footprint {
  return {
    ...l,
    cpu: formatQuantity(l.cpu),
    memory: formatQuantity(l.memory),
    storage: formatQuantity(l.storage),
  };
}

/** Resolved shapes by what decides them, so a team of a thousand look-alike clusters resolves a handful. */
export type ShapeMemo = Map<string, ResolvedShape>;

/**
 * A cluster's load under its team's defaults: the effective shape (explicit, environment, team, per-cluster
 * defaults, built-in) as the Team status counts it. `problems` lists quantities that do not parse.
 */
export function footprintOf(
  cluster: ClusterObject,
  team: TeamSpec | undefined,
  providerKey: string | undefined,
  memo: ShapeMemo = new Map(),
): Load & { problems: readonly string[] } {
  const env = cluster.metadata?.labels?.[LABELS.environment];
  const r = resolved(cluster, team, memo);
  const owner = ownerOf(cluster.metadata?.annotations);
  return {
    ...(env ? { env } : {}),
    ...(owner ? { owner } : {}),
    ...(providerKey ? { provider: providerKey } : {}),
    nodes: r.shape.workerCount.value,
    cpu: r.totals?.cpu ?? ZERO,
    memory: r.totals?.memory ?? ZERO,
    storage: r.totals?.storage ?? ZERO,
    problems: r.problems,
  };
}

/**
 * The loads the team already uses, apart from `self`: every TenantCluster that exists and is not being deleted
 * (with a fresh reservation of its own, the larger of the two per dimension: a scale-up in flight), and every
 * fresh reservation whose cluster has not appeared yet.
 */
export function usageOf(
  clusters: readonly { name: string; load: Load; deleting: boolean }[],
  ledger: QuotaLedger,
  self: string,
  now: Date,
): Load[] {
  const out: Load[] = [];
  const seen = new Set<string>();
  for (const c of clusters) {
    seen.add(c.name);
    if (c.name === self || c.deleting) continue;
    const r = ledger.reservations.get(c.name);
    out.push(r && reservationFresh(r, now) ? larger(c.load, loadOf(r)) : c.load);
  }
  for (const [name, r] of ledger.reservations) {
    if (name !== self && !seen.has(name) && reservationFresh(r, now)) out.push(loadOf(r));
  }
  return out;
}

/** Whether a stored cluster's load already covers its reservation in every dimension (the reservation is spent). */
export function covers(stored: Load, reserved: Load): boolean {
  return stored.nodes >= reserved.nodes && compare(stored.cpu, reserved.cpu) >= 0 &&
    compare(stored.memory, reserved.memory) >= 0 && compare(stored.storage, reserved.storage) >= 0 &&
    stored.env === reserved.env && stored.owner === reserved.owner && stored.provider === reserved.provider;
}

function larger(stored: Load, reserved: Load): Load {
  const max = (a: Quantity, b: Quantity) => compare(a, b) >= 0 ? a : b;
  return {
    ...reserved,
    nodes: Math.max(stored.nodes, reserved.nodes),
    cpu: max(stored.cpu, reserved.cpu),
    memory: max(stored.memory, reserved.memory),
    storage: max(stored.storage, reserved.storage),
  };
}

/** Everything {@linkcode checkQuota} decides from. */
export interface QuotaInput {
  readonly operation: "CREATE" | "UPDATE";
  readonly namespace: string;
  readonly teamName: string;
  readonly team: TeamSpec;
  readonly object: ClusterObject;
  readonly oldObject?: ClusterObject | undefined;
  /** The ProviderConfig the cluster names, when it exists: `key` is `namespace/name`. */
  readonly provider?:
    | { readonly key: string; readonly name: string; readonly spec: ProviderConfigSpec }
    | undefined;
  readonly oldProviderKey?: string | undefined;
  /** What the rest of the team uses ({@linkcode usageOf}). */
  readonly usage: readonly Load[];
  readonly memo?: ShapeMemo;
}

const sum = (ls: readonly Load[], pick: (l: Load) => Quantity) => add(...ls.map(pick));
const list = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(", ");

/**
 * Every rule a TenantCluster create or update must meet, with every failure. An update is checked like a create
 * for what it changes: a limit is only enforced where the cluster's own share grows (so a lowered quota never
 * blocks an unrelated edit, upstream's deadlock), and a restriction only where the value changes.
 *
 * @example
 * ```ts
 * checkQuota({ operation: "CREATE", namespace: "team-a", teamName: "a", team, object, usage: [] }); // []
 * ```
 */
export function checkQuota(input: QuotaInput): { errors: FieldError[]; load: Load } {
  const { team, teamName, object, oldObject, provider, usage } = input;
  const create = input.operation === "CREATE";
  const errors: FieldError[] = [];
  const forbid = (rule: string, path: string, detail: string) =>
    errors.push({ path, type: "Forbidden", detail, rule });
  const memo = input.memo ?? new Map();
  const fp = footprintOf(object, team, provider?.key ?? input.oldProviderKey, memo);
  const old = oldObject ? footprintOf(oldObject, team, input.oldProviderKey, memo) : undefined;
  const asQuantity = (v: number | Quantity) => typeof v === "number" ? fromCount(v) : v;
  const grows = (pick: (l: Load) => number | Quantity) =>
    create || !old || compare(asQuantity(pick(fp)), asQuantity(pick(old))) > 0;

  // Environments.
  const envs = team.environments ?? [];
  const label = object.metadata?.labels?.[LABELS.environment];
  const oldLabel = oldObject?.metadata?.labels?.[LABELS.environment];
  const env = envs.find((e) => e.name === label);
  if (envs.length && label === undefined && (create || oldLabel !== undefined)) {
    errors.push({
      rule: "environmentRequired",
      path: ENV_PATH,
      type: "Required value",
      detail:
        `team "${teamName}" defines environments; TenantClusters must carry this label set to one of the team's env names`,
    });
  } else if (envs.length && label !== undefined && !env && (create || label !== oldLabel)) {
    errors.push({
      rule: "environmentUnknown",
      path: ENV_PATH,
      type: "Unsupported value",
      detail: `${JSON.stringify(label)}: supported values: ${list(envs.map((e) => e.name))}`,
    });
  }

  // Feature restrictions.
  const limits = team.resourceLimits ?? {};
  const oldShape = oldObject ? resolved(oldObject, team, memo).shape : undefined;
  const shape = resolved(object, team, memo).shape;
  const version = shape.kubernetesVersion?.value;
  if (
    version && limits.allowedKubernetesVersions?.length && version !== oldShape?.kubernetesVersion?.value &&
    !versionAllowed(version, limits.allowedKubernetesVersions)
  ) {
    forbid(
      "allowedKubernetesVersions",
      "spec.kubernetesVersion",
      `Kubernetes version "${version}" is not allowed for team "${teamName}"; allowed: ${
        list(limits.allowedKubernetesVersions)
      }`,
    );
  }
  const providerType = provider?.spec.provider;
  if (
    providerType && limits.allowedProviders?.length && (create || provider.key !== input.oldProviderKey) &&
    !limits.allowedProviders.includes(providerType)
  ) {
    forbid(
      "allowedProviders",
      "spec.providerConfigRef",
      `provider "${providerType}" (ProviderConfig "${provider.name}") is not allowed for team "${teamName}"; allowed: ${
        list(limits.allowedProviders)
      }`,
    );
  }
  const oldAddons = new Set(oldShape?.addons.value ?? []);
  for (const addon of shape.addons.value) {
    if (oldAddons.has(addon)) continue;
    if (limits.deniedAddons?.includes(addon)) {
      forbid("deniedAddons", "spec.addons", `addon "${addon}" is denied for team "${teamName}"`);
    } else if (limits.allowedAddons?.length && !limits.allowedAddons.includes(addon)) {
      forbid(
        "allowedAddons",
        "spec.addons",
        `addon "${addon}" is not allowed for team "${teamName}"; allowed: ${list(limits.allowedAddons)}`,
      );
    }
  }

  // ProviderConfig limits, over this team's clusters on that provider.
  if (provider) {
    const moved = create || provider.key !== input.oldProviderKey;
    const onProvider = usage.filter((f) => f.provider === provider.key);
    const pcLimits = provider.spec.limits ?? {};
    if (pcLimits.maxClustersPerTeam && moved && onProvider.length >= pcLimits.maxClustersPerTeam) {
      forbid(
        "maxClustersPerTeam",
        "spec",
        `team namespace "${input.namespace}" already has ${onProvider.length} cluster(s); ProviderConfig "${provider.name}" limits to ${pcLimits.maxClustersPerTeam}`,
      );
    }
    const nodes = onProvider.reduce((n, f) => n + f.nodes, 0) + fp.nodes;
    if (pcLimits.maxNodesPerTeam && (moved || grows((f) => f.nodes)) && nodes > pcLimits.maxNodesPerTeam) {
      forbid(
        "maxNodesPerTeam",
        "spec.workers.replicas",
        `total worker replicas (${nodes}) would exceed ProviderConfig "${provider.name}" per-team node limit (${pcLimits.maxNodesPerTeam})`,
      );
    }
  }

  // Team limits.
  const maxClusters = positiveLimit(limits.maxClusters);
  if (maxClusters && create && compare(fromCount(usage.length + 1), maxClusters) > 0) {
    forbid(
      "maxClusters",
      "spec",
      `team "${teamName}" already has ${usage.length} cluster(s); team quota limits to ${limits.maxClusters}`,
    );
  }
  const perCluster = positiveLimit(limits.maxNodesPerCluster);
  if (perCluster && grows((f) => f.nodes) && compare(fromCount(fp.nodes), perCluster) > 0) {
    forbid(
      "maxNodesPerCluster",
      "spec.workers.replicas",
      `worker replicas (${fp.nodes}) exceeds team "${teamName}" per-cluster node limit (${limits.maxNodesPerCluster})`,
    );
  }
  const totalNodes = usage.reduce((n, f) => n + f.nodes, 0) + fp.nodes;
  const maxNodes = positiveLimit(limits.maxTotalNodes);
  if (maxNodes && grows((f) => f.nodes) && compare(fromCount(totalNodes), maxNodes) > 0) {
    forbid(
      "maxTotalNodes",
      "spec.workers.replicas",
      `total worker nodes (${totalNodes}) would exceed team "${teamName}" node quota (${limits.maxTotalNodes})`,
    );
  }
  for (
    const [label, pick, limit, rule] of [
      ["CPU", (l: Load) => l.cpu, limits.maxCPUCores, "maxCPUCores"],
      ["memory", (l: Load) => l.memory, limits.maxMemory, "maxMemory"],
      ["storage", (l: Load) => l.storage, limits.maxStorage, "maxStorage"],
    ] as const
  ) {
    const max = positiveLimit(limit);
    const total = add(sum(usage, pick), pick(fp));
    if (max && grows(pick) && compare(total, max) > 0) {
      forbid(
        rule,
        "spec.workers",
        `total ${label} (${formatQuantity(total)}) would exceed team "${teamName}" ${label} quota (${
          formatQuantity(max)
        })`,
      );
    }
  }

  // Environment limits (unlabelled clusters count toward the team totals only).
  if (env) {
    const movedEnv = create || label !== oldLabel;
    const inEnv = usage.filter((f) => f.env === env.name);
    const envMax = env.limits?.maxClusters;
    if (envMax && movedEnv && inEnv.length >= envMax) {
      forbid(
        "environmentMaxClusters",
        "spec",
        `environment "${env.name}" in team "${teamName}" already has ${inEnv.length} cluster(s); env quota limits to ${envMax}`,
      );
    }
    const perMember = env.limits?.maxClustersPerMember;
    if (perMember && (movedEnv || fp.owner !== old?.owner)) {
      const annotations = object.metadata?.annotations ?? {};
      const named = OWNER_ANNOTATIONS.map((k) => annotations[k]).find(Boolean);
      if (!fp.owner) {
        if (create) {
          errors.push({
            rule: "maxClustersPerMember",
            path: CREATOR_PATH,
            type: "Required value",
            detail:
              `environment "${env.name}" sets maxClustersPerMember; TenantClusters must carry the ${CREATOR_ANNOTATION} annotation (set automatically by butler-server; kubectl-direct creates must supply it explicitly)`,
          });
        }
      } else {
        const owned = inEnv.filter((f) => f.owner === fp.owner).length;
        if (owned >= perMember) {
          forbid(
            "maxClustersPerMember",
            CREATOR_PATH,
            `user "${named}" already owns ${owned} cluster(s) in environment "${env.name}"; env limits to ${perMember} per member`,
          );
        }
      }
    }
  }

  const { problems, ...load } = fp;
  if (problems.length && (create || grows((f) => f.nodes))) {
    forbid("footprint", "spec.workers", `cannot count the cluster against quotas: ${problems.join("; ")}`);
  }
  return { errors, load };
}

function resolved(cluster: ClusterObject, team: TeamSpec | undefined, memo: ShapeMemo) {
  const env = cluster.metadata?.labels?.[LABELS.environment];
  const spec = cluster.spec as
    | {
      kubernetesVersion?: unknown;
      workers?: { replicas?: unknown; machineTemplate?: Record<string, unknown> };
    }
    | undefined;
  const w = spec?.workers;
  const mt = w?.machineTemplate;
  const addons = (cluster.spec as { addons?: unknown } | undefined)?.addons;
  // Everything resolveShape reads; addons only when set (rare), so look-alike clusters share one resolution.
  const key =
    `${env}\u0000${spec?.kubernetesVersion}\u0000${w?.replicas}\u0000${mt?.cpu}\u0000${mt?.memory}\u0000${mt?.diskSize}\u0000${
      addons === undefined ? "" : JSON.stringify(addons)
    }`;
  const hit = memo.get(key);
  if (hit) return hit;
  const r = resolveTeamShape((cluster.spec ?? {}) as ClusterSpecInput, env, team);
  memo.set(key, r);
  return r;
}

/** Whether any limit a reservation serialises is in force (without one, admission writes nothing). */
export function quotaInForce(team: TeamSpec, provider: { spec: ProviderConfigSpec } | undefined): boolean {
  const l = team.resourceLimits ?? {};
  const anyCap = [l.maxClusters, l.maxTotalNodes, l.maxCPUCores, l.maxMemory, l.maxStorage].some((v) =>
    positiveLimit(v) !== undefined
  );
  const envCaps = (team.environments ?? []).some((e) =>
    e.limits?.maxClusters || e.limits?.maxClustersPerMember
  );
  const pc = provider?.spec.limits;
  return anyCap || envCaps || Boolean(pc?.maxClustersPerTeam || pc?.maxNodesPerTeam);
}
