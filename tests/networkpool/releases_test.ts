/**
 * Releases: for any sequence of requests, releases and passing time in a pool with a cooldown, no range is granted
 * within the cooldown of its release (pinned requests included), the pool resyncs exactly when the first cooling
 * range frees, and the history holds the last releases, newest first, within its limit, while the total counts
 * them all. Cooling ranges past their byte bound end early, oldest first.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { COOLING_MAX_BYTES, recordReleases } from "../../hooks/networkpool/mod.ts";
import { findGrant } from "../../lib/pool_ledger/mod.ts";
import { overlaps, parseRange, type Range } from "../../lib/ipam/mod.ts";
import { syncPool, testAllocation } from "./sync_pool.ts";

type Step =
  | { t: "create"; count: number; pin?: number }
  | { t: "delete"; pick: number }
  | { t: "wait"; seconds: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant("create" as const),
      count: fc.integer({ min: 1, max: 4 }),
      pin: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
    }),
  },
  { weight: 3, arbitrary: fc.record({ t: fc.constant("delete" as const), pick: fc.nat() }) },
  {
    weight: 2,
    arbitrary: fc.record({ t: fc.constant("wait" as const), seconds: fc.integer({ min: 1, max: 200 }) }),
  },
);

const allocation = (uid: string, seq: number, count: number, pin?: number) =>
  testAllocation(uid, seq, count, pin, 15);

const range = (text: string): Range => {
  const r = parseRange(text);
  if (!r.ok) throw new Error(text);
  return r.value;
};

Deno.test("no range is granted within the cooldown of its release; the history stays within its limit", () => {
  fc.assert(
    fc.property(
      fc.array(step, { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 0, max: 300 }),
      fc.integer({ min: 0, max: 5 }),
      (steps, cooldown, limit) => {
        const spec = { cidr: "10.9.0.0/28", releaseCooldownSeconds: cooldown, releaseHistoryLimit: limit };
        let status: unknown;
        let now = Date.parse("2026-11-21T09:00:00Z");
        const live = new Map<string, ReturnType<typeof allocation>>();
        const granted = new Map<string, Range>();
        const releases: { range: Range; at: number }[] = [];
        let seq = 0;
        let total = 0;
        for (const s of steps) {
          if (s.t === "create") {
            const uid = `a${seq++}`;
            live.set(uid, allocation(uid, seq, s.count, s.pin));
          } else if (s.t === "delete" && live.size) {
            live.delete([...live.keys()][s.pick % live.size]!);
          } else if (s.t === "wait") now += s.seconds * 1000;
          const related = Object.fromEntries([...live].map(([uid, a]) => [`team-a/${uid}`, a]));
          const res = syncPool(
            { metadata: { name: "p", namespace: "butler-system", uid: "pool", generation: 1 }, spec, status },
            related,
            new Date(now),
          );
          status = res.status;
          const st = res.status as Record<string, unknown>;
          for (const [uid, r] of [...granted]) {
            if (findGrant(st, uid)) continue;
            releases.push({ range: r, at: now });
            granted.delete(uid);
            total++;
          }
          for (const uid of live.keys()) {
            const g = findGrant(st, uid);
            if (!g || granted.has(uid)) continue;
            for (const r of releases) {
              assert.ok(
                now - r.at >= cooldown * 1000 || !overlaps(r.range, g.range),
                `${uid} granted a range released ${(now - r.at) / 1000} s ago, cooldown ${cooldown} s`,
              );
            }
            granted.set(uid, g.range);
          }
          const recorded = st.releases as {
            total: number;
            history: { releasedAt: string }[];
            cooling?: { range: string; releasedAt: string }[];
          } | undefined;
          assert.equal(recorded?.total ?? 0, total);
          assert.ok((recorded?.history.length ?? 0) <= limit);
          assert.equal(recorded?.history.length ?? 0, Math.min(limit, total));
          const times = (recorded?.history ?? []).map((h) => h.releasedAt);
          assert.deepEqual(times, [...times].sort().reverse(), "newest first");
          // The pool comes back exactly when the first cooling range frees (or sooner, for a retry).
          const cooling = (recorded?.cooling ?? []).map((c) =>
            Date.parse(c.releasedAt) + cooldown * 1000 - now
          );
          if (cooling.length) {
            assert.ok(
              res.resyncAfterSeconds !== undefined &&
                res.resyncAfterSeconds <= Math.ceil(Math.min(...cooling) / 1000),
            );
            for (const c of recorded!.cooling!) {
              assert.ok(releases.some((r) => r.range.start <= range(c.range).start));
            }
          }
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("cooling ranges past their byte bound end early, oldest first", () => {
  const now = new Date("2026-11-21T09:00:00Z");
  const earlier = new Date("2026-11-21T08:59:00Z");
  const old = Array.from({ length: 4000 }, (_, i) => ({
    range: `10.${(i >> 8) & 255}.${i & 255}.0-10.${(i >> 8) & 255}.${i & 255}.7`,
    releasedAt: earlier.toISOString().replace(".000", ""),
  }));
  const out = recordReleases({
    status: { releases: { total: 4000, cooling: old, history: [] } },
    family: 4,
    dropped: [{
      uid: "u-new",
      family: 4,
      range: { start: 0x0b000000n, end: 0x0b000007n },
      grantedAt: "2026-11-20T00:00:00Z",
    }],
    holds: () => false,
    terminating: new Map(),
    allocatable: [{ start: 0n, end: 0xffffffffn }],
    cooldownSeconds: 3600,
    historyLimit: 10,
    now,
  });
  const kept = out.releases.cooling!;
  assert.ok(JSON.stringify(kept).length <= COOLING_MAX_BYTES, `${JSON.stringify(kept).length} bytes`);
  assert.ok(kept.length < 4001);
  assert.ok(kept.some((c) => c.range === "11.0.0.0-11.0.0.7"), "the newest release still cools");
  assert.equal(out.resyncAfterSeconds, 3540);
});

Deno.test("a damaged history entry costs only itself: the cooling ranges still keep their addresses out", () => {
  const now = new Date("2026-11-21T09:00:00Z");
  const out = recordReleases({
    status: {
      releases: {
        total: 3,
        cooling: [{ range: "10.9.0.0-10.9.0.3", releasedAt: "2026-11-21T08:59:00Z" }, { range: 7 }],
        history: [{ range: "10.9.0.0-10.9.0.3" }, {
          range: "10.9.0.0-10.9.0.3",
          holder: { kind: "IPAllocation", uid: "u-1" },
          grantedAt: "2026-11-20T00:00:00Z",
          releasedAt: "2026-11-21T08:59:00Z",
        }],
        releasing: { "u-2": "team-a/x", "u-3": 4 },
      },
    },
    family: 4,
    dropped: [],
    holds: () => true,
    terminating: new Map(),
    allocatable: [{ start: 0x0a090000n, end: 0x0a09000fn }],
    cooldownSeconds: 300,
    historyLimit: 10,
    now,
  });
  assert.deepEqual(out.cooling, [{ start: 0x0a090000n, end: 0x0a090003n }]);
  assert.equal(out.releases.total, 3);
  assert.deepEqual(out.releases.history.map((h) => h.holder.uid), ["u-1"]);
  assert.deepEqual(out.releases.releasing, { "u-2": "team-a/x" });
  assert.equal(out.resyncAfterSeconds, 240);
});
