/**
 * Admission decisions are pure and cheap: the ProviderConfig delete check over 1,000 TenantClusters, the Team
 * environment-removal check over 1,000, and the TenantCluster provider check. Figures: docs/performance.md.
 */
import type { AdmissionReviewRequest } from "../lib/contract/mod.ts";
import { admitTeam } from "../hooks/team/admission.ts";
import { admitTenantCluster } from "../hooks/tenantcluster/admission.ts";
import { admitProviderConfig } from "../hooks/providerconfig/admission.ts";
import { count, RUNS, sized } from "./smoke.ts";

const root = new URL("../tests/fixtures", import.meta.url).pathname;
const review = (path: string) =>
  JSON.parse(Deno.readTextFileSync(`${root}/${path}/request.json`)) as AdmissionReviewRequest;
const reads = (path: string) => JSON.parse(Deno.readTextFileSync(`${root}/${path}/reads.json`));

const CLUSTERS = sized(1000, 50);
const clusters = Array.from({ length: CLUSTERS }, (_, i) => ({
  metadata: {
    name: `c${i}`,
    namespace: `team-${i % 20}`,
    labels: { "butler.butlerlabs.dev/environment": i % 2 ? "prod" : "dev" },
  },
  spec: { providerConfigRef: { name: i % 10 ? "other" : "harvester-prod" } },
}));
const pcDelete = review("providerconfig/admission/delete-referenced-by-two-clusters");
const teamUpdate = review("team/admission/remove-environment-in-use");
const tcCreate = review("tenantcluster/admission/team-scoped-provider-of-another-team");
const tcReads = Object.values(reads("tenantcluster/admission/team-scoped-provider-of-another-team"))[0];

// A list read anew (the namespace changed since the last review) is counted; the same list again is looked up.
Deno.bench(
  `admission: ProviderConfig delete, ${count(CLUSTERS)} TenantClusters, a list read anew`,
  RUNS,
  () => {
    admitProviderConfig(pcDelete, undefined, { tenantClusters: [...clusters] });
  },
);
Deno.bench(
  `admission: ProviderConfig delete, ${count(CLUSTERS)} TenantClusters, the same list again`,
  RUNS,
  () => {
    admitProviderConfig(pcDelete, undefined, { tenantClusters: clusters });
  },
);
Deno.bench(
  `admission: Team environment removal, ${count(CLUSTERS)} TenantClusters, a list read anew`,
  RUNS,
  () => {
    admitTeam(teamUpdate, undefined, { tenantClusters: [...clusters] });
  },
);
Deno.bench(
  `admission: Team environment removal, ${count(CLUSTERS)} TenantClusters, the same list again`,
  RUNS,
  () => {
    admitTeam(teamUpdate, undefined, { tenantClusters: clusters });
  },
);
Deno.bench("admission: TenantCluster with another team's ProviderConfig", RUNS, () => {
  admitTenantCluster(tcCreate, { now: new Date(0) }, { provider: tcReads, clusters: [] });
});

// Quotas (issue #14): the restricted-team case (every limit, restriction and environment cap in force) over 1,000
// TenantClusters of the team and a ledger of 50 fresh reservations; caps raised so the create is admitted and
// the whole path runs, ledger write included.
const quotaCase = "tenantcluster/admission/restricted-every-failure-listed";
const quotaReview = review(quotaCase);
const quotaReads = reads(quotaCase);
const quotaTeam = Object.entries(quotaReads).find(([k]) => k.endsWith("/teams/payments"))![1] as {
  spec: { resourceLimits: Record<string, unknown> };
};
Object.assign(quotaTeam.spec.resourceLimits, {
  maxClusters: 5000,
  maxNodesPerCluster: 10,
  maxTotalNodes: 50000,
  maxCPUCores: "100000",
  maxMemory: "1000Ti",
  maxStorage: "1000Pi",
  allowedKubernetesVersions: ["1.31.x"],
  allowedProviders: ["harvester"],
  deniedAddons: ["gpu-operator"],
  allowedAddons: ["cilium", "longhorn", "istio"],
});
const teamClusters = Array.from({ length: CLUSTERS }, (_, i) => ({
  metadata: {
    name: `c${i}`,
    namespace: "team-payments",
    labels: { "butler.butlerlabs.dev/environment": i % 2 ? "prod" : "dev" },
    annotations: { "butler.butlerlabs.dev/creator-email": `user${i % 40}@example.com` },
  },
  spec: {
    providerConfigRef: { name: "harvester-prod" },
    workers: { replicas: 1 + (i % 3), machineTemplate: { cpu: "2", memory: "8Gi", diskSize: "50Gi" } },
  },
}));
const quotaLedger = {
  metadata: { name: "butler-quota-ledger", namespace: "team-payments", resourceVersion: "7" },
  data: Object.fromEntries(
    Array.from({ length: 50 }, (_, i) => [
      `pending-${i}`,
      JSON.stringify({
        env: "dev",
        nodes: 2,
        cpu: "4",
        memory: "4Gi",
        storage: "200Gi",
        at: "2026-11-22T09:59:00Z",
      }),
    ]),
  ),
};
const quotaNow = { now: new Date("2026-11-22T10:00:00Z") };
Deno.bench(
  `admission: TenantCluster create, quotas over ${count(CLUSTERS)} TenantClusters, a list read anew`,
  RUNS,
  () => {
    const d = admitTenantCluster(quotaReview, quotaNow, {
      ...quotaReads,
      clusters: [...teamClusters],
      provider: Object.entries(quotaReads).find(([k]) => k.includes("/providerconfigs/"))![1],
      team: quotaTeam,
      ledger: quotaLedger,
    });
    if (!("write" in d)) throw new Error(`expected an admitted, reserved create: ${JSON.stringify(d)}`);
  },
);
Deno.bench(
  `admission: TenantCluster create, quotas over ${count(CLUSTERS)} TenantClusters, the same list again`,
  RUNS,
  () => {
    const d = admitTenantCluster(quotaReview, quotaNow, {
      ...quotaReads,
      clusters: teamClusters,
      provider: Object.entries(quotaReads).find(([k]) => k.includes("/providerconfigs/"))![1],
      team: quotaTeam,
      ledger: quotaLedger,
    });
    if (!("write" in d)) throw new Error(`expected an admitted, reserved create: ${JSON.stringify(d)}`);
  },
);
