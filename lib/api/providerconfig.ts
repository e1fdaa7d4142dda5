import { z } from "zod";

/** The six provider types. */
export const PROVIDERS = ["harvester", "nutanix", "proxmox", "azure", "aws", "gcp"] as const;
/** A provider type. */
export type Provider = (typeof PROVIDERS)[number];
/** Providers whose own cloud assigns addresses: IPAM mode is forbidden for them. */
export const CLOUD_PROVIDERS: readonly Provider[] = ["azure", "aws", "gcp"];

const section = z.record(z.string(), z.unknown());

/** `spec.scope`: which teams may use a ProviderConfig. */
export const ProviderScope = z.looseObject({
  type: z.enum(["platform", "team"]).optional(),
  teamRef: z.looseObject({ name: z.string().max(253).optional() }).optional(),
});

/** `spec.network`: networking mode, pools, load-balancer allocation and per-tenant quotas. */
export const NetworkConfig = z.looseObject({
  mode: z.enum(["ipam", "cloud"]).optional(),
  poolRefs: z.array(
    z.looseObject({ name: z.string().min(1).max(253), priority: z.number().int().optional() }),
  )
    .max(64).optional(),
  subnet: z.string().max(64).optional(),
  gateway: z.string().max(64).optional(),
  dnsServers: z.array(z.string().max(64)).max(8).optional(),
  loadBalancer: z.looseObject({
    defaultPoolSize: z.number().int().min(1).optional(),
    allocationMode: z.enum(["static", "elastic"]).optional(),
    initialPoolSize: z.number().int().min(1).optional(),
    growthIncrement: z.number().int().min(1).optional(),
  }).optional(),
  quotaPerTenant: z.looseObject({
    maxNodeIPs: z.number().int().min(1).optional(),
    maxLoadBalancerIPs: z.number().int().min(1).optional(),
  }).optional(),
});

/**
 * `ProviderConfig.spec` as the hook reads it. Provider sections are kept as plain maps: the admission rules
 * ({@link ./rules.ts}) say what they must hold, so a missing field is reported by rule, not by shape.
 */
export const ProviderConfigSpec = z.looseObject({
  provider: z.enum(PROVIDERS),
  credentialsRef: z.looseObject({
    name: z.string().min(1).max(253),
    namespace: z.string().max(63).optional(),
    key: z.string().max(253).optional(),
  }),
  harvester: section.optional(),
  nutanix: section.optional(),
  proxmox: section.optional(),
  azure: section.optional(),
  aws: section.optional(),
  gcp: section.optional(),
  scope: ProviderScope.optional(),
  network: NetworkConfig.optional(),
  limits: z.looseObject({
    maxClustersPerTeam: z.number().int().min(1).optional(),
    maxNodesPerTeam: z.number().int().min(1).optional(),
  }).optional(),
});

/** A ProviderConfig's spec. */
export type ProviderConfigSpec = z.infer<typeof ProviderConfigSpec>;

/** Seed defaults of `spec.network.loadBalancer`. */
export const LB_DEFAULTS = { defaultPoolSize: 8, initialPoolSize: 2, growthIncrement: 2 } as const;

/**
 * The GCP compute zone a ProviderConfig means: `spec.gcp.zone`, else the seed's default `{region}-a`. Undefined
 * for other providers, or while the region is missing (a rule reports that).
 *
 * @example
 * ```ts
 * effectiveZone({ provider: "gcp", credentialsRef: { name: "c" }, gcp: { region: "us-central1" } });
 * // { value: "us-central1-a", source: "default" }
 * ```
 */
export function effectiveZone(
  spec: ProviderConfigSpec,
): { value: string; source: "explicit" | "default" } | undefined {
  if (spec.provider !== "gcp") return undefined;
  const { zone, region } = spec.gcp ?? {};
  if (typeof zone === "string" && zone) return { value: zone, source: "explicit" };
  return typeof region === "string" && region ? { value: `${region}-a`, source: "default" } : undefined;
}

/** The per-team limits of a ProviderConfig, as the Team reads them (nothing else of it). */
export const ProviderLimitsView = z.looseObject({
  spec: z.looseObject({
    limits: z.looseObject({
      maxClustersPerTeam: z.number().int().min(1).optional(),
      maxNodesPerTeam: z.number().int().min(1).optional(),
    }).optional(),
  }).optional(),
});
/** A ProviderConfig's per-team limits. */
export type ProviderLimitsView = z.infer<typeof ProviderLimitsView>;
