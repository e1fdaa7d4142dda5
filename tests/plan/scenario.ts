/**
 * Generated GitOps folders for plan tests and benchmarks: teams, IPAM pools with their ProviderConfigs, and
 * TenantClusters spread over them.
 */
import { API_VERSION } from "../../lib/butler/mod.ts";
import type { SourcedObject } from "../../lib/plan/mod.ts";

/** The size of a generated folder. */
export interface ScenarioSize {
  readonly teams: number;
  readonly pools: number;
  readonly clusters: number;
}

const source = (kind: string, i: number) => `generated/${kind}#${i + 1}`;

/**
 * `teams` Teams (each with room for its share of clusters), `pools` /22 NetworkPools in `butler-system`, one
 * Harvester ProviderConfig in IPAM mode per pool with one credentials Secret, and `clusters` TenantClusters
 * dealt round-robin over teams and providers.
 */
export function scenario(size: ScenarioSize): SourcedObject[] {
  const objects: SourcedObject[] = [{
    source: source("secret", 0),
    object: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "harvester-credentials", namespace: "butler-system" },
      stringData: { kubeconfig: "apiVersion: v1\nkind: Config\n" },
    },
  }];
  for (let t = 0; t < size.teams; t++) {
    objects.push({
      source: source("team", t),
      object: {
        apiVersion: API_VERSION,
        kind: "Team",
        metadata: { name: `team-${t}` },
        spec: {
          displayName: `Team ${t}`,
          access: { users: [{ name: `lead-${t}@example.com`, role: "admin" }] },
          resourceLimits: { maxClusters: Math.ceil(size.clusters / size.teams) + 5 },
          clusterDefaults: { kubernetesVersion: "v1.31.0" },
        },
      },
    });
  }
  for (let p = 0; p < size.pools; p++) {
    objects.push({
      source: source("pool", p),
      object: {
        apiVersion: API_VERSION,
        kind: "NetworkPool",
        metadata: { name: `pool-${p}`, namespace: "butler-system" },
        spec: { cidr: `10.${60 + p}.0.0/22`, reserved: [{ cidr: `10.${60 + p}.0.0/28` }] },
      },
    }, {
      source: source("providerconfig", p),
      object: {
        apiVersion: API_VERSION,
        kind: "ProviderConfig",
        metadata: { name: `harvester-${p}`, namespace: "butler-system" },
        spec: {
          provider: "harvester",
          credentialsRef: { name: "harvester-credentials" },
          harvester: { networkName: "default/vlan40" },
          network: {
            mode: "ipam",
            poolRefs: [{ name: `pool-${p}` }],
            loadBalancer: { defaultPoolSize: 2, allocationMode: "static" },
          },
        },
      },
    });
  }
  for (let c = 0; c < size.clusters; c++) {
    objects.push({
      source: source("tenantcluster", c),
      object: {
        apiVersion: API_VERSION,
        kind: "TenantCluster",
        metadata: { name: `cluster-${c}`, namespace: `team-team-${c % size.teams}` },
        spec: { providerConfigRef: { name: `harvester-${c % size.pools}`, namespace: "butler-system" } },
      },
    });
  }
  return objects;
}
