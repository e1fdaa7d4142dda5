import { LABELS, MIGRATION_ANNOTATION } from "../../lib/butler/mod.ts";
import type { PolicyTwin } from "../../lib/plan/mod.ts";

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
