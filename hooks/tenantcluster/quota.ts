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
  type Quantity,
  readLimit,
  ZERO,
} from "../../lib/quantity/mod.ts";
import {
  type ClusterSpecInput,
  type EffectiveShape,
  recordedShape,
  type ResolvedShape,
  resolveTeamShape,
} from "../../lib/shape/mod.ts";
import { versionAllowed } from "../../lib/version/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import type { EnvironmentSpec, ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import type { Footprint } from "./reservations.ts";
import type { Load, Usage } from "./usage.ts";

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
    readonly resourceVersion?: string;
  };
  readonly spec?: Record<string, unknown>;
  /** Its status: `effective` holds the shape it was given (unset fields keep it). */
  readonly status?: unknown;
}

const ENV_PATH = `metadata.labels[${LABELS.environment}]`;
const CREATOR_PATH = `metadata.annotations[${CREATOR_ANNOTATION}]`;

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
  /** What the rest of the team uses (`usageOf`). */
  readonly usage: Usage;
  readonly memo?: ShapeMemo;
}

const list = (values: readonly string[]) => values.map((v) => JSON.stringify(v)).join(", ");
const forbidden = (rule: string, path: string, detail: string): FieldError => ({
  path,
  type: "Forbidden",
  detail,
  rule,
});

/** What one check step reads: the request resolved once, shared by every step. */
interface Step {
  readonly input: QuotaInput;
  readonly create: boolean;
  /** The cluster's load as proposed, and (update) as it was. */
  readonly fp: Load;
  readonly old?: Load | undefined;
  /** Whether the cluster's own share grows in a dimension (always, for a create). */
  readonly grows: (pick: (l: Load) => number | Quantity) => boolean;
  readonly env?: EnvironmentSpec | undefined;
  readonly label?: string | undefined;
  readonly oldLabel?: string | undefined;
}

/** The environment label: required once the team defines environments, and one of them. */
function environmentErrors({ input, create, label, oldLabel, env }: Step): FieldError[] {
  const envs = input.team.environments ?? [];
  if (envs.length && label === undefined && (create || oldLabel !== undefined)) {
    return [{
      rule: "environmentRequired",
      path: ENV_PATH,
      type: "Required value",
      detail:
        `team "${input.teamName}" defines environments; TenantClusters must carry this label set to one of the team's env names`,
    }];
  }
  if (envs.length && label !== undefined && !env && (create || label !== oldLabel)) {
    return [{
      rule: "environmentUnknown",
      path: ENV_PATH,
      type: "Unsupported value",
      detail: `${JSON.stringify(label)}: supported values: ${list(envs.map((e) => e.name))}`,
    }];
  }
  return [];
}

/** What {@linkcode restrictionErrors} judges: the effective shape, and the provider when it is known. */
export interface RestrictionInput {
  readonly teamName: string;
  readonly limits: TeamSpec["resourceLimits"];
  readonly shape: EffectiveShape;
  /** The shape before an update: a value it already had is not judged again. */
  readonly oldShape?: EffectiveShape | undefined;
  /** The provider's type and name, and whether this request picks it (a create, or a move). */
  readonly provider?: { readonly type: string; readonly name: string; readonly picked: boolean } | undefined;
}

/**
 * The Team's feature restrictions: allowed Kubernetes versions, providers and addons, and denied addons (which
 * win). Judged where the value is new, so a tightened restriction never blocks an unrelated edit; the controller
 * judges the cluster as it stands (no old shape) and reports it.
 *
 * @example
 * ```ts
 * restrictionErrors({ teamName: "a", limits: { deniedAddons: ["longhorn"] }, shape }); // one error per denied addon
 * ```
 */
