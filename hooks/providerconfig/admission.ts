import { butlerPath, keyedItems } from "../../lib/butler/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  deletionInUse,
} from "../../lib/contract/mod.ts";
import type { ReadPlan, Reads } from "../../lib/http/mod.ts";
import { clustersReferencing, deletionBlockedMessage } from "./sync.ts";

/** A ProviderConfig delete needs every TenantCluster (any namespace may reference a butler-system provider). */
export function providerConfigAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  return review.request.operation === "DELETE"
    ? { tenantClusters: { path: butlerPath("tenantclusters"), list: true } }
    : {};
}

/**
 * ProviderConfig admission: a delete is refused while a TenantCluster references it, with the message its
 * finalizer reports (the finalizer stays as the second line of defence). Every other rule is CRD CEL.
 *
 * @example
 * ```ts
 * admitProviderConfig(review, context, { tenantClusters: [] }); // { allowed: true }
 * ```
 */
export function admitProviderConfig(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const r = review.request;
  if (r.operation !== "DELETE") return { allowed: true };
  const name = r.name ?? "";
  const blocking = clustersReferencing({ name, namespace: r.namespace }, keyedItems(reads.tenantClusters));
  if (!blocking.length) return { allowed: true };
  const message = deletionBlockedMessage(name, blocking);
  return deletionInUse(message);
}
