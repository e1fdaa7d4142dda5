import { LABELS, MIGRATION_ANNOTATION, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { providerRefOf, providerZoneError, teamZoneError } from "../../lib/api/mod.ts";
import type { PolicyTwin } from "../../lib/plan/mod.ts";

type Obj = Parameters<PolicyTwin["check"]>[1];

/**
 * The rule of `butler-tenantcluster-identity` (manifests/admission/tenantcluster-identity.yaml) that holds for
 * everyone, platform admins included: the environment label changes only in a migration. Its owner rules
 * decide by who asks, and allow the platform admin the plan applies as.
 */
export const TENANTCLUSTER_IDENTITY_POLICY: PolicyTwin = {
  name: "butler-tenantcluster-identity",
  kind: "TenantCluster",
  reason: "Forbidden",
  check: (op, object, oldObject) => {
    if (op !== "UPDATE" || !oldObject) return undefined;
    const env = (o: typeof object) => o.metadata.labels?.[LABELS.environment];
    const migration = (o: typeof object) => o.metadata.annotations?.[MIGRATION_ANNOTATION] === "true";
    // Only the update that sets the annotation migrates: one left over from an earlier migration permits nothing.
    if (env(object) === env(oldObject) || (migration(object) && !migration(oldObject))) return undefined;
    return migration(oldObject)
      ? `env label changes require the "${MIGRATION_ANNOTATION}" annotation set to "true" by the same update; it is left over from an earlier migration: remove it, then set it again together with the label`
      : `env label changes require the "${MIGRATION_ANNOTATION}" annotation set to "true"; use \`butleradm env migrate\``;
  },
};

/** The team a TenantCluster names in `spec.teamRef.name`, or `undefined`. */
function teamRefOf(o: Obj): string | undefined {
  const name = (o.spec as { teamRef?: { name?: unknown } } | undefined)?.teamRef?.name;
  return typeof name === "string" && name ? name : undefined;
}

/** The namespace a TenantCluster's ProviderConfig is looked up in (butler-system without one). */
function providerNamespaceOf(o: Obj): string {
  return providerRefOf(o.spec)?.namespace ?? SYSTEM_NAMESPACE;
}

/**
 * `butler-tenantcluster-references` (manifests/admission/references.yaml) for the plan: a TenantCluster's
 * ProviderConfig and Team stay in its trust zone (lib/api/references.ts); an update keeping what was stored passes.
 */
export const TENANTCLUSTER_REFERENCES_POLICY: PolicyTwin = {
  name: "butler-tenantcluster-references",
  kind: "TenantCluster",
  reason: "Forbidden",
  check: (op, object, oldObject) => {
    const ns = object.metadata.namespace ?? "";
    const kept = <T>(pick: (o: Obj) => T) =>
      op === "UPDATE" && oldObject !== undefined && pick(object) === pick(oldObject);
    return (kept(providerNamespaceOf) ? undefined : providerZoneError(ns, providerNamespaceOf(object))) ??
      (kept(teamRefOf) ? undefined : teamZoneError(ns, teamRefOf(object)));
  },
};
