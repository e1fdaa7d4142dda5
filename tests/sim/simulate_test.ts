/**
 * The simulation tier's own guarantees: a seed names one run, a run replays byte-identically, the run does real
 * work (clusters Ready, grants made, faults injected), and the invariants catch planted bugs, which then shrink to a
 * short trace that replays the same.
 */
import assert from "node:assert/strict";
import type { RouteRegistrar } from "../../lib/http/mod.ts";
import type { Obj } from "../../lib/plan/mod.ts";
import { formatGrantRecord, GRANT_ANNOTATION, parseGrantRecord } from "../../lib/api/mod.ts";
import { rng } from "./rng.ts";
import { shrink } from "./shrink.ts";
import { generateOps, type SimOptions, simulate } from "./simulate.ts";

/** Rewrites the JSON answers of one route (a planted bug). */
function rewrite(path: string, change: (body: Record<string, unknown>) => void): RouteRegistrar {
  return (app) =>
    app.use(path, async (c, next) => {
      await next();
      if (c.res.status !== 200) return;
      const body = await c.res.json();
      change(body);
      c.res = new Response(JSON.stringify(body), {
        status: 200,
        headers: { "content-type": "application/json" },
      });
    });
}

async function firstFailing(options: SimOptions, ops: number, seeds: number) {
  for (let seed = 1; seed <= seeds; seed++) {
    const result = await simulate(generateOps(seed, ops), options);
    if (result.violation) return { seed, result, ops: generateOps(seed, ops) };
  }
  return undefined;
}

Deno.test("rng: a seed names one stream, and below(n) stays below n", () => {
  const a = rng(42), b = rng(42), c = rng(43);
  const first = Array.from({ length: 8 }, () => a.next());
  assert.deepEqual(Array.from({ length: 8 }, () => b.next()), first);
  assert.notDeepEqual(Array.from({ length: 8 }, () => c.next()), first);
  const r = rng(1);
  for (let i = 0; i < 1000; i++) assert.ok(r.below(7) < 7);
});

Deno.test("simulate: the same operations give byte-identical results, another seed another run", async () => {
  const one = await simulate(generateOps(5, 400));
  const again = await simulate(generateOps(5, 400));
  const other = await simulate(generateOps(6, 400));
  assert.equal(JSON.stringify(again), JSON.stringify(one));
  assert.notEqual(other.digest, one.digest);
  assert.equal(one.violation, undefined);
});

Deno.test("simulate: a run builds clusters, grants addresses and injects every fault kind", async () => {
  let objects: readonly Obj[] = [];
  const result = await simulate(generateOps(3, 3000), { end: (o) => (objects = o) });
  assert.equal(result.violation, undefined);
  const ready = objects.filter((o) => o.kind === "TenantCluster" && o.status?.phase === "Ready");
  const allocated = objects.filter((o) => o.kind === "IPAllocation" && o.status?.phase === "Allocated");
  assert.ok(ready.length >= 1, `${ready.length} TenantClusters Ready`);
  assert.ok(allocated.length >= 4, `${allocated.length} IPAllocations Allocated`);
  assert.ok(result.refused > 0 && result.admitted > result.refused);
  for (
    const kind of [
      "hook-error",
      "hook-timeout",
      "write-lost",
      "conflict",
      "duplicate-event",
      "metacontroller-restart",
      "service-restart",
      "finalizer-removed",
      "recreate",
      "clock-jump",
      "webhook-down",
      "webhook-slow",
      "status-emptied-one",
    ]
  ) assert.ok((result.faults[kind] ?? 0) > 0, `no ${kind} fault injected`);
});

Deno.test("simulate: a TenantCluster webhook that admits everything breaks a quota, and the trace shrinks", async () => {
  const options = {
    routes: [rewrite("/webhooks/validate/tenantcluster", (b) => {
      (b.response as Record<string, unknown>).allowed = true;
      delete (b.response as Record<string, unknown>).status;
    })],
  };
  const found = await firstFailing(options, 600, 10);
  assert.ok(found, "no seed of 10 broke a quota");
  assert.equal(found.result.violation!.invariant, "quota");
  const shrunk = await shrink(found.ops, 40, options);
  assert.equal(shrunk.result.violation!.invariant, "quota");
  assert.ok(shrunk.ops.length < found.result.ops, `${shrunk.ops.length} of ${found.result.ops} operations`);
  const replayed = await simulate(shrunk.ops, options);
  assert.equal(JSON.stringify(replayed), JSON.stringify(shrunk.result));
});

Deno.test("simulate: an IPAllocation hook that records another range than its grant is caught", async () => {
  const options = {
    routes: [rewrite("/hooks/ipallocation/sync", (b) => {
      const annotations = b.annotations as Record<string, string> | undefined;
      const record = parseGrantRecord(annotations?.[GRANT_ANNOTATION]);
      // Records the range one address further on than the pool granted.
      if (record) {
        annotations![GRANT_ANNOTATION] = formatGrantRecord({
          ...record,
          range: { start: record.range.start + 1n, end: record.range.end + 1n },
        });
      }
    })],
  };
  const found = await firstFailing(options, 600, 10);
  assert.ok(found, "no seed of 10 caught the wrong record");
  assert.match(found.result.violation!.invariant, /^(granted-twice|grant-moved|ledger-holders)$/);
});

Deno.test("simulate: without a ledger, admission decides on a lagging view, and nothing in force passes a limit", async () => {
  // What the controllers admitted over the runs: starts, and changes of what a started cluster has.
  const admitted = new Map<string, string>();
  let starts = 0, changes = 0;
  const watch = (_: number, e: { object: Obj }) => {
    const o = e.object;
    if (o.kind !== "ConfigMap" || !o.data?.admitted || admitted.get(o.metadata.uid) === o.data.admitted) {
      return;
    }
    if (admitted.has(o.metadata.uid)) changes++;
    else starts++;
    admitted.set(o.metadata.uid, o.data.admitted);
  };
  for (let seed = 1; seed <= 4; seed++) {
    const result = await simulate(generateOps(seed, 1500), { unauthenticated: true, watch });
    assert.equal(result.violation, undefined, JSON.stringify(result.violation));
  }
  assert.ok(starts >= 10 && changes >= 3, `${starts} starts, ${changes} changes admitted`);
});

Deno.test("simulate: without a ledger, a cluster that applies what it claims at once breaks a quota", async () => {
  const options = {
    unauthenticated: true,
    routes: [rewrite("/hooks/tenantcluster/sync", (b) => {
      for (const c of (b.children ?? []) as { kind?: string; data?: Record<string, string> }[]) {
        if (c.kind === "ConfigMap" && c.data?.claim) c.data = { admitted: c.data.claim };
      }
    })],
  };
  const found = await firstFailing(options, 1500, 10);
  assert.ok(found, "no seed of 10 broke a quota");
  assert.equal(found.result.violation!.invariant, "quota");
});
