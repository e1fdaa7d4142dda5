import { butlerPath } from "../../lib/butler/mod.ts";
import type { AdmissionDecision, AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import type { ReadPlan, Reads } from "../../lib/http/mod.ts";
import { providerRefOf, teamNameOf } from "./sync.ts";

/** The provider a create names, or an update changes to: the only case anything is read. */
function refToCheck(review: AdmissionReviewRequest): ReturnType<typeof providerRefOf> {
  const r = review.request;
  if (r.operation !== "CREATE" && r.operation !== "UPDATE") return undefined;
  const ref = providerRefOf(r.object?.spec);
  if (!ref || r.operation === "CREATE") return ref;
  const old = providerRefOf(r.oldObject?.spec);
  return old && old.name === ref.name && old.namespace === ref.namespace ? undefined : ref;
}

/** The ProviderConfig a TenantCluster names, when it is created or moved to another one. */
export function tenantClusterAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  const ref = refToCheck(review);
  return ref ? { provider: { path: butlerPath("providerconfigs", ref.namespace, ref.name) } } : {};
}

const deny = (message: string): AdmissionDecision => ({
  allowed: false,
  code: 403,
  reason: "Forbidden",
  message: `spec.providerConfigRef: Forbidden: ${message}`,
});

/**
 * TenantCluster admission: a team-scoped ProviderConfig may only be used by TenantClusters of its team
 * (upstream's messages). A provider that does not exist yet is let through: the controller reports it, and a
 * GitOps sync may create the two in either order.
 */
export function admitTenantCluster(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const ref = refToCheck(review);
  const pc = reads.provider as
    | { spec?: { scope?: { type?: string; teamRef?: { name?: string } } } }
    | undefined;
  if (!ref || !pc || (pc.spec?.scope?.type ?? "platform") !== "team") return { allowed: true };
  const owner = pc.spec?.scope?.teamRef?.name;
  const team = teamNameOf(review.request.namespace ?? "", review.request.object?.spec);
  if (!owner) return deny("provider is team-scoped but has no teamRef");
  if (!team) return deny("cluster has no teamRef but provider is team-scoped");
  return owner === team ? { allowed: true } : deny(
    `ProviderConfig "${ref.name}" is scoped to team "${owner}", but TenantCluster references team "${team}"`,
  );
}
