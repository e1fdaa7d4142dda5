import { LABELS } from "../../lib/butler/mod.ts";
import type { PolicyTwin } from "../../lib/plan/mod.ts";

/** The annotation that lets an update move a cluster to another environment. */
const MIGRATION_ANNOTATION = "butler.butlerlabs.dev/migration-operation";

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
    if (env(object) === env(oldObject) || object.metadata.annotations?.[MIGRATION_ANNOTATION] === "true") {
      return undefined;
    }
    return `env label changes require the "${MIGRATION_ANNOTATION}" annotation set to "true"; use \`butleradm env migrate\``;
  },
};
