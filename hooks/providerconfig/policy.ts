import { credentialsZoneError, scopeZoneError } from "../../lib/api/mod.ts";
import type { PolicyTwin } from "../../lib/plan/mod.ts";

type Obj = Parameters<PolicyTwin["check"]>[1];

/** The namespace of a ProviderConfig's credentials Secret: `credentialsRef.namespace`, else its own. */
export function credentialsNamespaceOf(
  pc: { metadata: { namespace?: string | undefined }; spec?: unknown },
): string {
  const ns = (pc.spec as { credentialsRef?: { namespace?: unknown } } | undefined)?.credentialsRef?.namespace;
  return typeof ns === "string" && ns ? ns : pc.metadata.namespace ?? "";
}

/** The team a ProviderConfig is scoped to (`spec.scope.teamRef.name`), or `undefined`. */
export function scopeTeamOf(pc: { readonly metadata: unknown; readonly spec?: unknown }): string | undefined {
  const name = (pc.spec as { scope?: { teamRef?: { name?: unknown } } } | undefined)?.scope?.teamRef?.name;
  return typeof name === "string" && name ? name : undefined;
}

/**
 * `butler-providerconfig-references` (manifests/admission/references.yaml) for the plan: a ProviderConfig's
 * credentials and team scope stay in its trust zone (lib/api/references.ts); an update keeping what was stored
 * passes.
 */
export const PROVIDERCONFIG_REFERENCES_POLICY: PolicyTwin = {
  name: "butler-providerconfig-references",
  kind: "ProviderConfig",
  reason: "Forbidden",
  check: (op, object, oldObject) => {
    const ns = object.metadata.namespace ?? "";
    const kept = <T>(pick: (o: Obj) => T) =>
      op === "UPDATE" && oldObject !== undefined && pick(object) === pick(oldObject);
    const secret = credentialsNamespaceOf(object);
    const scope = scopeTeamOf(object);
    return (kept(credentialsNamespaceOf) ? undefined : credentialsZoneError(ns, secret)) ??
      (kept(scopeTeamOf) ? undefined : scopeZoneError(ns, scope));
  },
};
