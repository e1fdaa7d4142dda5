/**
 * Quotas hold without a serialising admission (hooks/tenantcluster/holds.ts): whatever admission let through — every
 * create, growing update, environment move, owner change and provider move, as an unauthenticated webhook that
 * writes no ledger may let two reviews decided on one view both pass — however late the informers deliver and
 * however long a sync's writes take to land, what the clusters use in force never passes a limit the team's
 * clusters share; and once the users and the syncs are quiet, every cluster runs as asked or says why it cannot.
 *
 * The world (tests/tenantcluster/holds_world.ts) drives the real sync functions over informer caches that lag,
 * writes children as Metacontroller does (create-if-absent, updates under the version observed) and status onto
 * the latest object, and reads what is in force from the stored objects only.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { type Ask, type Limits, NAMES, type Obj, World } from "./holds_world.ts";

type Action =
  | { readonly kind: "apply"; readonly pick: number; readonly ask: Ask }
  | { readonly kind: "delete"; readonly pick: number }
  | { readonly kind: "deliver"; readonly informer: "tc" | "cm" | "team" | "all"; readonly n: number }
  | { readonly kind: "cluster"; readonly pick: number; readonly delay: number }
  | { readonly kind: "team"; readonly delay: number }
  | { readonly kind: "settle" };

const ask: fc.Arbitrary<Ask> = fc.record({
  env: fc.constantFrom(undefined, "dev" as const, "prod" as const),
  owner: fc.constantFrom("m1" as const, "m2" as const),
  provider: fc.constantFrom("p1" as const, "p2" as const),
  replicas: fc.integer({ min: 1, max: 2 }),
  cpu: fc.integer({ min: 1, max: 2 }),
});

const pick = fc.nat({ max: NAMES.length - 1 });
const delay = fc.integer({ min: 0, max: 3 });

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("apply" as const), pick, ask }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("delete" as const), pick }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("deliver" as const),
      informer: fc.constantFrom("tc" as const, "cm" as const, "team" as const, "all" as const),
      n: fc.constantFrom(1, 2, 99),
    }),
  },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("cluster" as const), pick, delay }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("team" as const), delay }) },
  // Everything catches up once: so runs reach clusters started, grown and moved, and race from there.
  { weight: 2, arbitrary: fc.constant({ kind: "settle" as const }) },
);

const limits: fc.Arbitrary<Limits> = fc.record({
  maxClusters: fc.integer({ min: 1, max: 4 }),
  maxTotalNodes: fc.integer({ min: 2, max: 6 }),
  maxCPUCores: fc.integer({ min: 3, max: 8 }),
});

/** Runs the actions, checking after each that nothing in force passes a limit. */
function run(l: Limits, actions: readonly Action[], check = true): World {
  const w = new World(l);
  for (const a of actions) {
    w.step++;
    w.land();
    if (a.kind === "apply") w.apply(NAMES[a.pick]!, a.ask);
    else if (a.kind === "delete") w.remove(NAMES[a.pick]!);
    else if (a.kind === "deliver") a.informer === "all" ? w.deliverAll() : w.deliver(a.informer, a.n);
    else if (a.kind === "cluster") w.syncCluster(NAMES[a.pick]!, a.delay);
    else if (a.kind === "team") w.syncTeam(a.delay);
    else settle(w, 1);
    const over = check ? w.overLimits() : [];
    assert.deepEqual(over, [], `after action ${w.step} (${JSON.stringify(a)}): in force past a limit`);
  }
  return w;
}

/** Quiet: every write lands, every event is delivered, and the Team and every cluster sync, `rounds` times. */
function settle(w: World, rounds = 3): void {
  for (let r = 0; r < rounds; r++) {
    w.land(true);
    w.deliverAll();
    w.syncTeam(0);
    w.deliverAll();
    for (const n of NAMES) w.syncCluster(n, 0);
    w.deliverAll();
    const over = w.overLimits();
    assert.deepEqual(over, [], `settling: in force past a limit`);
  }
}

const grow = (pick: number, a: Partial<Ask>): Action => ({
  kind: "apply",
  pick,
  ask: { env: undefined, owner: "m1", provider: "p2", replicas: 1, cpu: 1, ...a },
});

