/**
 * What a ProviderConfig references outside itself: its credentials' namespace and its team scope (the policy
 * `butler-providerconfig-references` keeps both in its trust zone; sync reports one stored before the rule).
 *
 * @module
 */

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
