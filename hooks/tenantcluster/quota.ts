/**
 * TenantCluster quotas, environments and feature restrictions at admission (issue #14): pure checks of a
 * proposed cluster against its Team, its ProviderConfig and the team's usage (the TenantClusters that exist plus
 * the ledger's fresh reservations). Upstream's messages verbatim; every failing check is reported, as a Kubernetes
 * field error list.
 *
 * @module
 */
import { CREATOR_ANNOTATION, LABELS, OWNER_ANNOTATIONS } from "../../lib/butler/mod.ts";
import { add, compare, formatQuantity, fromCount, type Quantity, readLimit } from "../../lib/quantity/mod.ts";
import type { EnvironmentSpec, ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import type { Load, Usage } from "./usage.ts";
import { type FieldError, forbidden, list, perClusterNodeError, restrictionErrors } from "./restrictions.ts";
import { type ClusterObject, footprintOf, resolved, type ShapeMemo } from "./footprint.ts";

const ENV_PATH = `metadata.labels[${LABELS.environment}]`;
const CREATOR_PATH = `metadata.annotations[${CREATOR_ANNOTATION}]`;

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

/** Whether any limit a reservation serialises is in force (without one, admission writes nothing); 0 is one. */
export function quotaInForce(
  team: TeamSpec,
  provider: { readonly spec: Pick<ProviderConfigSpec, "limits"> } | undefined,
): boolean {
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