export function restrictionErrors(r: RestrictionInput): FieldError[] {
  const limits = r.limits ?? {};
  const errors: FieldError[] = [];
  const version = r.shape.kubernetesVersion?.value;
  if (
    version && limits.allowedKubernetesVersions?.length && version !== r.oldShape?.kubernetesVersion?.value &&
    !versionAllowed(version, limits.allowedKubernetesVersions)
  ) {
    errors.push(forbidden(
      "allowedKubernetesVersions",
      "spec.kubernetesVersion",
      `Kubernetes version "${version}" is not allowed for team "${r.teamName}"; allowed: ${
        list(limits.allowedKubernetesVersions)
      }`,
    ));
  }
  const p = r.provider;
  if (p && p.picked && limits.allowedProviders?.length && !limits.allowedProviders.includes(p.type)) {
    errors.push(forbidden(
      "allowedProviders",
      "spec.providerConfigRef",
      `provider "${p.type}" (ProviderConfig "${p.name}") is not allowed for team "${r.teamName}"; allowed: ${
        list(limits.allowedProviders)
      }`,
    ));
  }
  const oldAddons = new Set(r.oldShape?.addons.value ?? []);
  for (const addon of r.shape.addons.value) {
    if (oldAddons.has(addon)) continue;
    if (limits.deniedAddons?.includes(addon)) {
      errors.push(
        forbidden("deniedAddons", "spec.addons", `addon "${addon}" is denied for team "${r.teamName}"`),
      );
    } else if (limits.allowedAddons?.length && !limits.allowedAddons.includes(addon)) {
      errors.push(forbidden(
        "allowedAddons",
        "spec.addons",
        `addon "${addon}" is not allowed for team "${r.teamName}"; allowed: ${list(limits.allowedAddons)}`,
      ));
    }
  }
  return errors;
}

/** The ProviderConfig's per-team limits, over this team's clusters on that provider. */
function providerLimitErrors({ input, create, fp, grows }: Step): FieldError[] {
  const provider = input.provider;
  if (!provider) return [];
  const errors: FieldError[] = [];
  const moved = create || provider.key !== input.oldProviderKey;
  const onProvider = input.usage.onProvider(provider.key);
  const pcLimits = provider.spec.limits ?? {};
  if (pcLimits.maxClustersPerTeam && moved && onProvider.clusters >= pcLimits.maxClustersPerTeam) {
    errors.push(forbidden(
      "maxClustersPerTeam",
      "spec",
      `team namespace "${input.namespace}" already has ${onProvider.clusters} cluster(s); ProviderConfig "${provider.name}" limits to ${pcLimits.maxClustersPerTeam}`,
    ));
  }
  const nodes = onProvider.nodes + fp.nodes;
  if (pcLimits.maxNodesPerTeam && (moved || grows((f) => f.nodes)) && nodes > pcLimits.maxNodesPerTeam) {
    errors.push(forbidden(
      "maxNodesPerTeam",
      "spec.workers.replicas",
      `total worker replicas (${nodes}) would exceed ProviderConfig "${provider.name}" per-team node limit (${pcLimits.maxNodesPerTeam})`,
    ));
  }
  return errors;
}

/**
 * The team's per-cluster node limit, for one cluster's worker count (admission, and the controller's report).
 *
 * @example
 * ```ts
 * perClusterNodeError("a", { maxNodesPerCluster: 3 }, 4)?.detail;
 * // 'worker replicas (4) exceeds team "a" per-cluster node limit (3)'
 * ```
 */
export function perClusterNodeError(
  teamName: string,
  limits: TeamSpec["resourceLimits"],
  nodes: number,
): FieldError | undefined {
  const max = limits?.maxNodesPerCluster;
  return max !== undefined && nodes > max
    ? forbidden(
      "maxNodesPerCluster",
      "spec.workers.replicas",
      `worker replicas (${nodes}) exceeds team "${teamName}" per-cluster node limit (${max})`,
    )
    : undefined;
}

