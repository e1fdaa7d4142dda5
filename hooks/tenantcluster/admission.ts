/**
 * TenantCluster admission: what a review reads ({@linkcode tenantClusterAdmissionReads}), and the decision
 * ({@linkcode admitTenantCluster}): the ProviderConfig's team scope and deletion, environments, restrictions and
 * limits against the team's usage, held by a reservation in the quota ledger.
 *
 * @module
 */
import { storedBoundErrors } from "./bounds.ts";
import { butlerPath, LABELS, OWNER_ANNOTATIONS } from "../../lib/butler/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  REFUSAL_BOUNDS,
} from "../../lib/contract/mod.ts";
import type { KubeWrite, ReadPlan, Reads, Staged } from "../../lib/http/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { checkQuota, quotaInForce } from "./quota.ts";
import { aggregate, type FieldError } from "./restrictions.ts";
import { type ClusterObject, footprintOf } from "./footprint.ts";
import { usageOf } from "./usage.ts";
import { LEDGER_NAME, readQuotaLedger } from "./reservations.ts";
import {
  type ProviderChoice,
  providerKey,
  type ProviderRef,
  providerRefOf,
  recordedProviderRef,
  resolveProviderRef,
  teamNameOf,
  teamProviderNamespaces,
  TenantClusterSpec,
} from "../../lib/api/mod.ts";
import { formatPath } from "../../lib/contract/mod.ts";
import {
  basisOf,
  clusterView,
  indexed,
  parseProviderSpec,
  parseTeamSpec,
  shapeMemo,
  TEAM_PROVIDER,
  teamDefaultName,
  unseenExpired,
} from "./admission_views.ts";
import { ledgerPath, releaseOnDelete, reserve } from "./admission_ledger.ts";

/** What quotas, environments and restrictions read of a TenantCluster: an update that leaves it alone reads nothing. */
function quotaRelevant(o: ClusterObject | null | undefined) {
  const a = o?.metadata?.annotations ?? {};
  return JSON.stringify([
    o?.spec ?? null,
    o?.metadata?.labels?.[LABELS.environment] ?? null,
    OWNER_ANNOTATIONS.map((k) => a[k] ?? null),
  ]);
}

function checked(review: AdmissionReviewRequest): boolean {
  const r = review.request;
  if (r.operation === "CREATE") return true;
  return r.operation === "UPDATE" &&
    quotaRelevant(r.object as ClusterObject) !== quotaRelevant(r.oldObject as ClusterObject);
}

/**
 * What a TenantCluster review reads. A create, or an update that changes what quotas count: its Team, its
 * ProviderConfig, the TenantClusters of its namespace and the quota ledger; once the Team is read, its default
 * ProviderConfig where the controller looks for it (every cluster without its own reference uses it, so the
 * default decides and counts like an explicit one). A delete: the ledger, and the cluster itself (a reservation is
 * released only for a cluster really going).
 *
 * The ledger is read first: the TenantClusters are then read at least at its {@linkcode SEEN_ANNOTATION} version,
 * and once more from the API when a reservation past its grace has no cluster in that view.
 */
export function tenantClusterAdmissionReads(
  review: AdmissionReviewRequest,
  reads: Reads = {},
  context?: Pick<HookContext, "now">,
): ReadPlan {
  const r = review.request;
  const namespace = r.namespace ?? "";
  const ledger = { ledger: { path: ledgerPath(namespace, LEDGER_NAME), cas: true } };
  if (r.operation === "DELETE") {
    // The stored cluster decides a release, never a cache: a review that lags it must not free a reservation.
    return {
      ...ledger,
      cluster: { path: butlerPath("tenantclusters", namespace, r.name ?? ""), live: true },
    };
  }
  if (!checked(review)) return {};
  const team = teamNameOf(namespace, r.object?.spec);
  const ref = providerRefOf(r.object?.spec);
  const recorded = ref ? undefined : recordedProviderRef((r.object as ClusterObject | undefined)?.status);
  const first: ReadPlan = {
    ...(ref ? { provider: { path: butlerPath("providerconfigs", ref.namespace, ref.name) } } : {}),
    ...(recorded
      ? { recordedProvider: { path: butlerPath("providerconfigs", recorded.namespace, recorded.name) } }
      : {}),
    ...(team ? { team: { path: butlerPath("teams", undefined, team) } } : {}),
    ...ledger,
  };
  if (!("ledger" in reads)) return first;
  const defaultName = team ? teamDefaultName(reads.team) : undefined;
  const seen = readQuotaLedger(reads.ledger).seen;
  const clusters = butlerPath("tenantclusters", namespace);
  return {
    ...first,
    clusters: { path: clusters, list: true, ...(seen ? { atLeast: seen } : {}) },
    ...(defaultName
      ? Object.fromEntries(
        teamProviderNamespaces(namespace).map((ns) => [
          `${TEAM_PROVIDER}${ns}`,
          { path: butlerPath("providerconfigs", ns, defaultName) },
        ]),
      )
      : {}),
    ...(context && "clusters" in reads && unseenExpired(reads, review.request.name ?? "", context.now)
      ? { clustersLive: { path: clusters, list: true, live: true } }
      : {}),
  };
}

