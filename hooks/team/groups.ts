import type { HookConfig } from "../../lib/hook_context/mod.ts";

/**
 * The RBAC subject names of a Team group: the name as written, behind the prefix the API server gives the
 * group's identity provider. A group entry that names identity providers matches only their groups (each one's
 * prefix from `IDP_GROUP_PREFIXES`, else `OIDC_GROUPS_PREFIX`); one that names none matches groups from any
 * configured provider (the seed), so it is bound under every configured prefix. Kubernetes compares group names
 * exactly, so no other normalisation applies.
 *
 * @example
 * ```ts
 * const config = { oidcGroupsPrefix: "oidc:", idpGroupPrefixes: { "google-workspace": "google:" } };
 * groupSubjects("developers", ["Google-Workspace"], config); // ["google:developers"]
 * groupSubjects("developers", [], config); // ["google:developers", "oidc:developers"]
 * ```
 */
export function groupSubjects(
  name: string,
  identityProviders: readonly string[],
  config: Pick<HookConfig, "oidcGroupsPrefix" | "idpGroupPrefixes">,
): string[] {
  const prefixOf = (idp: string) => config.idpGroupPrefixes[idp.toLowerCase()] ?? config.oidcGroupsPrefix;
  const prefixes = identityProviders.length
    ? identityProviders.map(prefixOf)
    : [config.oidcGroupsPrefix, ...Object.values(config.idpGroupPrefixes)];
  return [...new Set(prefixes.map((p) => `${p}${name}`))].sort();
}
