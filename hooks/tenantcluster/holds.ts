/**
 * Quotas that hold however admission went. A webhook that cannot tell the API server from a stranger writes no
 * ledger (docs/security.md), so two reviews decided on one view may both pass and take the team past a limit: two
 * creates, two growing updates, two moves into a full environment. The controllers then decide, from what is
 * stored, what each cluster may use: a TenantCluster acts (starts, or runs with more workers, in another
 * environment, for another owner or on another ProviderConfig) only on what its Team has admitted.
 *
 * What a cluster asks for beyond what it was admitted is its claim, which it writes to its quota record
 * (hooks/tenantcluster/record.ts): a child that Metacontroller writes under the version it observed. The Team's
 * sync judges every claim of its clusters ({@linkcode judgeClaims}) in the order they were made (the record
 * versions), each counted over what its cluster was admitted (the larger of the two, in both places while it
 * moves) on top of what is admitted and of every claim before it, admitted or not; a claim is admitted, by the
 * version of the record that holds it, when it passes no limit the clusters share where it adds to one, else held
 * with why. The cluster's sync applies a grant only to that version of its record (hooks/tenantcluster/gate.ts).
 *
 * Why this holds with every cache stale and every write late: a grant names one version of a record, and a later
 * version (the claim withdrawn, changed or applied) can never be granted by it. A Team's later view of a record is
 * never older than its earlier one (one informer), so every later judgement still counts a claim that may yet be
 * applied, as a claim or as admitted; and since it counts every claim before the one it judges, granted or not, it
 * never needs to know which an earlier judgement (or a Team status read late, or restored) granted. New claims
 * have later versions than any it saw, so they come after. Where versions cannot be ordered (not etcd revisions),
 * the claims are judged all together: all admitted or all held.
 *
 * @module
 */
import type { ProviderConfigSpec, TeamAdmission, TeamSpec } from "../../lib/api/mod.ts";
import { WAITING_BOUND } from "../../lib/api/mod.ts";
import { type ClusterObject, footprintOf, type ShapeMemo } from "./footprint.ts";
import { checkQuota } from "./quota.ts";
import { type ObservedRecord, type Share, shareLoad, shareObject } from "./record.ts";
import { type CountedCluster, growingUsage, indexClusters, type Load } from "./usage.ts";
import { isRevision } from "../../lib/kube/revision.ts";

/** The condition a TenantCluster records once it may start. */
export const ADMITTED = "Admitted";

/** The limits one cluster shares with the others of its team: what two racing reviews could both pass. */
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

/** The longest reason a Team gives for holding its clusters' claims, and for holding one of them. */
const HELD_MESSAGE_MAX = 1024;
const HELD_REASON_MAX = 512;

/** A TenantCluster as the Team judges it: the fields admission counts, its UID and its age. */
export interface JudgedCluster extends ClusterObject {
  readonly metadata?: ClusterObject["metadata"] & {
    readonly uid?: string;
    readonly creationTimestamp?: string | null;
  };
}

