/**
 * AdmissionReviews as the API server sends them, for tests and benchmarks of the webhooks.
 *
 * @module
 */
import { API_VERSION } from "../butler/mod.ts";

/** An object under review: its name and namespace are the review's. */
export interface ReviewedObject {
  readonly metadata: { readonly name: string; readonly namespace: string };
  readonly [field: string]: unknown;
}

/**
 * The AdmissionReview of a TenantCluster create (uid = the object's name, user `u`).
 *
 * @example
 * ```ts
 * JSON.stringify(tenantClusterCreateReview({ metadata: { name: "a", namespace: "team-t" }, spec: {} }));
 * ```
 */
export function tenantClusterCreateReview(object: ReviewedObject): Record<string, unknown> {
  const [group, version] = API_VERSION.split("/") as [string, string];
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: object.metadata.name,
      kind: { group, version, kind: "TenantCluster" },
      resource: { group, version, resource: "tenantclusters" },
      name: object.metadata.name,
      namespace: object.metadata.namespace,
      operation: "CREATE",
      userInfo: { username: "u" },
      object,
      oldObject: null,
    },
  };
}
