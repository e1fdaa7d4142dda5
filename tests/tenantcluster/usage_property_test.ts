/**
 * The team's usage as admission counts it: `usageOf`, which adds the ledger to totals counted once per view of the
 * clusters, says exactly what counting every load one by one says (the rule as docs/design.md#race-free-quotas states
 * it: every stored cluster not being deleted, the larger of it and its fresh reservation (counted where it is too when
 * the reservation moves it to another environment or owner), every fresh reservation
 * whose cluster is not stored, every reservation not in a lagging view, apart from the cluster under review), in
 * every figure the limits read: clusters, nodes, each quantity's sum and whether it prints binary, on each provider,
 * in each environment, of each member.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type CountedCluster,
  indexClusters,
  type Load,
  loadOf,
  type QuotaLedger,
  type Reservation,
  reservationFresh,
  type StillPlaced,
  type Usage,
  usageOf,
  usageOfLoads,
} from "../../hooks/tenantcluster/mod.ts";
import { compare, formatQuantity, parseQuantity, type Quantity } from "../../lib/quantity/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";

const NOW = new Date("2026-11-26T12:00:00Z");
const NAMES = ["a", "b", "c", "d", "e"];
const ENVS = [undefined, "dev", "prod"];
const OWNERS = [undefined, "x@example.com", "y@example.com"];
const PROVIDERS = [undefined, "ns/p1", "ns/p2"];
const QUANTITIES = ["0", "1", "500m", "1Gi", "2G", "1536Mi"];

const quantity = (text: string): Quantity => {
  const p = parseQuantity(text);
  if (!p.ok) throw new Error(text);
  return p.value;
};

const footprint = fc.record({
  env: fc.constantFrom(...ENVS),
  owner: fc.constantFrom(...OWNERS),
  provider: fc.constantFrom(...PROVIDERS),
  nodes: fc.integer({ min: 0, max: 4 }),
  cpu: fc.constantFrom(...QUANTITIES),
  memory: fc.constantFrom(...QUANTITIES),
  storage: fc.constantFrom(...QUANTITIES),
});
type Drawn = typeof footprint extends fc.Arbitrary<infer T> ? T : never;

const defined = <T extends object>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
const asLoad = (f: Drawn): Load =>
  defined({
    ...f,
    cpu: quantity(f.cpu),
    memory: quantity(f.memory),
    storage: quantity(f.storage),
  }) as Load;

/** The rule, load by load. */
function reference(
  clusters: readonly CountedCluster[],
  ledger: QuotaLedger,
  self: string,
  live: boolean,
): { loads: Load[]; placed: StillPlaced[] } {
  const max = (a: Quantity, b: Quantity) => compare(a, b) >= 0 ? a : b;
  const out: Load[] = [];
  const placed: StillPlaced[] = [];
  for (const c of clusters) {
    if (c.name === self || c.deleting) continue;
    const r = ledger.reservations.get(c.name);
    if (!r || !reservationFresh(r, NOW)) {
      out.push(c.load);
      continue;
    }
    const l = loadOf(r);
    // Where a cluster moving to another environment or owner still is (the provider is not compared).
    if (c.load.env !== undefined && c.load.env !== l.env) {
      placed.push({
        env: c.load.env,
        ...(c.load.owner !== undefined ? { member: [c.load.env, c.load.owner] } : {}),
      });
    } else if (c.load.env !== undefined && c.load.owner !== undefined && c.load.owner !== l.owner) {
      placed.push({ member: [c.load.env, c.load.owner] });
    }
    out.push({
      ...l,
      nodes: Math.max(c.load.nodes, l.nodes),
      cpu: max(c.load.cpu, l.cpu),
      memory: max(c.load.memory, l.memory),
      storage: max(c.load.storage, l.storage),
    });
  }
  const stored = new Set(clusters.map((c) => c.name));
  for (const [name, r] of ledger.reservations) {
    if (name !== self && !stored.has(name) && (!live || reservationFresh(r, NOW))) out.push(loadOf(r));
  }
  return { loads: out, placed };
}

/** Every figure a limit reads, in print. */
function figures(u: Usage): unknown {
  const total = (d: "cpu" | "memory" | "storage") => formatQuantity(u.total(d));
  return {
    clusters: u.clusters,
    nodes: u.nodes,
    cpu: total("cpu"),
    memory: total("memory"),
    storage: total("storage"),
    providers: PROVIDERS.filter(Boolean).map((p) => u.onProvider(p!)),
    envs: ENVS.filter(Boolean).map((e) => u.inEnvironment(e!)),
    members: ENVS.filter(Boolean).flatMap((e) => OWNERS.filter(Boolean).map((o) => u.ownedIn(e!, o!))),
  };
}

Deno.test("usage: the ledger added to the view's totals counts exactly what counting each load counts", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(
        fc.record({ name: fc.constantFrom(...NAMES), deleting: fc.boolean(), load: footprint }),
        {
          selector: (c) => c.name,
          maxLength: NAMES.length,
        },
      ),
      fc.uniqueArray(
        fc.record({
          name: fc.constantFrom(...NAMES, "f", "g"),
          ageSeconds: fc.integer({ min: 0, max: 90 }),
          load: footprint,
        }),
        { selector: (r) => r.name, maxLength: 7 },
      ),
      fc.constantFrom(...NAMES, "f", "new"),
      fc.boolean(),
      (drawnClusters, drawnReservations, self, live) => {
        const clusters: CountedCluster[] = drawnClusters.map((c) => ({
          name: c.name,
          deleting: c.deleting,
          load: asLoad(c.load),
        }));
        const reservations = new Map<string, Reservation>(
          drawnReservations.map((r) => [
            r.name,
            defined({
              ...r.load,
              at: formatTime(new Date(NOW.getTime() - r.ageSeconds * 1000)),
            }) as Reservation,
          ]),
        );
        const ledger: QuotaLedger = { reservations, corrupt: [] };
        const ref = reference(clusters, ledger, self, live);
        assert.deepEqual(
          figures(usageOf(indexClusters(clusters), ledger, self, NOW, live)),
          figures(usageOfLoads(ref.loads, ref.placed)),
        );
      },
    ),
    { numRuns: 500 },
  );
});
