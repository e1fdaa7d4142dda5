/**
 * The effective shape of a TenantCluster, and each value's source. A field the cluster sets is its own. An unset
 * field keeps the value the cluster was given when it was first resolved (recorded in `status.effective`), so a
 * later change of a default never resizes, upgrades or re-addons an existing cluster. Only a field resolved for
 * the first time reads the defaults: the environment's `clusterDefaults` -> the team's `clusterDefaults` (both set
 * by team admins) -> the platform's `resourceLimits` per-cluster defaults (set by platform admins only) ->
 * built-in defaults. Per-node CPU and memory from a team admin's defaults apply up to the platform's
 * `defaultCPUPerNode`/`defaultMemoryPerNode`: defaults can make nodes smaller than the platform's, never larger;
 * asking for more is explicit, where admission checks every quota. (Node counts are bounded by the platform's
 * `maxNodesPerCluster`, and `defaultNodeCount` has a CRD default, so it stays a fallback.) The one function the
 * TenantCluster and Team controllers and admission use.
 *
 * @module
 */
import { z } from "zod";
import { normalizeVersion } from "../version/mod.ts";
import { compare, formatQuantity, multiply, parseQuantity, type Quantity } from "../quantity/mod.ts";

/** Where an effective value came from (`platform`: the Team's `resourceLimits` per-cluster defaults, set by platform admins). */
export type Source = "explicit" | "platform" | "environment" | "team" | "default";

/** Every source, as the CRD's status schema enumerates them. */
export const SOURCES = [
  "explicit",
  "platform",
  "environment",
  "team",
  "default",
] as const satisfies readonly Source[];

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
  /** What the cluster was resolved to before (`status.effective`): unset fields keep it. */
  readonly recorded?: RecordedShape | undefined;
}

const recordedValue = <T extends z.ZodType>(value: T) =>
  z.object({ value, source: z.enum(SOURCES) }).optional().catch(undefined);

/**
 * A shape as recorded in `status.effective` (only Metacontroller writes TenantCluster status); a field that does
 * not read is treated as never resolved.
 */
export const RecordedShape = z.object({
  kubernetesVersion: recordedValue(z.string()),
  workerCount: recordedValue(z.number().int().min(1)),
  workerCPU: recordedValue(z.string()),
  workerMemory: recordedValue(z.string()),
  workerDisk: recordedValue(z.string()),
  addons: recordedValue(z.array(z.string())),
}).partial();
/** A recorded shape. */
export type RecordedShape = z.infer<typeof RecordedShape>;

/**
 * The recorded shape in a TenantCluster's status, if any.
 *
 * @example
 * ```ts
 * recordedShape({ effective: { workerCount: { value: 3, source: "team" } } })?.workerCount; // { value: 3, source: "team" }
 * ```
 */
export function recordedShape(status: unknown): RecordedShape | undefined {
  const effective = (status as { effective?: unknown } | null | undefined)?.effective;
  if (effective === undefined || effective === null) return undefined;
  const r = RecordedShape.safeParse(effective);
  return r.success ? r.data : undefined;
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

/**
 * A team admin's per-node default, up to the platform's: the platform's when it is smaller or the team admin set
 * none. Text that does not parse is passed on (the shape reports it).
 */
function atMostPlatform(
  fromTeam: Effective<string> | undefined,
  platform: string | undefined,
): Candidate<string> {
  if (platform === undefined) return fromTeam ? [fromTeam.value, fromTeam.source] : [undefined, "default"];
  if (!fromTeam) return [platform, "platform"];
  const a = parseQuantity(fromTeam.value);
  const b = parseQuantity(platform);
  return a.ok && b.ok && compare(a.value, b.value) > 0
    ? [platform, "platform"]
    : [fromTeam.value, fromTeam.source];
}

/** A recorded value as a candidate, unless it was explicit (a field the cluster no longer sets resolves anew). */
function kept<T>(r: { value: T; source: Source } | undefined): Candidate<T> {
  return r && r.source !== "explicit" ? [r.value, r.source] : [undefined, "default"];
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
  const { cluster, environment: env, team, limits, recorded: was } = input;
  const mt = cluster.workers?.machineTemplate;
  const version = first<string>([
    [cluster.kubernetesVersion, "explicit"],
    kept(was?.kubernetesVersion),
    [env?.kubernetesVersion, "environment"],
    [team?.kubernetesVersion, "team"],
  ]);
  const shape: EffectiveShape = {
    ...(version
      ? { kubernetesVersion: { value: normalizeVersion(version.value), source: version.source } }
      : {}),
    workerCount: first<number>([
      [cluster.workers?.replicas, "explicit"],
      kept(was?.workerCount),
      [env?.workerCount, "environment"],
      [team?.workerCount, "team"],
      [limits?.defaultNodeCount, "platform"],
      [BUILT_IN.workerCount, "default"],
    ])!,
    workerCPU: first<string>([
      [text(mt?.cpu), "explicit"],
      kept(was?.workerCPU),
      atMostPlatform(
        first<string>([[text(env?.workerCPU), "environment"], [text(team?.workerCPU), "team"]]),
        text(limits?.defaultCPUPerNode),
      ),
      [BUILT_IN.workerCPU, "default"],
    ])!,
    workerMemory: first<string>([
      [text(mt?.memory), "explicit"],
      kept(was?.workerMemory),
      atMostPlatform(
        first<string>([[gi(env?.workerMemoryGi), "environment"], [gi(team?.workerMemoryGi), "team"]]),
        text(limits?.defaultMemoryPerNode),
      ),
      [BUILT_IN.workerMemory, "default"],
    ])!,
    workerDisk: first<string>([
      [text(mt?.diskSize), "explicit"],
      kept(was?.workerDisk),
      [gi(env?.workerDiskGi), "environment"],
      [gi(team?.workerDiskGi), "team"],
      [BUILT_IN.workerDisk, "default"],
    ])!,
    addons: first<string[]>([
      [cluster.addons?.map((a) => a.name), "explicit"],
      kept(was?.addons ? { ...was.addons, value: [...was.addons.value] } : undefined),
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
 * Resolves a cluster's shape in its team: what it recorded, the environment named by its label (if the team
 * defines it), the team's defaults and per-cluster limits. What the Team's usage and quota admission both count.
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
  recorded?: RecordedShape | undefined,
): ResolvedShape {
  return resolveShape({
    recorded,
    cluster,
    environment: environment
      ? team?.environments?.find((e) => e.name === environment)?.clusterDefaults
      : undefined,
    team: team?.clusterDefaults,
    limits: team?.resourceLimits,
  });
}