/** The team's limits: clusters, nodes per cluster, total nodes, CPU, memory and storage (0 is a limit of zero). */
function teamLimitErrors({ input, create, fp, grows }: Step): FieldError[] {
  const { teamName, usage } = input;
  const limits = input.team.resourceLimits ?? {};
  const errors: FieldError[] = [];
  const maxClusters = limits.maxClusters;
  if (maxClusters !== undefined && create && usage.clusters + 1 > maxClusters) {
    errors.push(forbidden(
      "maxClusters",
      "spec",
      `team "${teamName}" already has ${usage.clusters} cluster(s); team quota limits to ${maxClusters}`,
    ));
  }
  const perCluster = grows((f) => f.nodes) ? perClusterNodeError(teamName, limits, fp.nodes) : undefined;
  if (perCluster) errors.push(perCluster);
  const totalNodes = usage.nodes + fp.nodes;
  if (limits.maxTotalNodes !== undefined && grows((f) => f.nodes) && totalNodes > limits.maxTotalNodes) {
    errors.push(forbidden(
      "maxTotalNodes",
      "spec.workers.replicas",
      `total worker nodes (${totalNodes}) would exceed team "${teamName}" node quota (${limits.maxTotalNodes})`,
    ));
  }
  for (
    const [label, dimension, limit, rule] of [
      ["CPU", "cpu", limits.maxCPUCores, "maxCPUCores"],
      ["memory", "memory", limits.maxMemory, "maxMemory"],
      ["storage", "storage", limits.maxStorage, "maxStorage"],
    ] as const
  ) {
    const pick = (l: Load) => l[dimension];
    const max = readLimit(limit);
    if (!grows(pick)) continue;
    if (!max.ok) {
      // A limit that does not read is not "no limit": nothing it guards is admitted until it is fixed.
      errors.push(forbidden(
        rule,
        "spec.workers",
        `team "${teamName}" ${label} quota spec.resourceLimits.${rule} cannot be read (${max.message}); a platform admin must fix it before clusters can grow`,
      ));
      continue;
    }
    const total = add(usage.total(dimension), pick(fp));
    if (max.limit && compare(total, max.limit) > 0) {
      errors.push(forbidden(
        rule,
        "spec.workers",
        `total ${label} (${formatQuantity(total)}) would exceed team "${teamName}" ${label} quota (${
          formatQuantity(max.limit)
        })`,
      ));
    }
  }
  return errors;
}

/** The environment's caps (unlabelled clusters count toward the team totals only); 0 is a cap of zero. */
function environmentLimitErrors({ input, create, fp, old, env, label, oldLabel }: Step): FieldError[] {
  if (!env) return [];
  const errors: FieldError[] = [];
  const movedEnv = create || label !== oldLabel;
  const inEnv = input.usage.inEnvironment(env.name);
  const envMax = env.limits?.maxClusters;
  if (envMax !== undefined && movedEnv && inEnv >= envMax) {
    errors.push(forbidden(
      "environmentMaxClusters",
      "spec",
      `environment "${env.name}" in team "${input.teamName}" already has ${inEnv} cluster(s); env quota limits to ${envMax}`,
    ));
  }
  const perMember = env.limits?.maxClustersPerMember;
  if (perMember === undefined || !(movedEnv || fp.owner !== old?.owner)) return errors;
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
    return errors;
  }
  const owned = input.usage.ownedIn(env.name, fp.owner);
  if (owned >= perMember) {
    const annotations = input.object.metadata?.annotations ?? {};
    const named = OWNER_ANNOTATIONS.map((k) => annotations[k]).find(Boolean);
    errors.push(forbidden(
      "maxClustersPerMember",
      CREATOR_PATH,
      `user "${named}" already owns ${owned} cluster(s) in environment "${env.name}"; env limits to ${perMember} per member`,
    ));
  }
  return errors;
}

/**
 * Every rule a TenantCluster create or update must meet, with every failure. An update is checked like a create
 * for what it changes: a limit is only enforced where the cluster's own share grows (so a lowered quota never
 * blocks an unrelated edit, upstream's deadlock), and a restriction only where the value changes. Only an unset
 * limit is not enforced: `0` admits nothing, and a limit that cannot be read refuses what it guards.
 *
 * @example
 * ```ts
 * checkQuota({ operation: "CREATE", namespace: "team-a", teamName: "a", team, object, usage: usageOfLoads([]) }); // []
 * ```
 */
