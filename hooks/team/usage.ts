import { LABELS, ownerOf } from "../../lib/butler/mod.ts";
import {
  above,
  add,
  formatQuantity,
  fromCount,
  limitOf,
  percentOf,
  type Quantity,
  ZERO,
} from "../../lib/quantity/mod.ts";
import { recordedShape, resolveTeamShape } from "../../lib/shape/mod.ts";
import {
  type ObservedCluster,
  providerKey,
  type ProviderLimitsView,
  recordedProviderRef,
  resolveProviderRef,
  teamNameOf,
  type TeamSpec,
} from "../../lib/api/mod.ts";

/** Above this percentage of a limit, quota status is Warning. */
export const WARNING_PERCENT = 80;
/** Above this percentage, Exceeded. */
export const EXCEEDED_PERCENT = 100;

/** Overall quota state. */
export type QuotaStatus = "OK" | "Warning" | "Exceeded";

interface Dimension {
  readonly label: string;
  readonly used: Quantity;
  readonly limit?: Quantity;
  readonly field?: string;
  readonly scope: MeasureScope;
}

/** Where a measured dimension belongs. */
export type MeasureScope = "team" | "cluster" | "environment" | "member" | "provider";

/**
 * One measured dimension, as a quota bar shows it (`kubectl butler team usage`): the same figures and the same
 * verdict the Team's `quotaStatus` is made of.
 */
export interface Measure {
  readonly scope: MeasureScope;
  /** What is measured, in the words of `quotaMessage` (`CPU`, `clusters in environment prod`, ...). */
  readonly label: string;
  readonly used: string;
  /** Absent: no limit. */
  readonly limit?: string;
  /** `floor(used * 100 / limit)`. */
  readonly percent?: number;
  readonly state: QuotaStatus;
}

/** One measured dimension's verdict. */
interface Verdict {
  readonly state: QuotaStatus;
  readonly text?: string;
  readonly measure: Measure;
}

function percentText(used: Quantity, limit: Quantity): string {
  if (limit.nanos <= 0n) return "100%";
  const tenths = (used.nanos * 1000n) / limit.nanos;
  return `${tenths / 10n}${tenths % 10n ? `.${tenths % 10n}` : ""}%`;
}

function judge(d: Dimension): Verdict {
  const measure = { scope: d.scope, label: d.label, used: formatQuantity(d.used) };
  if (!d.limit) return { state: "OK", measure: { ...measure, state: "OK" } };
  const limited = { ...measure, limit: formatQuantity(d.limit), percent: percentOf(d.used, d.limit) };
  const figures = `${d.label} ${formatQuantity(d.used)}/${formatQuantity(d.limit)} (${
    percentText(d.used, d.limit)
  })`;
  if (above(d.used, d.limit, EXCEEDED_PERCENT)) {
    return { state: "Exceeded", text: `${figures} over limit`, measure: { ...limited, state: "Exceeded" } };
  }
  if (above(d.used, d.limit, WARNING_PERCENT)) {
    return { state: "Warning", text: `${figures} near limit`, measure: { ...limited, state: "Warning" } };
  }
  return { state: "OK", measure: { ...limited, state: "OK" } };
}

const worst = (states: readonly QuotaStatus[]): QuotaStatus =>
  states.includes("Exceeded") ? "Exceeded" : states.includes("Warning") ? "Warning" : "OK";

/** Per-environment usage. */
export interface EnvironmentUsage {
  name: string;
  clusters: number;
  clusterUtilization?: number;
  owners: { owner: string; clusters: number }[];
}

/** The usage part of Team status. */
export interface Usage {
  clusterCount: number;
  resourceUsage: Record<string, unknown>;
  quotaStatus: QuotaStatus;
  quotaMessage: string;
  environments: EnvironmentUsage[];
  /** Every measured dimension with its verdict, in the order `quotaMessage` names them (not written to status). */
  measures: Measure[];
}

/** A ProviderConfig the Team can see (its namespace or butler-system), with its per-team limits. */
export interface TeamProvider {
  /** `namespace/name`. */
  readonly key: string;
  readonly maxClustersPerTeam?: number | undefined;
  readonly maxNodesPerTeam?: number | undefined;
}

