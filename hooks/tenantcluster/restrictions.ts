/**
 * The rules on one TenantCluster's shape that admission enforces and the controller reports alike: the Team's
 * allowed Kubernetes versions, providers and addons (denied addons win), and its per-cluster node limit. Messages
 * are upstream's, verbatim; a failure is a Kubernetes field error.
 *
 * @module
 */
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import type { EffectiveShape } from "../../lib/shape/mod.ts";
import { versionAllowed } from "../../lib/version/mod.ts";
import type { TeamSpec } from "../../lib/api/mod.ts";

/** A field error as Kubernetes prints it (`path: Type: detail`). */
export interface FieldError {
  readonly path: string;
  readonly type: "Forbidden" | "Required value" | "Unsupported value" | "Invalid value";
  readonly detail: string;
  /** The rule that failed, named after the limit (`maxClusters`, `deniedAddons`, ...): metrics count by it. */
  readonly rule: string;
}

/** `field.ErrorList.ToAggregate().Error()`: one error alone, several as `[e1, e2]`. */
export function aggregate(errors: readonly FieldError[]): string {
  const text = errors.map((e) => `${e.path}: ${e.type}: ${e.detail}`);
  return text.length === 1 ? text[0]! : `[${text.join(", ")}]`;
}

/** Values as upstream lists them in a message: quoted, comma-separated. */
export function list(values: readonly string[]): string {
  return values.map((v) => JSON.stringify(v)).join(", ");
}

/** A `Forbidden` field error of a rule. */
export function forbidden(rule: string, path: string, detail: string): FieldError {
  return { path, type: "Forbidden", detail, rule };
}

/** What {@linkcode restrictionErrors} judges: the effective shape, and the provider when it is known. */
export interface RestrictionInput {
  readonly teamName: string;
  readonly limits: TeamSpec["resourceLimits"];
  readonly shape: EffectiveShape;
  /** The shape before an update: a value it already had is not judged again. */
  readonly oldShape?: EffectiveShape | undefined;
  /** The provider's type and name, and whether this request picks it (a create, or a move). */
  readonly provider?: { readonly type: string; readonly name: string; readonly picked: boolean } | undefined;
}

/**
 * The Team's feature restrictions: allowed Kubernetes versions, providers and addons, and denied addons (which
 * win). Judged where the value is new, so a tightened restriction never blocks an unrelated edit; the controller
 * judges the cluster as it stands (no old shape) and reports it.
 *
 * @example
 * ```ts
 * restrictionErrors({ teamName: "a", limits: { deniedAddons: ["longhorn"] }, shape }); // one error per denied addon
 * ```
 */
export function restrictionErrors(r: RestrictionInput): FieldError[] {
  const limits = r.limits ?? {};
  const errors: FieldError[] = [];
  const version = r.shape.kubernetesVersion?.value;
  if (
    version && limits.allowedKubernetesVersions?.length && version !== r.oldShape?.kubernetesVersion?.value &&
    !versionAllowed(version, limits.allowedKubernetesVersions)
  ) {
    errors.push(forbidden(
      "allowedKubernetesVersions",
      "spec.kubernetesVersion",
      `Kubernetes version "${version}" is not allowed for team "${r.teamName}"; allowed: ${
        list(limits.allowedKubernetesVersions)
      }`,
    ));
  }
  const p = r.provider;
  if (p && p.picked && limits.allowedProviders?.length && !limits.allowedProviders.includes(p.type)) {
    errors.push(forbidden(
      "allowedProviders",
      "spec.providerConfigRef",
      `provider "${p.type}" (ProviderConfig "${p.name}") is not allowed for team "${r.teamName}"; allowed: ${
        list(limits.allowedProviders)
      }`,
    ));
  }
  const oldAddons = new Set(r.oldShape?.addons.value ?? []);
  for (const addon of r.shape.addons.value) {
    if (oldAddons.has(addon)) continue;
    if (limits.deniedAddons?.includes(addon)) {
      errors.push(
        forbidden("deniedAddons", "spec.addons", `addon "${addon}" is denied for team "${r.teamName}"`),
      );
    } else if (limits.allowedAddons?.length && !limits.allowedAddons.includes(addon)) {
      errors.push(forbidden(
        "allowedAddons",
        "spec.addons",
        `addon "${addon}" is not allowed for team "${r.teamName}"; allowed: ${list(limits.allowedAddons)}`,
      ));
    }
  }
  return errors;
}

/**
 * The team's per-cluster node limit, for one cluster's worker count (admission, and the controller's report).
 *
 * @example
 * ```ts
 * perClusterNodeError("a", { maxNodesPerCluster: 3 }, 4)?.detail;
 * // 'worker replicas (4) exceeds team "a" per-cluster node limit (3)'
 * ```
 */
export function perClusterNodeError(
  teamName: string,
  limits: TeamSpec["resourceLimits"],
  nodes: number,
): FieldError | undefined {
  const max = limits?.maxNodesPerCluster;
  return max !== undefined && nodes > max
    ? forbidden(
      "maxNodesPerCluster",
      "spec.workers.replicas",
      `worker replicas (${nodes}) exceeds team "${teamName}" per-cluster node limit (${max})`,
    )
    : undefined;
}

/**
 * What the TenantCluster controller reports of the team's rules about this one cluster, as it stands: `QuotaSatisfied`
 * (the per-cluster node limit, with upstream's controller message) and `FeaturesAllowed` (versions, provider,
 * addons). Without the admission webhooks this is where a cluster over a limit or restriction shows; with them,
 * it shows drift (a limit lowered or a restriction tightened after the cluster was admitted). It reports only:
 * what exists keeps working. Team-wide totals are the Team's `QuotaExceeded`.
 *
 * @example
 * ```ts
 * clusterPolicyConditions("sandbox", team, shape, { type: "harvester", name: "harvester-sandbox" });
 * ```
 */
export function clusterPolicyConditions(
  teamName: string,
  team: TeamSpec,
  shape: EffectiveShape,
  provider: { readonly type: string; readonly name: string } | undefined,
): ConditionInput[] {
  const nodes = perClusterNodeError(teamName, team.resourceLimits, shape.workerCount.value);
  const restricted = restrictionErrors({
    teamName,
    limits: team.resourceLimits,
    shape,
    provider: provider ? { ...provider, picked: true } : undefined,
  });
  return [
    nodes
      ? {
        type: "QuotaSatisfied",
        status: "False",
        reason: "QuotaExceeded",
        message: `quota exceeded: ${nodes.detail}`,
      }
      : {
        type: "QuotaSatisfied",
        status: "True",
        reason: "WithinLimits",
        message: `within team "${teamName}"'s per-cluster limits (team totals: the Team's QuotaExceeded)`,
      },
    restricted.length
      ? {
        type: "FeaturesAllowed",
        status: "False",
        reason: "RestrictionViolated",
        message: restricted.map((e) => e.detail).join("; "),
      }
      : {
        type: "FeaturesAllowed",
        status: "True",
        reason: "Allowed",
        message: `version, provider and addons allowed for team "${teamName}"`,
      },
  ];
}
