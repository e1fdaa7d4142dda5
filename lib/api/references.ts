/**
 * Trust zones of the references a team member can write. A team's objects may point only at what the team's own
 * namespace holds, or at what the platform offers in butler-system: a ProviderConfig's credentials Secret in its own
 * namespace (only the platform's, in butler-system, reach further), a ProviderConfig's team scope naming its own
 * team, a TenantCluster's ProviderConfig in its own namespace or butler-system, and its Team the one whose
 * namespace it is in; and a TenantCluster lives in a team namespace, where its Team counts it. Without these, the controllers (which may read every namespace) would read, and report on,
 * what the writer could not: a confused deputy.
 *
 * The ValidatingAdmissionPolicies in `manifests/admission/references.yaml` refuse the same with the same words; the
 * controllers report a reference stored before them, and never read what it points at.
 *
 * @module
 */
import { SYSTEM_NAMESPACE } from "../butler/mod.ts";

/** The team whose namespace (`team-<name>`) this is, or `undefined`. */
function teamOfNamespace(namespace: string): string | undefined {
  return namespace.startsWith("team-") && namespace.length > 5 ? namespace.slice(5) : undefined;
}

/**
 * Why a ProviderConfig in `namespace` may not use a credentials Secret in `secretNamespace` (`undefined`: it may).
 *
 * @example
 * ```ts
 * credentialsZoneError("team-a", "butler-system");
 * // 'spec.credentialsRef.namespace: a ProviderConfig outside butler-system may reference only a Secret in its own namespace "team-a", not one in "butler-system"'
 * ```
 */
export function credentialsZoneError(namespace: string, secretNamespace: string): string | undefined {
  if (namespace === SYSTEM_NAMESPACE || secretNamespace === namespace) return undefined;
  return `spec.credentialsRef.namespace: a ProviderConfig outside ${SYSTEM_NAMESPACE} may reference only a Secret in its own namespace "${namespace}", not one in "${secretNamespace}"`;
}

/**
 * Why a ProviderConfig in `namespace` may not be scoped to team `scopeTeam` (`undefined`: it may). Only a team
 * namespace's ProviderConfigs are held to their team.
 *
 * @example
 * ```ts
 * scopeZoneError("team-a", "b");
 * // 'spec.scope.teamRef.name: a ProviderConfig in namespace "team-a" may be scoped only to team "a", not "b"'
 * ```
 */
export function scopeZoneError(namespace: string, scopeTeam: string | undefined): string | undefined {
  const team = teamOfNamespace(namespace);
  if (team === undefined || scopeTeam === undefined || scopeTeam === "" || scopeTeam === team) {
    return undefined;
  }
  return `spec.scope.teamRef.name: a ProviderConfig in namespace "${namespace}" may be scoped only to team "${team}", not "${scopeTeam}"`;
}

/**
 * Why a TenantCluster in `namespace` may not use a ProviderConfig in `providerNamespace` (`undefined`: it may).
 *
 * @example
 * ```ts
 * providerZoneError("team-a", "team-b");
 * // 'spec.providerConfigRef.namespace: a TenantCluster may use only a ProviderConfig of its own namespace "team-a" or of butler-system, not one of "team-b"'
 * ```
 */
export function providerZoneError(namespace: string, providerNamespace: string): string | undefined {
  if (providerNamespace === namespace || providerNamespace === SYSTEM_NAMESPACE) return undefined;
  return `spec.providerConfigRef.namespace: a TenantCluster may use only a ProviderConfig of its own namespace "${namespace}" or of ${SYSTEM_NAMESPACE}, not one of "${providerNamespace}"`;
}

/**
 * Why a TenantCluster in `namespace` may not name team `teamRef` (`undefined`: it may): upstream's message, a
 * cluster belongs to the team whose namespace it is in.
 *
 * @example
 * ```ts
 * teamZoneError("team-a", "b"); // 'TenantCluster must be in team namespace "team-b", got "team-a"'
 * ```
 */
export function teamZoneError(namespace: string, teamRef: string | undefined): string | undefined {
  if (!teamRef || namespace === `team-${teamRef}`) return undefined;
  return `TenantCluster must be in team namespace "team-${teamRef}", got "${namespace}"`;
}

/**
 * Why a TenantCluster may not live in `namespace` (`undefined`: it may): every cluster belongs to a team, in the
 * team's namespace `team-<t>`, where its Team counts it against its limits and the admission webhooks (which select
 * namespaces by the label `butler.butlerlabs.dev/team`) see it. A platform's own clusters belong to a Team of the
 * platform. The policy also requires the label, which the controllers cannot see: they require the Team itself.
 *
 * @example
 * ```ts
 * teamNamespaceError("default");
 * // 'TenantCluster must be in a team namespace ("team-<team>", labelled butler.butlerlabs.dev/team by its Team), got "default"'
 * ```
 */
export function teamNamespaceError(namespace: string): string | undefined {
  if (teamOfNamespace(namespace) !== undefined) return undefined;
  return `TenantCluster must be in a team namespace ("team-<team>", labelled butler.butlerlabs.dev/team by its Team), got "${namespace}"`;
}
