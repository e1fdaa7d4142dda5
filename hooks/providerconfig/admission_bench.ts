/**
 * Admission decisions are pure and cheap: the ProviderConfig delete check over 1,000 TenantClusters, the Team
 * environment-removal check over 1,000, and the TenantCluster provider check. Figures: docs/performance.md.
 */
import type { AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { admitTeam } from "../team/admission.ts";
import { admitTenantCluster } from "../tenantcluster/admission.ts";
import { admitProviderConfig } from "./admission.ts";

const root = new URL("../../tests/fixtures", import.meta.url).pathname;
const review = (path: string) =>
  JSON.parse(Deno.readTextFileSync(`${root}/${path}/request.json`)) as AdmissionReviewRequest;
const reads = (path: string) => JSON.parse(Deno.readTextFileSync(`${root}/${path}/reads.json`));

const clusters = Array.from({ length: 1000 }, (_, i) => ({
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

Deno.bench("admission: ProviderConfig delete, 1,000 TenantClusters", () => {
  admitProviderConfig(pcDelete, undefined, { tenantClusters: clusters });
});
Deno.bench("admission: Team environment removal, 1,000 TenantClusters", () => {
  admitTeam(teamUpdate, undefined, { tenantClusters: clusters });
});
Deno.bench("admission: TenantCluster with another team's ProviderConfig", () => {
  admitTenantCluster(tcCreate, undefined, { provider: tcReads });
});