/** What the reads are once a staged ledger write has landed: the ledger it writes, in place of the one read. */
export function tenantClusterAdmissionChain(reads: Reads, write: KubeWrite): Reads {
  return { ...reads, ledger: write.body };
}

/**
 * Reviews that may write a namespace's quota ledger share a key: after a conflict, they retry one at a time per
 * namespace in each process (concurrent creates of one team would otherwise mostly conflict with each other
 * again). Other replicas still meet the ledger's resourceVersion precondition.
 */
export function tenantClusterAdmissionKey(review: AdmissionReviewRequest): string | undefined {
  const r = review.request;
  return r.operation === "DELETE" || checked(review) ? `quota-ledger/${r.namespace ?? ""}` : undefined;
}

/** The ProviderConfig object read for a choice: the named one, the recorded Team default, or the current default. */
function providerObject(choice: ProviderChoice | undefined, reads: Reads): unknown {
  if (!choice) return undefined;
  if (choice.source === "explicit") return reads.provider;
  return choice.recorded ? reads.recordedProvider : reads[`${TEAM_PROVIDER}${choice.ref.namespace}`];
}

/** A ProviderConfig as admission reads it. */
interface ProviderObject {
  readonly metadata?: { readonly deletionTimestamp?: string | null };
  readonly spec?: { scope?: { type?: string; teamRef?: { name?: string } } };
}

/** How a message names the provider: by name, and as the Team's default when the cluster does not name it. */
function providerLabel(choice: ProviderChoice, team: string): string {
  return choice.source === "explicit"
    ? `ProviderConfig "${choice.ref.name}"`
    : `ProviderConfig "${choice.ref.name}" (team "${team}"'s default providerConfigRef)`;
}

/**
 * Rules on the provider a create or a move picks, explicit or the Team's default: upstream's team scope (a
 * team-scoped ProviderConfig only for TenantClusters of its team), and no new cluster on a ProviderConfig being
 * deleted (it would hold the deletion on its finalizer).
 */
function providerErrors(
  choice: ProviderChoice,
  pc: ProviderObject,
  team: string | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  const path = "spec.providerConfigRef";
  if (pc.metadata?.deletionTimestamp) {
    errors.push({
      rule: "providerDeleting",
      path,
      type: "Forbidden",
      detail: `${providerLabel(choice, team ?? "")} is being deleted; new TenantClusters cannot use it`,
    });
  }
  if ((pc.spec?.scope?.type ?? "platform") !== "team") return errors;
  const owner = pc.spec?.scope?.teamRef?.name;
  const detail = !owner
    ? "provider is team-scoped but has no teamRef"
    : !team
    ? "cluster has no teamRef but provider is team-scoped"
    : owner === team
    ? undefined
    : `ProviderConfig "${choice.ref.name}" is scoped to team "${owner}", but TenantCluster references team "${team}"`;
  if (detail) errors.push({ rule: "providerScope", path, type: "Forbidden", detail });
  return errors;
}

/** The answer when the API server is too slow for admission to read what it decides on, in time. */
export const TENANT_CLUSTER_ADMISSION_UNAVAILABLE: AdmissionDecision = {
  allowed: false,
  code: 429,
  reason: "TooManyRequests",
  message:
    "the Kubernetes API did not answer TenantCluster admission's reads (the team, its quota ledger, its clusters) or the ledger's write in time; try again",
};

/**
 * TenantCluster admission: the ProviderConfig's team scope, environments, feature restrictions, and the team's,
 * environment's and ProviderConfig's limits against usage (the TenantClusters that exist and the ledger's fresh
 * reservations). An admitted create or growing update holds only once its reservation is written to the ledger
 * under the resourceVersion read ({@linkcode staged}); a conflict means another admission of the team went first,
 * and the adapter reads and decides again. A Team or ProviderConfig that does not exist yet is let through: the
 * controller reports it, and a GitOps sync may create them in any order. A delete releases its reservation.
 */
