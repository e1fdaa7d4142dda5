/**
 * Quotas that hold however admission went. A webhook that cannot tell the API server from a stranger writes no
 * ledger (docs/security.md), so two creates may pass admission together and take the team past a limit. The
 * controllers then decide, from what is stored: a TenantCluster starts (takes addresses, becomes Ready) only once
 * its Team has counted it. The Team's sync judges the clusters waiting to start all together: admitted by UID
 * when they fit within the team's limits on top of the clusters started, else all held, with why
 * ({@linkcode judgeWaiting}). The cluster's sync reads that from its Team and records, once, that it started
 * (`Admitted` True), which no later judgement takes back ({@linkcode admissionGate}).
 *
 * All or none, because the two syncs read the API through caches of their own: a cluster admitted once must stay
 * counted by every later judgement, and one judged in a view that did not show it yet is counted by a later
 * view that does, as started or as waiting. Admitting waiting clusters one by one in some order would let a
 * later view order them differently and admit another in the room one had already taken.
 *
 * @module
 */
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { type ProviderConfigSpec, TeamAdmission, type TeamSpec, WAITING_BOUND } from "../../lib/api/mod.ts";
import { type ClusterObject, footprintOf, type ShapeMemo } from "./footprint.ts";
import { checkQuota, quotaInForce } from "./quota.ts";
import { growingUsage, indexClusters } from "./usage.ts";

/** The condition a TenantCluster records once it may start. */
export const ADMITTED = "Admitted";

/** The limits one cluster shares with the others of its team: what two racing creates could both pass. */
const SHARED_LIMIT_RULES: ReadonlySet<string> = new Set([
  "maxClusters",
  "maxTotalNodes",
  "maxCPUCores",
  "maxMemory",
  "maxStorage",
  "maxClustersPerTeam",
  "maxNodesPerTeam",
  "environmentMaxClusters",
  "maxClustersPerMember",
]);

/** The longest reason a Team gives for holding its waiting clusters. */
const HELD_MESSAGE_MAX = 1024;

/** A TenantCluster as the Team judges it: the fields admission counts, its UID and its age. */
export interface JudgedCluster extends ClusterObject {
  readonly metadata?: ClusterObject["metadata"] & {
    readonly uid?: string;
    readonly creationTimestamp?: string | null;
  };
}

/** The `Admitted` True condition among `conditions`, with its reason and message as they were written. */
function startedCondition(conditions: unknown): { reason: string; message: string } | undefined {
  if (!Array.isArray(conditions)) return undefined;
  const c = conditions.find((c) => c?.type === ADMITTED && c?.status === "True");
  if (!c) return undefined;
  const text = (v: unknown, fallback: string) => typeof v === "string" && v ? v : fallback;
  return { reason: text(c.reason, "Started"), message: text(c.message, "started") };
}

/** Whether a TenantCluster's status records that it started (`Admitted` True). */
export function started(cluster: { readonly status?: unknown }): boolean {
  return startedCondition((cluster.status as { conditions?: unknown } | null | undefined)?.conditions) !==
    undefined;
}

/** Everything {@linkcode judgeWaiting} decides from. */
export interface JudgeInput {
  readonly namespace: string;
  readonly teamName: string;
  readonly team: TeamSpec;
  /** The TenantClusters of the team namespace. */
  readonly clusters: readonly JudgedCluster[];
  /** The ProviderConfig key (`namespace/name`) a cluster counts on, if it resolves to one. */
  readonly providerOf: (cluster: JudgedCluster) => string | undefined;
  /** The ProviderConfigs the team may use, by key. */
  readonly providers: ReadonlyMap<string, { readonly name: string; readonly spec: ProviderConfigSpec }>;
}

const byAge = (a: JudgedCluster, b: JudgedCluster) => {
  const ta = a.metadata?.creationTimestamp ?? "", tb = b.metadata?.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  const na = a.metadata?.name ?? "", nb = b.metadata?.name ?? "";
  return na < nb ? -1 : na > nb ? 1 : 0;
};

/**
 * The Team's judgement of its clusters waiting to start: all admitted when, counted oldest first on top of the
 * clusters started (none being deleted), none passes a limit the clusters share; else all held, naming the first
 * limit passed. At most {@linkcode WAITING_BOUND} are named; the others wait for a later judgement. Deterministic.
 *
 * @example
 * ```ts
 * judgeWaiting({ namespace: "team-a", teamName: "a", team, clusters, providerOf, providers: new Map() });
 * // { admitted: [{ name: "web", uid: "…" }] }
 * ```
 */