/** The `Admitted` True condition among `conditions`, with its reason and message as they were written. */
export function startedCondition(conditions: unknown): { reason: string; message: string } | undefined {
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

/** Everything {@linkcode judgeClaims} decides from. */
export interface JudgeInput {
  readonly namespace: string;
  readonly teamName: string;
  readonly team: TeamSpec;
  /** The TenantClusters of the team namespace. */
  readonly clusters: readonly JudgedCluster[];
  /** The quota records of the namespace, by the UID of the cluster that owns each. */
  readonly records: ReadonlyMap<string, ObservedRecord>;
  /** The ProviderConfig key (`namespace/name`) a cluster without a record counts on, if it resolves to one. */
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

/** What a cluster has: the object its checks read, the provider it counts on, its load. */
interface Had {
  readonly object: ClusterObject;
  readonly provider?: string | undefined;
  readonly load: Load;
}

/** A claim to judge: its cluster, the record version that holds it, what it asks for, what the cluster has. */
interface Claim {
  readonly cluster: JudgedCluster;
  readonly version: string;
  readonly share: Share;
  readonly had?: Had | undefined;
}

/**
 * What each live cluster has (its record's admitted share; one that started before it had a record, as its spec
 * asks), and every claim its record holds.
 */
function readClaims(input: JudgeInput, memo: ShapeMemo): { had: CountedCluster[]; claims: Claim[] } {
  const had: CountedCluster[] = [];
  const claims: Claim[] = [];
  for (const c of input.clusters) {
    if (c.metadata?.deletionTimestamp) continue;
    const name = c.metadata?.name ?? "";
    const record = c.metadata?.uid ? input.records.get(c.metadata.uid) : undefined;
    let h: Had | undefined;
    if (record?.admitted) {
      h = {
        object: shareObject(name, record.admitted),
        provider: record.admitted.provider,
        load: shareLoad(record.admitted),
      };
    } else if (started(c)) {
      const provider = input.providerOf(c);
      const { problems: _, ...load } = footprintOf(c, input.team, provider, memo);
      h = { object: c, provider, load };
    }
    if (h) had.push({ name, deleting: false, load: h.load });
    if (record?.claim) claims.push({ cluster: c, version: record.version, share: record.claim, had: h });
  }
  return { had, claims: claims.sort((a, b) => byAge(a.cluster, b.cluster)) };
}

/** The order claims were made in: by record version (etcd revisions), then name. */
function byVersion(a: Claim, b: Claim): number {
  const va = BigInt(a.version), vb = BigInt(b.version);
  if (va !== vb) return va < vb ? -1 : 1;
  return byAge(a.cluster, b.cluster);
}

/** Each claim checked over what is admitted and every claim before it: the first limit it passes, if any. */
function checkEach(input: JudgeInput, had: CountedCluster[], claims: readonly Claim[], memo: ShapeMemo) {
  const counted = growingUsage(indexClusters(had));
  return claims.map((claim) => {
    const name = claim.cluster.metadata?.name ?? "";
    const key = claim.share.provider;
    const provider = key ? input.providers.get(key) : undefined;
    const { had: h } = claim;
    if (h) counted.add(h.load, -1);
    const { errors, load } = checkQuota({
      operation: h ? "UPDATE" : "CREATE",
      namespace: input.namespace,
      teamName: input.teamName,
      team: input.team,
      object: shareObject(name, claim.share),
      oldObject: h?.object,
      provider: provider && key ? { key, ...provider } : undefined,
      oldProviderKey: h?.provider,
      usage: counted.usage(),
      memo,
    });
    if (h) {
      counted.add(h.load);
      counted.grow(h.load, { ...load, provider: key });
    } else counted.add({ ...load, provider: key });
    return { claim, passed: errors.find((e) => SHARED_LIMIT_RULES.has(e.rule))?.detail };
  });
}

const bounded = (text: string, max: number) => text.length > max ? `${text.slice(0, max - 3)}...` : text;

/**
 * The Team's judgement of its clusters' claims, in the order they were made: each admitted when, counted over what
 * the clusters have and every claim before it (a claim of a cluster that has something counts as the larger of
 * the two, in both places), it passes no limit the clusters share where it adds to one; else held, with the limit
 * it passes. Claims whose order cannot be read are admitted all together or held all together. At most
 * {@linkcode WAITING_BOUND} of each are named; the others wait for a later judgement. Deterministic.
 *
 * @example
 * ```ts
 * judgeClaims({ namespace: "team-a", teamName: "a", team, clusters, records, providerOf, providers: new Map() });
 * // { admitted: [{ name: "web", uid: "…", claim: "4711" }] }
 * ```
 */
export function judgeClaims(input: JudgeInput): TeamAdmission {
  // Most syncs find no claim: then what the clusters have is not counted at all.
  if (![...input.records.values()].some((r) => r.claim)) return {};
  const memo: ShapeMemo = new Map();
  const { had, claims } = readClaims(input, memo);
  if (!claims.length) return {};
  const ordered = claims.every((c) => isRevision(c.version));
  const judged = checkEach(input, had, ordered ? [...claims].sort(byVersion) : claims, memo);
  const allHeld = !ordered && judged.some((j) => j.passed !== undefined);
  const entry = (c: Claim) => ({
    name: c.cluster.metadata!.name!,
    uid: c.cluster.metadata!.uid!,
    claim: c.version,
  });
  const admitted = judged.filter((j) => !allHeld && j.passed === undefined).map((j) => entry(j.claim));
  const first = judged.find((j) => j.passed !== undefined);
  const held = judged.filter((j) => allHeld || j.passed !== undefined).map((j) => ({
    ...entry(j.claim),
    message: bounded(
      `${j.passed ?? `held with the others: ${first?.claim.cluster.metadata?.name}: ${first?.passed}`}`,
      HELD_REASON_MAX,
    ),
  }));
  return {
    ...(admitted.length ? { admitted: admitted.slice(0, WAITING_BOUND) } : {}),
    ...(held.length
      ? {
        held: held.slice(0, WAITING_BOUND),
        message: bounded(
          `${held.length} claim(s) do not fit within team "${input.teamName}"'s limits with what its clusters have and the claims made before them (first: ${first?.claim.cluster.metadata?.name}: ${first?.passed}): each waits until it fits (delete or scale back a cluster, or raise the limit)`,
          HELD_MESSAGE_MAX,
        ),
      }
      : {}),
  };
}
