/**
 * What one TenantCluster takes from its team's quotas: its load (environment, owner, provider, nodes, CPU, memory,
 * storage) under the Team's defaults, as the Team status counts it, and that load as the quota ledger records it.
 *
 * @module
 */
import { LABELS, ownerOf } from "../../lib/butler/mod.ts";
import { formatQuantity, ZERO } from "../../lib/quantity/mod.ts";
import {
  type ClusterSpecInput,
  recordedShape,
  type ResolvedShape,
  resolveTeamShape,
} from "../../lib/shape/mod.ts";
import type { TeamSpec } from "../../lib/api/mod.ts";
import type { Footprint } from "./reservations.ts";
import type { Load } from "./usage.ts";

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

/** A cluster's shape resolved under its Team's defaults, once per distinct shape in `memo`. */
export function resolved(cluster: ClusterObject, team: TeamSpec | undefined, memo: ShapeMemo): ResolvedShape {
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