Deno.test("holds: what is in force never passes a limit, however creates, updates and moves interleave", () => {
  const applied = { starts: 0, changes: 0 };
  fc.assert(
    fc.property(limits, fc.array(action, { minLength: 20, maxLength: 50 }), (l, actions) => {
      const w = run(l, actions);
      settle(w);
      applied.starts += w.applied.starts;
      applied.changes += w.applied.changes;
    }),
    {
      numRuns: 300,
      examples: [
        // Two clusters started within CPU 4; both grow to 3 CPUs, each update decided on the same view.
        [{ maxClusters: 4, maxTotalNodes: 6, maxCPUCores: 4 }, [
          grow(0, { cpu: 2 }),
          grow(1, { cpu: 2 }),
          { kind: "team", delay: 0 },
          { kind: "deliver", informer: "team", n: 3 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
          { kind: "deliver", informer: "tc", n: 9 },
          { kind: "deliver", informer: "cm", n: 9 },
          { kind: "team", delay: 0 },
          { kind: "deliver", informer: "team", n: 3 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
          grow(0, { cpu: 3 }),
          grow(1, { cpu: 3 }),
          { kind: "deliver", informer: "tc", n: 9 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
        ]],
        // Two started clusters moved into prod (one cluster at most) on one view.
        [{ maxClusters: 4, maxTotalNodes: 6, maxCPUCores: 8 }, [
          grow(0, {}),
          grow(1, {}),
          { kind: "team", delay: 0 },
          { kind: "deliver", informer: "team", n: 3 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
          { kind: "deliver", informer: "tc", n: 9 },
          { kind: "deliver", informer: "cm", n: 9 },
          { kind: "team", delay: 0 },
          { kind: "deliver", informer: "team", n: 3 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
          grow(0, { env: "prod" }),
          grow(1, { env: "prod" }),
          { kind: "deliver", informer: "tc", n: 9 },
          { kind: "cluster", pick: 0, delay: 0 },
          { kind: "cluster", pick: 1, delay: 0 },
        ]],
      ],
    },
  );
  // Not vacuous: clusters start, and started clusters grow and move, over the runs.
  assert.ok(applied.starts > 250 && applied.changes > 40, JSON.stringify(applied));
});

/** Whether a stored cluster's record says it runs as its spec and labels ask. */
function runsAsAsked(w: World, tc: Obj): boolean {
  const text = w.record(tc)?.data?.admitted;
  if (!text) return false;
  const a = JSON.parse(text);
  return a.env === tc.metadata.labels?.["butler.butlerlabs.dev/environment"] &&
    a.owner === tc.metadata.annotations?.["butler.butlerlabs.dev/owner"] &&
    a.provider === `butler-system/${tc.spec.providerConfigRef.name}` &&
    a.workerCount.value === tc.spec.workers.replicas &&
    a.workerCPU.value === tc.spec.workers.machineTemplate.cpu;
}

Deno.test("holds: once quiet, every cluster runs as asked, or its claim is held with the limit it passes", () => {
  let held = 0, changed = 0;
  fc.assert(
    fc.property(limits, fc.array(action, { minLength: 20, maxLength: 50 }), (l, actions) => {
      const w = run(l, actions, false);
      settle(w);
      w.syncTeam(0);
      w.deliverAll();
      const team = w.objects.get("Team//a")!;
      const claims = team.status?.admission ?? {};
      const waiting = w.clusters().filter((tc) => !runsAsAsked(w, tc));
      changed += w.clusters().filter((tc) => w.record(tc)?.metadata.resourceVersion !== undefined).length;
      if (!waiting.length) {
        assert.deepEqual(claims, {});
        return;
      }
      held++;
      assert.equal(claims.admitted, undefined);
      assert.deepEqual(
        (claims.held ?? []).map((c: { name: string }) => c.name).sort(),
        waiting.map((tc) => tc.metadata.name).sort(),
      );
      assert.match(claims.message ?? "", /do not fit within team "a"'s limits with what its clusters have/);
      for (const c of claims.held ?? []) assert.match(c.message, /would exceed|already (has|owns)/);
      for (const tc of waiting) {
        const why = (tc.status?.conditions ?? []).filter((c: { reason?: string }) =>
          c.reason === "QuotaExceeded"
        );
        assert.ok(why.length, `${tc.metadata.name} waits and does not say why: ${JSON.stringify(tc.status)}`);
      }
    }),
    { numRuns: 150 },
  );
  // The runs reach both outcomes: claims all admitted, and claims held.
  assert.ok(held > 10 && changed > 100, `${held} runs held claims; ${changed} records`);
});
