/**
 * Properties of TenantCluster quota admission:
 *
 * - the reservation protocol (read, decide with the real `admitTenantCluster`, write the ledger under the
 *   resourceVersion read, re-read on conflict, then the API server stores the object or not) never lets stored
 *   clusters exceed `maxClusters` or `maxCPUCores`, under every interleaving of several webhook instances, each
 *   reading the clusters from a cache that lags by any amount the ledger's clusters-seen version allows;
 * - the Team status and admission agree: a create admitted on top of clusters within quota never makes the
 *   Team's `quotaStatus` Exceeded.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { admitTenantCluster } from "../../hooks/tenantcluster/mod.ts";
import { computeUsage } from "../../hooks/team/mod.ts";
import type { AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { isStaged, MAX_DECISION_ATTEMPTS } from "../../lib/http/mod.ts";
import { type ReviewedObject, tenantClusterCreateReview } from "../../lib/testing/mod.ts";
import type { ObservedCluster, TeamSpec } from "../../lib/api/mod.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const NS = "team-t";
const NOW = new Date("2026-11-22T10:00:00Z");

function cluster(
  name: string,
  cpu: number,
  extra: { env?: string; owner?: string; replicas?: number } = {},
): Obj {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: {
      name,
      namespace: NS,
      ...(extra.env ? { labels: { "butler.butlerlabs.dev/environment": extra.env } } : {}),
      ...(extra.owner ? { annotations: { "butler.butlerlabs.dev/creator-email": extra.owner } } : {}),
    },
    spec: {
      workers: {
        replicas: extra.replicas ?? 1,
        machineTemplate: { cpu: String(cpu), memory: "1Gi", diskSize: "10Gi" },
      },
    },
  };
}

const createReview = (obj: Obj) =>
  tenantClusterCreateReview(obj as ReviewedObject) as unknown as AdmissionReviewRequest;

Deno.test("quota admission properties", async (t) => {
  await t.step("no interleaving of webhook instances overshoots maxClusters or maxCPUCores", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }), // maxClusters
        fc.integer({ min: 1, max: 8 }), // maxCPUCores
        fc.array(fc.integer({ min: 1, max: 2 }), { maxLength: 2 }), // existing clusters' CPU
        fc.array(fc.record({ cpu: fc.integer({ min: 1, max: 3 }), stored: fc.boolean() }), {
          minLength: 2,
          maxLength: 6,
        }),
        fc.array(fc.nat(), { maxLength: 80 }), // the schedule: which instance takes its next step
        fc.array(fc.nat(), { minLength: 1, maxLength: 20 }), // how far behind each read's cache is
        (maxClusters, maxCpu, existing, actors, schedule, lags) => {
          const team = {
            metadata: { name: "t" },
            spec: { access: {}, resourceLimits: { maxClusters, maxCPUCores: String(maxCpu) } },
          };
          const stored = new Map<string, Obj>(existing.map((cpu, i) => [`e${i}`, cluster(`e${i}`, cpu)]));
          let ledger: Obj | undefined;
          // One revision counter for every write, as etcd's; the clusters as each revision left them.
          let rv = 0;
          const history: { rv: number; clusters: Obj[] }[] = [{ rv: 0, clusters: [...stored.values()] }];
          const remember = () => history.push({ rv, clusters: [...stored.values()] });
          let reads = 0;
          type Actor = {
            phase: "read" | "decide" | "store" | "done";
            attempts: number;
            reads?: Obj;
            obj: Obj;
            stored: boolean;
          };
          const state: Actor[] = actors.map((a, i) => ({
            phase: "read",
            attempts: 0,
            obj: cluster(`a${i}`, a.cpu),
            stored: a.stored,
          }));
          const usedCpu = () =>
            [...stored.values()].reduce((n, c) => n + Number(c.spec.workers.machineTemplate.cpu), 0);
          const withinQuota = () => {
            const initial = existing.length > maxClusters || existing.reduce((a, b) => a + b, 0) > maxCpu;
            // Clusters stored before the quota was as low as this are not ours to judge; only growth is.
            return initial || (stored.size <= maxClusters && usedCpu() <= maxCpu);
          };
          const step = (a: Actor) => {
            if (a.phase === "read") {
              // The cache may lag, but never behind the version the ledger says a decision must have seen.
              const seen = Number(ledger?.metadata.annotations?.["butler.butlerlabs.dev/clusters-seen"] ?? 0);
              const views = history.filter((h) => h.rv >= seen);
              const view = views[views.length - 1 - (lags[reads++ % lags.length]! % views.length)]!;
              a.reads = {
                team: structuredClone(team),
                clusters: view.clusters.map((c) => structuredClone(c)),
                ledger: ledger && structuredClone(ledger),
              };
              a.phase = "decide";
            } else if (a.phase === "decide") {
              const d = admitTenantCluster(createReview(a.obj), { now: NOW }, a.reads!);
              if (!isStaged(d)) {
                a.phase = d.allowed ? "store" : "done";
                return;
              }
              const body = d.write.body as Obj;
              const conflict = d.write.method === "POST"
                ? ledger !== undefined
                : ledger?.metadata.resourceVersion !== body.metadata.resourceVersion;
              if (conflict) {
                a.attempts++;
                a.phase = a.attempts >= MAX_DECISION_ATTEMPTS ? "done" : "read";
                return;
              }
              ledger = { ...body, metadata: { ...body.metadata, resourceVersion: String(++rv) } };
              remember();
              a.phase = "store";
            } else if (a.phase === "store") {
              // The API server stores the admitted object, or fails it later (another webhook, a name clash).
              if (a.stored) {
                stored.set(a.obj.metadata.name, {
                  ...a.obj,
                  metadata: { ...a.obj.metadata, resourceVersion: String(++rv) },
                });
                remember();
              }
              a.phase = "done";
            }
          };
          for (const pick of schedule) {
            step(state[pick % state.length]!);
            assert.ok(withinQuota(), `over quota: ${stored.size} clusters, ${usedCpu()} CPU`);
          }
          while (state.some((a) => a.phase !== "done")) {
            for (const a of state) step(a);
            assert.ok(withinQuota(), `over quota: ${stored.size} clusters, ${usedCpu()} CPU`);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  await t.step("a create admitted within quota never makes the Team status Exceeded", () => {
    const owner = fc.constantFrom("a@x.io", "b@x.io", "c@x.io");
    const env = fc.constantFrom("dev", "prod");
    const tc = fc.record({
      cpu: fc.integer({ min: 1, max: 4 }),
      replicas: fc.integer({ min: 1, max: 4 }),
      env,
      owner,
    });
    fc.assert(
      fc.property(
        fc.record({
          maxClusters: fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
          maxTotalNodes: fc.option(fc.integer({ min: 0, max: 12 }), { nil: undefined }),
          maxNodesPerCluster: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
          maxCPUCores: fc.option(fc.integer({ min: 0, max: 30 }).map(String), { nil: undefined }),
          maxMemory: fc.option(fc.constantFrom("4Gi", "8Gi", "16Gi"), { nil: undefined }),
        }),
        fc.record({
          envMax: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }),
          perMember: fc.option(fc.integer({ min: 0, max: 2 }), { nil: undefined }),
        }),
        fc.array(tc, { maxLength: 6 }),
        tc,
        (resourceLimits, envLimits, existing, proposed) => {
          const spec = {
            access: {},
            resourceLimits,
            environments: [
              {
                name: "dev",
                limits: { maxClusters: envLimits.envMax, maxClustersPerMember: envLimits.perMember },
              },
              { name: "prod" },
            ],
          } as unknown as TeamSpec;
          const clusters = existing.map((c, i) => cluster(`c${i}`, c.cpu, c));
          const before = computeUsage(spec, clusters as ObservedCluster[]);
          fc.pre(before.quotaStatus !== "Exceeded");
          const obj = cluster("new", proposed.cpu, proposed);
          const d = admitTenantCluster(createReview(obj), { now: NOW }, { team: { spec }, clusters });
          const allowed = isStaged(d) ? d.response.allowed : d.allowed;
          if (!allowed) return;
          const after = computeUsage(spec, [...clusters, obj] as ObservedCluster[]);
          assert.notEqual(after.quotaStatus, "Exceeded", after.quotaMessage);
        },
      ),
      { numRuns: 500 },
    );
  });
});
