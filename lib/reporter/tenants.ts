/**
 * Which TenantClusters the reporter serves: those whose ProviderConfig is in IPAM mode. Each gets its MetalLB
 * configuration (the addresses in its status) applied to the tenant; an elastic one also has its Services
 * reported. Pure: the adapter keeps the TenantClusters and ProviderConfigs it watches and asks again whenever
 * either changes.
 *
 * @module
 */
import { z } from "zod";
import { NetworkConfig, providerRefOf } from "../api/mod.ts";
import { SYSTEM_NAMESPACE } from "../butler/mod.ts";
import type { TenantRef } from "./inventory.ts";

/** A tenant to watch: its TenantCluster and where its kubeconfig is. */
export interface Tenant extends TenantRef {
  /** `namespace/name` of the TenantCluster; the shard key. */
  readonly key: string;
  readonly secretName: string;
  readonly secretKey: string;
  /** Elastic allocation: its demand is read (the inventory's heartbeat keeps `observedAt` fresh). */
  readonly elastic: boolean;
  /** The load-balancer addresses of its status (`start-end`), in the order MetalLB's pool lists them. */
  readonly addresses: readonly string[];
  /** Its growth allocations counting down to their release (`status.ipam.unusedSince`): they await demand. */
  readonly unusedSince: Readonly<Record<string, string>>;
}

/** Where tenant kubeconfigs are: the Secret name (`{name}` is the TenantCluster's) and its data key. */
export interface KubeconfigLocation {
  /** Default `{name}-kubeconfig` (Cluster API's convention). */
  readonly secretName: string;
  /** Default `value`. */
  readonly secretKey: string;
}

const Ref = z.object({ name: z.string().min(1), namespace: z.string().min(1).optional() });

const TenantClusterView = z.object({
  metadata: z.object({
    namespace: z.string(),
    name: z.string(),
    uid: z.string(),
    deletionTimestamp: z.string().nullish(),
  }),
  spec: z.unknown(),
  status: z.object({
    effective: z.object({ providerConfigRef: z.object({ value: Ref }).optional().catch(undefined) })
      .optional(),
    loadBalancer: z.object({ addresses: z.array(z.string().max(100)).max(1000) }).optional().catch(undefined),
    ipam: z.object({ unusedSince: z.record(z.string().max(253), z.string().max(64)).optional() })
      .optional().catch(undefined),
  }).optional().catch(undefined),
});

const ProviderConfigView = z.object({
  metadata: z.object({ namespace: z.string().optional(), name: z.string() }),
  spec: z.object({ network: NetworkConfig.optional().catch(undefined) }).optional().catch(undefined),
});

/**
 * The tenants to watch, sorted by key. A TenantCluster's ProviderConfig is the one its hook resolved
 * (`status.effective.providerConfigRef`, which covers the Team's default), else its own `spec.providerConfigRef`
 * (namespace `butler-system` when unset). Clusters being deleted are not watched: their inventory goes with them.
 *
 * @example
 * ```ts
 * reportedTenants(tenantClusters, providerConfigs, { secretName: "{name}-kubeconfig", secretKey: "value" });
 * ```
 */
export function reportedTenants(
  tenantClusters: Iterable<unknown>,
  providerConfigs: Iterable<unknown>,
  location: KubeconfigLocation,
): Tenant[] {
  // IPAM providers, and whether each allocates elastically (mode defaults to cloud, as the TenantCluster reads it).
  const ipam = new Map<string, boolean>();
  for (const raw of providerConfigs) {
    const pc = ProviderConfigView.safeParse(raw);
    if (!pc.success) continue;
    const network = pc.data.spec?.network;
    if (network?.mode === "ipam") {
      ipam.set(
        `${pc.data.metadata.namespace ?? SYSTEM_NAMESPACE}/${pc.data.metadata.name}`,
        network.loadBalancer?.allocationMode === "elastic",
      );
    }
  }
  const out: Tenant[] = [];
  for (const raw of tenantClusters) {
    const tc = TenantClusterView.safeParse(raw);
    if (!tc.success || tc.data.metadata.deletionTimestamp) continue;
    const ref = tc.data.status?.effective?.providerConfigRef?.value ?? providerRefOf(tc.data.spec);
    const elastic = ref && ipam.get(`${ref.namespace ?? SYSTEM_NAMESPACE}/${ref.name}`);
    if (elastic === undefined) continue;
    const { namespace, name, uid } = tc.data.metadata;
    out.push({
      key: `${namespace}/${name}`,
      namespace,
      name,
      uid,
      secretName: location.secretName.replaceAll("{name}", name),
      secretKey: location.secretKey,
      elastic,
      addresses: tc.data.status?.loadBalancer?.addresses ?? [],
      unusedSince: tc.data.status?.ipam?.unusedSince ?? {},
    });
  }
  return out.sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