export function admitTenantCluster(
  review: AdmissionReviewRequest,
  context: Pick<HookContext, "now">,
  reads: Reads,
): AdmissionDecision | Staged<AdmissionDecision> {
  const r = review.request;
  const namespace = r.namespace ?? "";
  const name = r.name ?? (r.object as ClusterObject | undefined)?.metadata?.name ?? "";
  const ledger = readQuotaLedger(reads.ledger);
  const now = context.now;
  if (r.operation === "DELETE") return releaseOnDelete(review, ledger, reads.cluster, now);
  // What the CRD bounds first (the API server refuses it before it asks), then what a team may store.
  const shape = checked(review) ? shapeErrors(r.object?.spec, r.oldObject?.spec) : [];
  const stored = storedBoundErrors(r.object as ClusterObject, r.oldObject as ClusterObject | undefined);
  if (shape.length || stored.length) return deny(shape.length ? shape : stored);
  if (!checked(review)) return { allowed: true };

  const errors: FieldError[] = [];
  const teamName = teamNameOf(namespace, r.object?.spec) ?? "";
  const defaults = { team: teamName || undefined, defaultName: teamDefaultName(reads.team) };
  const teamProvider = (ref: ProviderRef) => reads[`${TEAM_PROVIDER}${ref.namespace}`];
  const resolve = (c: ClusterObject | null | undefined) =>
    resolveProviderRef(
      namespace,
      c?.spec,
      defaults,
      (ref) => teamProvider(ref) !== undefined,
      recordedProviderRef(c?.status),
    );
  const choice = resolve(r.object as ClusterObject);
  const oldChoice = r.oldObject ? resolve(r.oldObject as ClusterObject) : undefined;
  const pcObject = providerObject(choice, reads) as ProviderObject | undefined;
  const key = choice && providerKey(choice.ref);
  const oldKey = oldChoice && providerKey(oldChoice.ref);
  if (choice && pcObject && (r.operation === "CREATE" || key !== oldKey)) {
    errors.push(...providerErrors(choice, pcObject, teamNameOf(namespace, r.object?.spec)));
  }
  if (!reads.team) return deny(errors);
  const team = parseTeamSpec((reads.team as { spec?: unknown }).spec);
  // A Team the webhook cannot read must not mean "no limits": fail closed, and say where.
  if (!team.success) return deny([...errors, teamUnreadable(teamName, team.error.issues[0]!)]);

  const pcSpec = parseProviderSpec(pcObject?.spec);
  const provider = choice && pcSpec.success
    ? { key: key!, name: choice.ref.name, spec: pcSpec.data }
    : undefined;
  const memo = shapeMemo(team.data);
  const view = clusterView(reads);
  const clusters = indexed(view.items, basisOf(reads), (c) => {
    const cref = resolve(c);
    return {
      name: c.metadata?.name ?? "",
      deleting: Boolean(c.metadata?.deletionTimestamp),
      load: footprintOf(c, team.data, cref && providerKey(cref.ref), memo),
      version: c.metadata?.resourceVersion,
    };
  });
  const { errors: quota, load } = checkQuota({
    operation: r.operation as "CREATE" | "UPDATE",
    namespace,
    teamName,
    team: team.data,
    object: r.object as ClusterObject,
    oldObject: r.oldObject as ClusterObject | undefined,
    provider,
    oldProviderKey: oldKey,
    usage: usageOf(clusters, ledger, name, now, view.live),
    memo,
  });
  errors.push(...quota);
  if (errors.length) return deny(errors);
  if (!quotaInForce(team.data, provider)) return { allowed: true };
  return reserve(namespace, name, load, ledger, { clusters, live: view.live }, now);
}

/** The refusal of a Team whose spec admission cannot read. */
function teamUnreadable(teamName: string, issue: { path: PropertyKey[]; message: string }): FieldError {
  return {
    rule: "teamUnreadable",
    path: "spec",
    type: "Forbidden",
    detail: `team "${teamName}" has a spec admission cannot read (${
      formatPath(["spec", ...issue.path])
    }: ${issue.message}); its limits cannot be checked until a platform admin fixes it`,
  };
}

/**
 * The spec's fields past what the CRD allows (a list over its `maxItems`, a string over its `maxLength`, a wrong
 * type): what the API server refuses before it asks admission, so only a review it did not send carries them.
 * An update of an object stored before a bound keeps what it had (the API server ratchets unchanged fields), so
 * a spec whose old version was past the same bounds is judged by the rules alone.
 */
function shapeErrors(spec: unknown, oldSpec: unknown): FieldError[] {
  const parsed = TenantClusterSpec.safeParse(spec ?? {});
  if (parsed.success || (oldSpec !== undefined && !TenantClusterSpec.safeParse(oldSpec).success)) return [];
  return parsed.error.issues.map((i) => ({
    rule: "schema",
    path: formatPath(["spec", ...i.path]),
    type: "Invalid value",
    detail: i.message,
  }));
}

/** A refusal of every error, the causes past {@linkcode REFUSAL_BOUNDS} counted in its message. */
function deny(errors: readonly FieldError[]): AdmissionDecision {
  if (!errors.length) return { allowed: true };
  const listed = errors.slice(0, REFUSAL_BOUNDS.causes);
  const more = errors.length - listed.length;
  return {
    allowed: false,
    code: 403,
    reason: "Forbidden",
    message: more ? `${aggregate(listed)} (and ${more} more)` : aggregate(listed),
    causes: listed.map((e) => ({ reason: e.rule, field: e.path, message: e.detail })),
  };
}
