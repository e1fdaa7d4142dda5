/**
 * The effective shape of a TenantCluster: every unset field resolves explicit -> environment `clusterDefaults`
 * -> team `clusterDefaults` -> team `resourceLimits` per-cluster defaults -> built-in defaults, and each value
 * carries its source. The one function both the TenantCluster and the Team controllers use.
 *
 * @module
 */
import { normalizeVersion } from "../version/mod.ts";
import { formatQuantity, multiply, parseQuantity, type Quantity } from "../quantity/mod.ts";

/** Where an effective value came from. */
export type Source = "explicit" | "environment" | "team" | "default";

/** A value and its source. */
export interface Effective<T> {
  readonly value: T;
  readonly source: Source;
}

/** Team or environment `clusterDefaults`. */
export interface ClusterDefaults {
  readonly kubernetesVersion?: string | undefined;
  readonly workerCount?: number | undefined;
  readonly workerCPU?: string | number | undefined;
  readonly workerMemoryGi?: number | undefined;
  readonly workerDiskGi?: number | undefined;
  readonly defaultAddons?: readonly string[] | undefined;
}

/** Team `resourceLimits` per-cluster defaults. */
export interface PerClusterDefaults {
  readonly defaultNodeCount?: number | undefined;
  readonly defaultCPUPerNode?: string | number | undefined;
  readonly defaultMemoryPerNode?: string | number | undefined;
}

/** The TenantCluster fields the shape reads. */
export interface ClusterSpecInput {
  readonly kubernetesVersion?: string | undefined;
  readonly workers?: {
    readonly replicas?: number | undefined;
    readonly machineTemplate?: {
      readonly cpu?: string | number | undefined;
      readonly memory?: string | number | undefined;
      readonly diskSize?: string | number | undefined;
    } | undefined;
  } | undefined;
  readonly addons?: readonly { readonly name: string }[] | undefined;
}

/** Everything the shape is resolved from. */
export interface ShapeInput {
  readonly cluster: ClusterSpecInput;
  readonly environment?: ClusterDefaults | undefined;
  readonly team?: ClusterDefaults | undefined;
  readonly limits?: PerClusterDefaults | undefined;
}

/** Built-in defaults (upstream's TenantCluster defaults; `defaultNodeCount` is 3). */
export const BUILT_IN = {
  workerCount: 3,
  workerCPU: "4",
  workerMemory: "16Gi",
  workerDisk: "100Gi",
} as const;

/** The resolved shape, as `status.effective` shows it. */
export interface EffectiveShape {
  readonly kubernetesVersion?: Effective<string>;
  readonly workerCount: Effective<number>;
  readonly workerCPU: Effective<string>;
  readonly workerMemory: Effective<string>;
  readonly workerDisk: Effective<string>;
  readonly addons: Effective<string[]>;
}

/** Per-cluster totals for usage: each per-node quantity times the worker count. */
export interface ShapeTotals {
  readonly nodes: number;
  readonly cpu: Quantity;
  readonly memory: Quantity;
  readonly storage: Quantity;
}

/** The outcome of {@linkcode resolveShape}: the shape, its totals when every quantity parses, and problems. */
export interface ResolvedShape {
  readonly shape: EffectiveShape;
  readonly totals?: ShapeTotals;
  readonly problems: readonly string[];
}

type Candidate<T> = readonly [T | undefined, Source];

function first<T>(candidates: readonly Candidate<T>[]): Effective<T> | undefined {
  for (const [value, source] of candidates) if (value !== undefined) return { value, source };
  return undefined;
}

const gi = (n: number | undefined) => (n === undefined ? undefined : `${n}Gi`);
const text = (v: string | number | undefined) => (v === undefined ? undefined : String(v));

/**
 * Resolves a TenantCluster's effective shape.
 *
 * @example
 * ```ts
 * resolveShape({ cluster: {}, team: { workerCount: 2 }, environment: { workerMemoryGi: 2 } }).shape.workerMemory;
 * // { value: "2Gi", source: "environment" }
 * ```
 */