export function checkQuota(input: QuotaInput): { errors: FieldError[]; load: Load } {
  const { team, object, oldObject, provider } = input;
  const create = input.operation === "CREATE";
  const memo = input.memo ?? new Map();
  const fp = footprintOf(object, team, provider?.key ?? input.oldProviderKey, memo);
  const old = oldObject ? footprintOf(oldObject, team, input.oldProviderKey, memo) : undefined;
  const asQuantity = (v: number | Quantity) => typeof v === "number" ? fromCount(v) : v;
  const label = object.metadata?.labels?.[LABELS.environment];
  const step: Step = {
    input,
    create,
    fp,
    old,
    grows: (pick) => create || !old || compare(asQuantity(pick(fp)), asQuantity(pick(old))) > 0,
    env: (team.environments ?? []).find((e) => e.name === label),
    label,
    oldLabel: oldObject?.metadata?.labels?.[LABELS.environment],
  };
  const errors = [
    ...environmentErrors(step),
    ...restrictionErrors({
      teamName: input.teamName,
      limits: team.resourceLimits,
      shape: resolved(object, team, memo).shape,
      oldShape: oldObject ? resolved(oldObject, team, memo).shape : undefined,
      provider: provider?.spec.provider
        ? {
          type: provider.spec.provider,
          name: provider.name,
          picked: create || provider.key !== input.oldProviderKey,
        }
        : undefined,
    }),
    ...providerLimitErrors(step),
    ...teamLimitErrors(step),
    ...environmentLimitErrors(step),
  ];
  const { problems, ...load } = fp;
  if (problems.length && (create || step.grows((f) => f.nodes))) {
    errors.push(
      forbidden(
        "footprint",
        "spec.workers",
        `cannot count the cluster against quotas: ${problems.join("; ")}`,
      ),
    );
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
  const recorded = recordedShape(cluster.status);
  // Everything resolveShape reads; addons only when set (rare), so look-alike clusters share one resolution.
  const key =
    `${env}\u0000${spec?.kubernetesVersion}\u0000${w?.replicas}\u0000${mt?.cpu}\u0000${mt?.memory}\u0000${mt?.diskSize}\u0000${
      addons === undefined ? "" : JSON.stringify(addons)
    }\u0000${recorded === undefined ? "" : JSON.stringify(recorded)}`;
  const hit = memo.get(key);
  if (hit) return hit;
  const r = resolveTeamShape((cluster.spec ?? {}) as ClusterSpecInput, env, team, recorded);
  memo.set(key, r);
  return r;
}

/** Whether any limit a reservation serialises is in force (without one, admission writes nothing); 0 is one. */
export function quotaInForce(team: TeamSpec, provider: { spec: ProviderConfigSpec } | undefined): boolean {
  const l = team.resourceLimits ?? {};
  const anyCap = [l.maxClusters, l.maxTotalNodes, l.maxCPUCores, l.maxMemory, l.maxStorage].some((v) =>
    v !== undefined
  );
  const envCaps = (team.environments ?? []).some((e) =>
    e.limits?.maxClusters !== undefined || e.limits?.maxClustersPerMember !== undefined
  );
  const pc = provider?.spec.limits;
  return anyCap || envCaps || Boolean(pc?.maxClustersPerTeam || pc?.maxNodesPerTeam);
}

/**
 * What the TenantCluster controller reports of the team's rules about this one cluster, as it stands: `QuotaSatisfied`
 * (the per-cluster node limit, with upstream's controller message) and `FeaturesAllowed` (versions, provider,
 * addons). Without the admission webhooks this is where a cluster over a limit or restriction shows; with them,
 * it shows drift (a limit lowered or a restriction tightened after the cluster was admitted). It reports only:
 * what exists keeps working. Team-wide totals are the Team's `QuotaExceeded`.
 *
 * @example
 * ```ts
 * clusterPolicyConditions("sandbox", team, shape, { type: "harvester", name: "harvester-sandbox" });
 * ```
 */
export function clusterPolicyConditions(
  teamName: string,
  team: TeamSpec,
  shape: EffectiveShape,
  provider: { readonly type: string; readonly name: string } | undefined,
): ConditionInput[] {
  const nodes = perClusterNodeError(teamName, team.resourceLimits, shape.workerCount.value);
  const restricted = restrictionErrors({
    teamName,
    limits: team.resourceLimits,
    shape,
    provider: provider ? { ...provider, picked: true } : undefined,
  });
  return [
    nodes
      ? {
        type: "QuotaSatisfied",
        status: "False",
        reason: "QuotaExceeded",
        message: `quota exceeded: ${nodes.detail}`,
      }
      : {
        type: "QuotaSatisfied",
        status: "True",
        reason: "WithinLimits",
        message: `within team "${teamName}"'s per-cluster limits (team totals: the Team's QuotaExceeded)`,
      },
    restricted.length
      ? {
        type: "FeaturesAllowed",
        status: "False",
        reason: "RestrictionViolated",
        message: restricted.map((e) => e.detail).join("; "),
      }
      : {
        type: "FeaturesAllowed",
        status: "True",
        reason: "Allowed",
        message: `version, provider and addons allowed for team "${teamName}"`,
      },
  ];
}
