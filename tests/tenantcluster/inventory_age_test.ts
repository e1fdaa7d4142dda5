/**
 * How old an inventory the TenantCluster acts on: a release or a growth needs an observation at most 300 s old;
 * with no decision due (no Service pending, no release countdown run out) an observation up to 1,800 s old is
 * still trusted, which is what lets the reporter refresh idle tenants every ten minutes instead of every 45
 * seconds. Property over the age, the countdown (none, running, run out) and pending Services, on the 9m59s
 * shrink fixture run with a 599 s grace.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { syncTenantCluster } from "../../hooks/tenantcluster/mod.ts";
import { loadConfig } from "../../lib/config/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";

const DIR = new URL("../fixtures/tenantcluster/sync/elastic-shrink-9m59s-kept/", import.meta.url).pathname;
const base = JSON.parse(Deno.readTextFileSync(`${DIR}request.json`));
const now = new Date(Deno.readTextFileSync(`${DIR}now`).trim());
const INVENTORY = "LoadBalancerInventory.butler.butlerlabs.dev/v1alpha1";
const loaded = loadConfig({ TEST_SHRINK_GRACE_SECONDS: "599" });
if (!loaded.ok) throw new Error(loaded.message);
const config = loaded.config.hook;

Deno.test("properties: an inventory is acted on within 300 s while a decision waits on it, trusted to 1,800 s otherwise", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3000 }),
      fc.constantFrom("none", "running", "runOut"),
      fc.boolean(),
      (ageSeconds, countdown, pending) => {
        const request = structuredClone(base);
        const spec = request.related[INVENTORY]["team-platform/web"].spec;
        spec.observedAt = formatTime(new Date(now.getTime() - ageSeconds * 1000));
        // Three pending Services: more than the two addresses the unused growth allocation supplies.
        if (pending) {
          for (const name of ["a", "b", "c"]) {
            spec.services.push({ namespace: "default", name, createdAt: "2026-11-21T08:00:00Z" });
          }
        }
        // The fixture's countdown started 599 s before now: run out under the 599 s grace.
        if (countdown === "none") delete request.parent.status.ipam.unusedSince;
        if (countdown === "running") {
          request.parent.status.ipam.unusedSince["web-lb-2"] = "2026-11-21T08:55:00Z";
        }
        const out = syncTenantCluster(request, { now, config }) as unknown as {
          children: { metadata: { name: string } }[];
          status: { conditions: { type: string; reason: string }[]; ipam: { unusedSince?: object } };
        };
        const names = out.children.map((c) => c.metadata.name);
        const elastic = out.status.conditions.find((c) => c.type === "ElasticIPAM")!;
        const limit = countdown === "runOut" || pending ? 300 : 1800;
        assert.equal(
          elastic.reason === "DemandUnknown",
          ageSeconds > limit,
          `${ageSeconds}s: ${elastic.reason}`,
        );
        // The growth allocation is released only when its countdown ran out on a fresh observation.
        assert.equal(!names.includes("web-lb-2"), countdown === "runOut" && ageSeconds <= 300);
        // The pending Service grows the cluster only on a fresh observation.
        assert.equal(names.some((n) => n === "web-lb-3"), pending && ageSeconds <= 300);
        // An idle observation may start a countdown (the reporter then observes every 45 s until it runs out).
        if (countdown === "none" && !pending && ageSeconds <= 1800) assert.ok(out.status.ipam.unusedSince);
      },
    ),
    { numRuns: 150 },
  );
});
