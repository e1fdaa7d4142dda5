/**
 * Found by the simulation tier (seed 3054): a migration's review wrote the cluster's reservation in its new
 * environment, then the API server never stored the update (the webhook answered after its deadline). While that
 * reservation was fresh the cluster counted only where it was going, not where it still was, so a create in the
 * old environment passed its `maxClusters`. A stored cluster whose fresh reservation moves it to another
 * environment or owner counts in both places until the move lands, and once in the totals.
 */
import assert from "node:assert/strict";
import { indexClusters, type Load, type QuotaLedger, usageOf } from "../../hooks/tenantcluster/mod.ts";
import { parseQuantity, type Quantity } from "../../lib/quantity/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";

const NOW = new Date("2026-11-27T12:00:00Z");
const q = (text: string): Quantity => {
  const p = parseQuantity(text);
  if (!p.ok) throw new Error(text);
  return p.value;
};
const footprint = (env: string, owner: string, provider: string) => ({
  env,
  owner,
  provider,
  nodes: 3,
  cpu: "2",
  memory: "4Gi",
  storage: "0",
});
const load = (f: ReturnType<typeof footprint>): Load => ({
  ...f,
  cpu: q(f.cpu),
  memory: q(f.memory),
  storage: q(f.storage),
});
const ledgerOf = (name: string, f: ReturnType<typeof footprint>): QuotaLedger => ({
  reservations: new Map([[name, { ...f, at: formatTime(new Date(NOW.getTime() - 10_000)) }]]),
  corrupt: [],
});

Deno.test("usage: a stored cluster moving elsewhere counts where it is and where it goes", async (t) => {
  const stored = footprint("prod", "carol@example.com", "butler-system/pc-a");
  const index = indexClusters([{ name: "c2", deleting: false, load: load(stored) }]);

  await t.step("to another environment", () => {
    const u = usageOf(index, ledgerOf("c2", { ...stored, env: "dev" }), "c1", NOW);
    assert.equal(u.clusters, 1);
    assert.equal(u.nodes, 3);
    assert.equal(u.inEnvironment("prod"), 1);
    assert.equal(u.inEnvironment("dev"), 1);
    assert.equal(u.ownedIn("prod", "carol@example.com"), 1);
    assert.equal(u.ownedIn("dev", "carol@example.com"), 1);
  });

  await t.step("to another owner", () => {
    const u = usageOf(index, ledgerOf("c2", { ...stored, owner: "bob@example.com" }), "c1", NOW);
    assert.equal(u.clusters, 1);
    assert.equal(u.inEnvironment("prod"), 1);
    assert.equal(u.ownedIn("prod", "carol@example.com"), 1);
    assert.equal(u.ownedIn("prod", "bob@example.com"), 1);
  });

  // Admission resolves a stored cluster's provider from its recorded status and a new one's from the Team's
  // defaults: the same cluster may carry two keys, so a provider that differs is no move (found by the API server
  // tier: counting it twice refused an operator's second cluster under her per-member cap).
  await t.step("another provider key alone is no move", () => {
    const u = usageOf(index, ledgerOf("c2", { ...stored, provider: "team-x/pc-a" }), "c1", NOW);
    assert.equal(u.ownedIn("prod", "carol@example.com"), 1);
    assert.equal(u.inEnvironment("prod"), 1);
  });

  await t.step("staying where it is counts once", () => {
    const u = usageOf(index, ledgerOf("c2", stored), "c1", NOW);
    assert.equal(u.inEnvironment("prod"), 1);
    assert.equal(u.inEnvironment("dev"), 0);
  });
});
