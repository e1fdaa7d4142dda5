/**
 * Butler's API names (group, version, kinds, labels, annotations, the system namespace) and the few helpers every
 * hook shares with them: an object's owner, a status number, Butler resource paths, list items keyed as
 * Metacontroller keys them, and the check that Metacontroller delivered every related group a hook asked for.
 *
 * @module
 */
import {
  missingGroups,
  objectKey,
  type ObjectMap,
  type RelatedMap,
  type TypeRef,
  UndeliveredGroupsError,
} from "../contract/mod.ts";

/** API group of every Butler kind. */
export const GROUP = "butler.butlerlabs.dev";
/** apiVersion of every Butler kind. */
export const API_VERSION = `${GROUP}/v1alpha1`;
/** Namespace of platform objects (NetworkPools, platform ProviderConfigs). */
export const SYSTEM_NAMESPACE = "butler-system";

/** Butler kinds as declared in the controllers' rules (exact apiVersion). */
export const KINDS = {
  NetworkPool: { apiVersion: API_VERSION, kind: "NetworkPool" },
  IPAllocation: { apiVersion: API_VERSION, kind: "IPAllocation" },
  ProviderConfig: { apiVersion: API_VERSION, kind: "ProviderConfig" },
  TenantCluster: { apiVersion: API_VERSION, kind: "TenantCluster" },
  Team: { apiVersion: API_VERSION, kind: "Team" },
  LoadBalancerInventory: { apiVersion: API_VERSION, kind: "LoadBalancerInventory" },
} as const satisfies Record<string, TypeRef>;

/** Label and annotation keys the seeds define. */
export const LABELS = {
  team: `${GROUP}/team`,
  tenant: `${GROUP}/tenant`,
  networkPool: `${GROUP}/network-pool`,
  allocationType: `${GROUP}/allocation-type`,
  allocationRole: `${GROUP}/allocation-role`,
  environment: `${GROUP}/environment`,
  providerConfig: `${GROUP}/provider-config`,
  /** On a TenantCluster's quota record (hooks/tenantcluster/record.ts), which its Team reads by it. */
  quotaRecord: `${GROUP}/quota-record`,
  managedBy: "app.kubernetes.io/managed-by",
} as const;

/**
 * Annotations naming who owns a cluster, owner first. Upstream's controller copies creator-email into owner; here
 * nothing writes owner: every reader (admission, the Team's usage) takes owner, else creator-email, so the copy
 * would change nothing, and setting either on an existing cluster is a claim the identity policy checks.
 */
export const OWNER_ANNOTATIONS = [`${GROUP}/owner`, `${GROUP}/creator-email`] as const;

/**
 * Set to `"true"` by the same update that changes a TenantCluster's environment label: the seeds' migration
 * contract (`kubectl butler env migrate` sets it with the label, then removes it).
 */
export const MIGRATION_ANNOTATION = `${GROUP}/migration-operation`;

/** The creator annotation admission requires where an environment caps clusters per member. */
export const CREATOR_ANNOTATION = `${GROUP}/creator-email`;

/**
 * Who owns a cluster, lower-cased (identities compare case-insensitively), from its annotations.
 *
 * @example
 * ```ts
 * ownerOf({ "butler.butlerlabs.dev/creator-email": "Carol@Example.com" }); // "carol@example.com"
 * ```
 */
export function ownerOf(
  annotations: Readonly<Record<string, string>> | null | undefined,
): string | undefined {
  for (const key of OWNER_ANNOTATIONS) if (annotations?.[key]) return annotations[key]!.toLowerCase();
  return undefined;
}

/** Saturates a count for an integer status field (IPv6 pools can exceed 2^53). */
export function statusNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/** The kind of every resource (plural) a customize hook of ours names in a related rule. */
const KIND_OF_RESOURCE: Readonly<Record<string, string>> = {
  ipallocations: "IPAllocation",
  networkpools: "NetworkPool",
  providerconfigs: "ProviderConfig",
  tenantclusters: "TenantCluster",
  teams: "Team",
  loadbalancerinventories: "LoadBalancerInventory",
  secrets: "Secret",
  configmaps: "ConfigMap",
};

/**
 * The group of each related rule, as Metacontroller files it (`Kind.apiVersion` with the rule's apiVersion).
 *
 * @example
 * ```ts
 * relatedTypes([{ apiVersion: "v1", resource: "secrets" }]); // [{ apiVersion: "v1", kind: "Secret" }]
 * ```
 */
export function relatedTypes(rules: readonly { apiVersion: string; resource: string }[]): TypeRef[] {
  return rules.map((rule) => {
    const kind = KIND_OF_RESOURCE[rule.resource];
    if (!kind) throw new Error(`no kind known for related resource ${rule.resource}`);
    return { apiVersion: rule.apiVersion, kind };
  });
}

/**
 * Fails the call ({@linkcode UndeliveredGroupsError}) unless the request holds the group of every related rule
 * the customize hook gives for this parent and of every type the hook owns: an undelivered group read as empty
 * would drop grants or delete children.
 *
 * @example
 * ```ts
 * requireDelivered(request, customizeNetworkPool(request).relatedResources);
 * ```
 */
export function requireDelivered(
  request: { readonly related: RelatedMap; readonly children?: ObjectMap },
  rules: readonly { apiVersion: string; resource: string }[],
  childTypes: readonly TypeRef[] = [],
): void {
  const problems = [
    ...missingGroups(request.related, "related", relatedTypes(rules)),
    ...missingGroups(request.children ?? {}, "children", childTypes),
  ];
  if (problems.length) throw new UndeliveredGroupsError(problems);
}

/**
 * The API path of a Butler resource collection or object, for admission reads.
 *
 * @example
 * ```ts
 * butlerPath("tenantclusters", "team-payments"); // "/apis/butler.butlerlabs.dev/v1alpha1/namespaces/team-payments/tenantclusters"
 * ```
 */
export function butlerPath(resource: string, namespace?: string, name?: string): string {
  const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `/apis/${API_VERSION}${ns}/${resource}${name ? `/${encodeURIComponent(name)}` : ""}`;
}

/** The items of a list read keyed `namespace/name` (or `name`), as the hooks key related objects. */
export function keyedItems(items: unknown): [string, unknown][] {
  if (!Array.isArray(items)) return [];
  return items.flatMap((item) => {
    const m = (item as { metadata?: { name?: unknown; namespace?: unknown } } | null)?.metadata;
    if (typeof m?.name !== "string") return [];
    return [[
      objectKey({
        metadata: { name: m.name, namespace: typeof m.namespace === "string" ? m.namespace : undefined },
      }),
      item,
    ]];
  });
}