export function judgeWaiting(input: JudgeInput): TeamAdmission {
  const memo: ShapeMemo = new Map();
  const live = input.clusters.filter((c) => !c.metadata?.deletionTimestamp);
  const load = (c: JudgedCluster) => footprintOf(c, input.team, input.providerOf(c), memo);
  const base = indexClusters(
    live.filter(started).map((c) => ({ name: c.metadata?.name ?? "", deleting: false, load: load(c) })),
  );
  const waiting = live.filter((c) => !started(c) && c.metadata?.uid).sort(byAge);
  if (!waiting.length) return {};
  const counted = growingUsage(base);
  let passed: string | undefined;
  for (const c of waiting) {
    const key = input.providerOf(c);
    const provider = key ? input.providers.get(key) : undefined;
    const { errors, load } = checkQuota({
      operation: "CREATE",
      namespace: input.namespace,
      teamName: input.teamName,
      team: input.team,
      object: c,
      provider: provider && key ? { key, ...provider } : undefined,
      usage: counted.usage(),
      memo,
    });
    const shared = errors.find((e) => SHARED_LIMIT_RULES.has(e.rule));
    passed ??= shared && `${c.metadata?.name}: ${shared.detail}`;
    counted.add(load);
  }
  const named = waiting.slice(0, WAITING_BOUND).map((c) => ({
    name: c.metadata!.name!,
    uid: c.metadata!.uid!,
  }));
  if (passed === undefined) return { admitted: named };
  const message =
    `the clusters waiting to start do not fit within team "${input.teamName}"'s limits together (${passed}): none starts until enough of them are deleted or the limits raised`;
  return {
    held: named,
    message: message.length > HELD_MESSAGE_MAX ? `${message.slice(0, HELD_MESSAGE_MAX - 3)}...` : message,
  };
}

/** What {@linkcode admissionGate} decides from: the cluster, its Team, its provider, what it had. */
export interface GateInput {
  readonly uid: string;
  readonly teamName?: string | undefined;
  readonly team?: TeamSpec | undefined;
  /** The Team's `status` as read. */
  readonly teamStatus?: unknown;
  readonly provider?: { readonly spec: Pick<ProviderConfigSpec, "limits"> } | undefined;
  /** The cluster's `status.conditions` as read: an `Admitted` True there is kept as it was. */
  readonly previous: unknown;
  /** Whether the cluster has children already (it started before `Admitted` was recorded). */
  readonly hasChildren: boolean;
}

/**
 * Whether a TenantCluster may start, and its `Admitted` condition: once True it stays (a cluster that started is
 * never stopped by a later judgement); a cluster whose Team and provider set no limit clusters share starts at
 * once; a cluster outside every team namespace never does; else it waits for its Team to admit it by UID.
 */
export function admissionGate(
  input: GateInput,
): { readonly admitted: boolean; readonly condition: ConditionInput } {
  const yes = (reason: string, message: string) => ({
    admitted: true,
    condition: { type: ADMITTED, status: "True" as const, reason, message },
  });
  const no = (reason: string, message: string) => ({
    admitted: false,
    condition: { type: ADMITTED, status: "False" as const, reason, message },
  });
  const team = input.teamName;
  const before = startedCondition(input.previous);
  if (before) return yes(before.reason, before.message);
  if (input.hasChildren) return yes("Started", "started before admission was recorded: it has children");
  if (!team) return no("NoTeam", "not in a team namespace: no Team counts it, so it does not start");
  if (!input.team) return no("AwaitingTeam", `waiting for team "${team}" to be read`);
  if (!quotaInForce(input.team, input.provider)) {
    return yes("NoSharedLimits", `team "${team}" and its provider set no limit its clusters share`);
  }
  const judged = TeamAdmission.parse((input.teamStatus as { admission?: unknown } | undefined)?.admission);
  if (judged.admitted?.some((c) => c.uid === input.uid)) {
    return yes("WithinLimits", `team "${team}" counted this cluster within its limits`);
  }
  if (judged.held?.some((c) => c.uid === input.uid)) {
    return no("QuotaExceeded", judged.message ?? `team "${team}" holds this cluster`);
  }
  return no("AwaitingTeam", `waiting for team "${team}" to count this cluster against its limits`);
}
