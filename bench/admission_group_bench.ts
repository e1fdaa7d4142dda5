/**
 * TenantCluster admission of a burst: 200 concurrent create reviews of one team through the webhook route
 * (`app.request`, group commit, the real decision), against an in-memory API whose namespace holds 1,100
 * TenantClusters and whose ledger writes take 3 ms. With every limit in force (each review reserves in the
 * ledger) and, as the baseline, with none (no ledger write): the difference is what quotas cost a review.
 *
 *   npx -y deno@2.9.6 bench --allow-read --allow-env bench/admission_group_bench.ts
 */
import { HOOK_ROUTES } from "../hooks/mod.ts";
import type { KubeClient } from "../lib/kube/mod.ts";
import { createTestApp, tenantClusterCreateReview } from "../lib/testing/mod.ts";
import { RUNS, sized } from "./smoke.ts";

const NS = "team-t";
const LEDGER = `/api/v1/namespaces/${NS}/configmaps/butler-quota-ledger`;
const STORED = sized(1100, 50);
const BURST = sized(200, 10);

type Obj = Record<string, unknown>;
const tenantCluster = (name: string, rv: number) => ({
  metadata: {
    name,
    namespace: NS,
    resourceVersion: String(rv),
    labels: { "butler.butlerlabs.dev/environment": "dev" },
    annotations: { "butler.butlerlabs.dev/owner": "a@example.com" },
  },
  spec: { workers: { replicas: 1, machineTemplate: { cpu: "2", memory: "4Gi", diskSize: "50Gi" } } },
});
const clusters = Array.from({ length: STORED }, (_, i) => tenantCluster(`s${i}`, i + 1));

/** A team with every limit in force (far from reached), or with none. */
function team(limits: boolean): Obj {
  return {
    metadata: { name: "t", resourceVersion: "1" },
    spec: {
      access: {},
      environments: [{
        name: "dev",
        ...(limits ? { limits: { maxClusters: 1e6, maxClustersPerMember: 1e6 } } : {}),
      }],
      ...(limits
        ? {
          resourceLimits: {
            maxClusters: 1e6,
            maxCPUCores: "1000000",
            maxTotalNodes: 1e6,
            maxMemory: "100000Ti",
          },
        }
        : {}),
    },
  };
}

function service(limits: boolean) {
  let ledger: Obj | undefined;
  let rv = 10_000;
  const t = team(limits);
  const kube: KubeClient = {
    async get(path) {
      await Promise.resolve();
      if (path.endsWith("/teams/t")) return t;
      return path === LEDGER ? ledger : undefined;
    },
    async list() {
      await Promise.resolve();
      return clusters;
    },
    async write(_method, _path, body) {
      await new Promise((r) => setTimeout(r, 3));
      const b = JSON.parse(JSON.stringify(body)) as { metadata: Obj };
      ledger = { ...b, metadata: { ...b.metadata, resourceVersion: String(++rv) } };
      return ledger;
    },
  };
  return { app: createTestApp(HOOK_ROUTES, { kube }).app, reset: () => ledger = undefined };
}

const review = (name: string) => JSON.stringify(tenantClusterCreateReview(tenantCluster(name, 0)));

async function burst(s: ReturnType<typeof service>): Promise<void> {
  s.reset();
  const answers = await Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      const r = await s.app.request("/webhooks/validate/tenantcluster", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: review(`n${i}`),
      });
      return (await r.json()).response.allowed;
    }),
  );
  if (answers.some((a) => a !== true)) throw new Error("a create was refused");
}

const quotas = service(true);
const none = service(false);
await burst(quotas);
await burst(none);

Deno.bench(`${BURST} concurrent creates, ${STORED} clusters stored, no limit (no ledger write)`, {
  group: "admission burst",
  baseline: true,
  ...RUNS,
}, async () => await burst(none));
Deno.bench(`${BURST} concurrent creates, ${STORED} clusters stored, every limit in force (group commit)`, {
  group: "admission burst",
  ...RUNS,
}, async () => await burst(quotas));