/**
 * A ProviderConfig as the Team's usage counts it: its `namespace/name` and its per-team limits. What the Team hook
 * makes of its related ProviderConfigs, and `kubectl butler team usage` of the ones it lists.
 *
 * @example
 * ```ts
 * teamProvider("butler-system/harvester", { spec: { limits: { maxClustersPerTeam: 2 } } });
 * // { key: "butler-system/harvester", maxClustersPerTeam: 2, maxNodesPerTeam: undefined }
 * ```
 */
export function teamProvider(key: string, pc: ProviderLimitsView): TeamProvider {
  return {
    key,
    maxClustersPerTeam: pc.spec?.limits?.maxClustersPerTeam,
    maxNodesPerTeam: pc.spec?.limits?.maxNodesPerTeam,
  };
}

/**
 * Usage from the TenantClusters' effective shapes (clusters being deleted do not count): clusters, nodes, CPU,
 * memory and storage, utilisation where a limit is set, the overall quota state and a message naming each
 * dimension near (> 80 %) or over (> 100 %) its limit. The same per environment, with per-owner counts, and per
 * ProviderConfig with per-team limits (each cluster on the provider it resolves to: its own, the Team default it
 * was given, or the Team's default). A limit of 0 is a limit.
 */
export function computeUsage(
  spec: TeamSpec,
  observed: readonly ObservedCluster[],
  providers: readonly TeamProvider[] = [],
): Usage {
  const clusters = observed.filter((c) => !c.metadata.deletionTimestamp);
  const totals = teamTotals(spec, clusters);
  const limits = spec.resourceLimits;
  const dims: (Dimension & { key: string })[] = [
    {
      scope: "team",
      key: "cluster",
      label: "clusters",
      used: fromCount(clusters.length),
      limit: limitOf(limits?.maxClusters),
    },
    {
      scope: "team",
      key: "node",
      label: "worker nodes",
      used: fromCount(totals.nodes),
      limit: limitOf(limits?.maxTotalNodes),
    },
    { scope: "team", key: "cpu", label: "CPU", used: totals.cpu, limit: limitOf(limits?.maxCPUCores) },
    { scope: "team", key: "memory", label: "memory", used: totals.memory, limit: limitOf(limits?.maxMemory) },
    {
      scope: "team",
      key: "storage",
      label: "storage",
      used: totals.storage,
      limit: limitOf(limits?.maxStorage),
    },
  ];
  const byEnvironment = Map.groupBy(clusters, (c) => c.metadata.labels?.[LABELS.environment]);
  const envs = (spec.environments ?? []).map((e) => environmentUsage(e, byEnvironment.get(e.name) ?? []));
  const verdicts = [
    ...dims.map(judge),
    ...totals.perCluster,
    ...envs.flatMap((e) => e.verdicts),
    ...providerVerdicts(spec, clusters, providers),
  ];
  const notes = verdicts.flatMap((v) => (v.text ? [v.text] : []));
  return {
    clusterCount: clusters.length,
    resourceUsage: {
      clusters: clusters.length,
      totalNodes: totals.nodes,
      totalCPU: formatQuantity(totals.cpu),
      totalMemory: formatQuantity(totals.memory),
      totalStorage: formatQuantity(totals.storage),
      ...Object.fromEntries(
        dims.flatMap((d) => (d.limit ? [[`${d.key}Utilization`, percentOf(d.used, d.limit)]] : [])),
      ),
    },
    quotaStatus: worst(verdicts.map((v) => v.state)),
    quotaMessage: [
      ...(notes.length ? notes : ["all usage within limits"]),
      ...(totals.problems.length ? [`not counted (invalid quantities): ${totals.problems.join("; ")}`] : []),
    ].join("; "),
    environments: envs.map((e) => e.usage),
    measures: verdicts.map((v) => v.measure),
  };
}

/**
 * The team's totals over its clusters' effective shapes (a cluster whose quantities do not parse is not counted,
 * and named), and each cluster's workers against the per-cluster node limit.
 */
