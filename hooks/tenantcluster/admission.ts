import { butlerPath, LABELS, OWNER_ANNOTATIONS } from "../../lib/butler/mod.ts";
import type { AdmissionDecision, AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { type ReadPlan, type Reads, type Staged, staged } from "../../lib/http/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import { ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import {
  aggregate,
  checkQuota,
  type ClusterObject,
  covers,
  type FieldError,
  footprintOf,
  footprintText,
  loadOf,
  quotaInForce,
  type ShapeMemo,
  usageOf,
} from "./quota.ts";
import { type Footprint, LEDGER_NAME, quotaLedgerObject, readQuotaLedger } from "./reservations.ts";
import { teamNameOf } from "./sync.ts";
import { providerRefOf } from "../../lib/api/mod.ts";

const ledgerPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps${name ? `/${name}` : ""}`;

const sameRef = (a: ReturnType<typeof providerRefOf>, b: ReturnType<typeof providerRefOf>) =>
  a?.name === b?.name && a?.namespace === b?.namespace;

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
 * ProviderConfig, the TenantClusters of its namespace and the quota ledger. A delete: the ledger, to release the
 * reservation.
 */
export function tenantClusterAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  const r = review.request;
  const namespace = r.namespace ?? "";
  if (r.operation === "DELETE") return { ledger: { path: ledgerPath(namespace, LEDGER_NAME) } };
  if (!checked(review)) return {};
  const team = teamNameOf(namespace, r.object?.spec);
  const ref = providerRefOf(r.object?.spec);
  return {
    ...(ref ? { provider: { path: butlerPath("providerconfigs", ref.namespace, ref.name) } } : {}),
    ...(team ? { team: { path: butlerPath("teams", undefined, team) } } : {}),
    clusters: { path: butlerPath("tenantclusters", namespace), list: true },
    ledger: { path: ledgerPath(namespace, LEDGER_NAME) },
  };
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

/** Upstream's team-scope rule: a team-scoped ProviderConfig may only be used by TenantClusters of its team. */
function scopeError(
  review: AdmissionReviewRequest,
  pc: { spec?: { scope?: { type?: string; teamRef?: { name?: string } } } } | undefined,
): FieldError | undefined {
  const r = review.request;
  const ref = providerRefOf(r.object?.spec);
  const moved = r.operation === "CREATE" || !sameRef(ref, providerRefOf(r.oldObject?.spec));
  if (!ref || !pc || !moved || (pc.spec?.scope?.type ?? "platform") !== "team") return undefined;
  const owner = pc.spec?.scope?.teamRef?.name;
  const team = teamNameOf(r.namespace ?? "", r.object?.spec);
  const detail = !owner
    ? "provider is team-scoped but has no teamRef"
    : !team
    ? "cluster has no teamRef but provider is team-scoped"
    : owner === team
    ? undefined
    : `ProviderConfig "${ref.name}" is scoped to team "${owner}", but TenantCluster references team "${team}"`;
  return detail
    ? { rule: "providerScope", path: "spec.providerConfigRef", type: "Forbidden", detail }
    : undefined;
}

const CONTENDED: AdmissionDecision = {
  allowed: false,
  code: 409,
  reason: "Conflict",
  message:
    `too many TenantClusters of this team are being admitted at once: the quota ledger (ConfigMap ${LEDGER_NAME}) kept changing; try again`,
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
  if (r.operation === "DELETE") {
    if (!ledger.reservations.has(name)) return { allowed: true };
    const write = {
      method: "PUT" as const,
      path: ledgerPath(namespace, LEDGER_NAME),
      body: quotaLedgerObject(namespace, ledger, name, undefined, now),
    };
    return staged({ allowed: true }, write, { allowed: true });
  }
  if (!checked(review)) return { allowed: true };

  const errors: FieldError[] = [];
  const scope = scopeError(review, reads.provider as Parameters<typeof scopeError>[1]);
  if (scope) errors.push(scope);
  const team = TeamSpec.safeParse((reads.team as { spec?: unknown } | undefined)?.spec);
  const teamName = teamNameOf(namespace, r.object?.spec) ?? "";
  if (!reads.team || !team.success) return deny(errors);

  const ref = providerRefOf(r.object?.spec);
  const oldRef = providerRefOf(r.oldObject?.spec);
  const pcSpec = ProviderConfigSpec.safeParse((reads.provider as { spec?: unknown } | undefined)?.spec);
  const provider = ref && pcSpec.success
    ? { key: `${ref.namespace}/${ref.name}`, name: ref.name, spec: pcSpec.data }
    : undefined;
  const memo: ShapeMemo = new Map();
  const clusters = (Array.isArray(reads.clusters) ? reads.clusters as ClusterObject[] : []).map((c) => {
    const cref = providerRefOf(c.spec);
    return {
      name: c.metadata?.name ?? "",
      deleting: Boolean(c.metadata?.deletionTimestamp),
      load: footprintOf(c, team.data, cref ? `${cref.namespace}/${cref.name}` : undefined, memo),
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
    oldProviderKey: oldRef ? `${oldRef.namespace}/${oldRef.name}` : undefined,
    usage: usageOf(clusters, ledger, name, now),
    memo,
  });
  errors.push(...quota);
  if (errors.length) return deny(errors);
  if (!quotaInForce(team.data, provider)) return { allowed: true };
  const stored = new Map(clusters.filter((c) => !c.deleting).map((c) => [c.name, c.load]));
  const settled = (key: string, r: Footprint) => {
    const s = stored.get(key);
    return s !== undefined && covers(s, loadOf(r));
  };
  const body = quotaLedgerObject(
    namespace,
    ledger,
    name,
    { ...footprintText(load), at: formatTime(now) },
    now,
    settled,
  );
  const write = ledger.resourceVersion
    ? { method: "PUT" as const, path: ledgerPath(namespace, LEDGER_NAME), body }
    : { method: "POST" as const, path: ledgerPath(namespace), body };
  return staged({ allowed: true }, write, CONTENDED);
}

function deny(errors: readonly FieldError[]): AdmissionDecision {
  return errors.length
    ? {
      allowed: false,
      code: 403,
      reason: "Forbidden",
      message: aggregate(errors),
      causes: errors.map((e) => ({ reason: e.rule, field: e.path, message: e.detail })),
    }
    : { allowed: true };
}