export function resolveShape(input: ShapeInput): ResolvedShape {
  const { cluster, environment: env, team, limits } = input;
  const mt = cluster.workers?.machineTemplate;
  const version = first<string>([
    [cluster.kubernetesVersion, "explicit"],
    [env?.kubernetesVersion, "environment"],
    [team?.kubernetesVersion, "team"],
  ]);
  const shape: EffectiveShape = {
    ...(version
      ? { kubernetesVersion: { value: normalizeVersion(version.value), source: version.source } }
      : {}),
    workerCount: first<number>([
      [cluster.workers?.replicas, "explicit"],
      [env?.workerCount, "environment"],
      [team?.workerCount, "team"],
      [limits?.defaultNodeCount, "team"],
      [BUILT_IN.workerCount, "default"],
    ])!,
    workerCPU: first<string>([
      [text(mt?.cpu), "explicit"],
      [text(env?.workerCPU), "environment"],
      [text(team?.workerCPU), "team"],
      [text(limits?.defaultCPUPerNode), "team"],
      [BUILT_IN.workerCPU, "default"],
    ])!,
    workerMemory: first<string>([
      [text(mt?.memory), "explicit"],
      [gi(env?.workerMemoryGi), "environment"],
      [gi(team?.workerMemoryGi), "team"],
      [text(limits?.defaultMemoryPerNode), "team"],
      [BUILT_IN.workerMemory, "default"],
    ])!,
    workerDisk: first<string>([
      [text(mt?.diskSize), "explicit"],
      [gi(env?.workerDiskGi), "environment"],
      [gi(team?.workerDiskGi), "team"],
      [BUILT_IN.workerDisk, "default"],
    ])!,
    addons: first<string[]>([
      [cluster.addons?.map((a) => a.name), "explicit"],
      [team?.defaultAddons ? [...team.defaultAddons] : undefined, "team"],
      [[], "default"],
    ])!,
  };
  const problems: string[] = [];
  const quantity = (field: string, e: Effective<string>): Quantity | undefined => {
    const p = parseQuantity(e.value);
    if (p.ok) return p.value;
    problems.push(`${field} (${e.source}): ${p.message}`);
    return undefined;
  };
  const cpu = quantity("workerCPU", shape.workerCPU);
  const memory = quantity("workerMemory", shape.workerMemory);
  const disk = quantity("workerDisk", shape.workerDisk);
  const n = shape.workerCount.value;
  const totals = cpu && memory && disk
    ? { nodes: n, cpu: multiply(cpu, n), memory: multiply(memory, n), storage: multiply(disk, n) }
    : undefined;
  return { shape: canonical(shape, cpu, memory, disk), ...(totals ? { totals } : {}), problems };
}

/** Quantities shown canonically (`4` not `4.0`), so equal values compare equal in status. */
function canonical(s: EffectiveShape, cpu?: Quantity, memory?: Quantity, disk?: Quantity): EffectiveShape {
  return {
    ...s,
    workerCPU: cpu ? { ...s.workerCPU, value: formatQuantity(cpu) } : s.workerCPU,
    workerMemory: memory ? { ...s.workerMemory, value: formatQuantity(memory) } : s.workerMemory,
    workerDisk: disk ? { ...s.workerDisk, value: formatQuantity(disk) } : s.workerDisk,
  };
}

/** The Team fields a cluster's shape resolves against (`Team.spec`, structurally). */
export interface TeamDefaults {
  readonly clusterDefaults?: ClusterDefaults | undefined;
  readonly resourceLimits?: PerClusterDefaults | undefined;
  readonly environments?:
    | readonly { readonly name: string; readonly clusterDefaults?: ClusterDefaults }[]
    | undefined;
}

/**
 * Resolves a cluster's shape in its team: the environment named by its label (if the team defines it), the
 * team's defaults and per-cluster limits. What the Team's usage and quota admission both count.
 *
 * @example
 * ```ts
 * resolveTeamShape({}, "dev", { environments: [{ name: "dev", clusterDefaults: { workerCount: 2 } }] })
 *   .shape.workerCount; // { value: 2, source: "environment" }
 * ```
 */
export function resolveTeamShape(
  cluster: ClusterSpecInput,
  environment: string | undefined,
  team: TeamDefaults | undefined,
): ResolvedShape {
  return resolveShape({
    cluster,
    environment: environment
      ? team?.environments?.find((e) => e.name === environment)?.clusterDefaults
      : undefined,
    team: team?.clusterDefaults,
    limits: team?.resourceLimits,
  });
}