function teamTotals(spec: TeamSpec, clusters: readonly ObservedCluster[]) {
  let nodes = 0;
  let cpu = ZERO;
  let memory = { ...ZERO, binary: true };
  let storage = { ...ZERO, binary: true };
  const limits = spec.resourceLimits;
  const perClusterLimit = limits?.maxNodesPerCluster !== undefined
    ? fromCount(limits.maxNodesPerCluster)
    : undefined;
  const problems: string[] = [];
  const perCluster: Verdict[] = [];
  for (const c of clusters) {
    const envName = c.metadata.labels?.[LABELS.environment];
    const r = resolveTeamShape(c.spec ?? {}, envName, spec, recordedShape(c.status));
    nodes += r.shape.workerCount.value;
    if (r.totals) {
      cpu = add(cpu, r.totals.cpu);
      memory = add(memory, r.totals.memory);
      storage = add(storage, r.totals.storage);
    } else {
      problems.push(`${c.metadata.name}: ${r.problems.join(", ")}`);
    }
    if (perClusterLimit) {
      perCluster.push(
        judge({
          scope: "cluster",
          label: `workers of ${c.metadata.name}`,
          used: fromCount(r.shape.workerCount.value),
          limit: perClusterLimit,
        }),
      );
    }
  }
  return { nodes, cpu, memory, storage, problems, perCluster };
}

/** One environment's clusters (those labelled with it) and owners, against its cluster and per-member limits. */
function environmentUsage(
  e: NonNullable<TeamSpec["environments"]>[number],
  inEnv: readonly ObservedCluster[],
): { usage: EnvironmentUsage; verdicts: Verdict[] } {
  const owners = new Map<string, number>();
  for (const c of inEnv) {
    const o = ownerOf(c.metadata.annotations);
    if (o) owners.set(o, (owners.get(o) ?? 0) + 1);
  }
  const envLimit = limitOf(e.limits?.maxClusters);
  const verdicts = [
    judge({
      scope: "environment",
      label: `clusters in environment ${e.name}`,
      used: fromCount(inEnv.length),
      limit: envLimit,
    }),
  ];
  const perMember = limitOf(e.limits?.maxClustersPerMember);
  if (perMember) {
    for (const [owner, n] of [...owners].sort()) {
      verdicts.push(
        judge({
          scope: "member",
          label: `clusters of ${owner} in environment ${e.name}`,
          used: fromCount(n),
          limit: perMember,
        }),
      );
    }
  }
  return {
    usage: {
      name: e.name,
      clusters: inEnv.length,
      ...(envLimit ? { clusterUtilization: percentOf(fromCount(inEnv.length), envLimit) } : {}),
      owners: [...owners].sort(([a], [b]) => (a < b ? -1 : 1)).map(([owner, clusters]) => ({
        owner,
        clusters,
      })),
    },
    verdicts,
  };
}

/** Each ProviderConfig's per-team limits against the team's clusters on it. */
function providerVerdicts(
  spec: TeamSpec,
  clusters: readonly ObservedCluster[],
  providers: readonly TeamProvider[],
): Verdict[] {
  const limited = providers.filter((p) => p.maxClustersPerTeam || p.maxNodesPerTeam);
  if (!limited.length) return [];
  const existing = new Set(providers.map((p) => p.key));
  const on = new Map<string, { clusters: number; nodes: number }>();
  for (const c of clusters) {
    const ns = c.metadata.namespace ?? "";
    const choice = resolveProviderRef(
      ns,
      c.spec,
      { team: teamNameOf(ns, c.spec), defaultName: spec.providerConfigRef?.name },
      (ref) => existing.has(providerKey(ref)),
      recordedProviderRef(c.status),
    );
    if (!choice) continue;
    const key = providerKey(choice.ref);
    const sum = on.get(key) ?? { clusters: 0, nodes: 0 };
    sum.clusters++;
    sum.nodes +=
      resolveTeamShape(c.spec ?? {}, c.metadata.labels?.[LABELS.environment], spec, recordedShape(c.status))
        .shape.workerCount.value;
    on.set(key, sum);
  }
  return limited.flatMap((p) => {
    const used = on.get(p.key) ?? { clusters: 0, nodes: 0 };
    return [
      ...(p.maxClustersPerTeam
        ? [judge({
          scope: "provider",
          label: `clusters on ProviderConfig ${p.key}`,
          used: fromCount(used.clusters),
          limit: fromCount(p.maxClustersPerTeam),
        })]
        : []),
      ...(p.maxNodesPerTeam
        ? [judge({
          scope: "provider",
          label: `worker nodes on ProviderConfig ${p.key}`,
          used: fromCount(used.nodes),
          limit: fromCount(p.maxNodesPerTeam),
        })]
        : []),
    ];
  });
}
