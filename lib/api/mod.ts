/**
 * The API types of `butler.butlerlabs.dev/v1alpha1` as zod schemas, one file per kind: what hooks, admission
 * and the reporter read (kubebuilder's `api/` idea). The CRDs in `manifests/crds/` enforce the same shapes on
 * the server; these schemas read only the fields our code uses and keep the rest (`looseObject`).
 *
 * @module
 */
export * from "./team.ts";
export * from "./tenantcluster.ts";
export * from "./providerconfig.ts";
export * from "./networkpool.ts";
export * from "./ipallocation.ts";
export * from "./grant_record.ts";
export * from "./loadbalancerinventory.ts";
export * from "./admission_cache.ts";
export * from "./ipaddressclaim.ts";
export * from "./references.ts";
