/**
 * Capacity Events: which tier changes a sync announces, the 10-minute rate limit per tier, and that the state a
 * pool ends in is always announced (held-back changes come back through resyncAfterSeconds).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  announce,
  type Announcement,
  CAPACITY_EVENT_INTERVAL_SECONDS,
  networkPoolSignals,
  syncNetworkPool,
} from "../../hooks/networkpool/mod.ts";
import { withCheckpoint } from "./sync_pool.ts";
import { API_VERSION } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import type { DecoratorRequest } from "../../lib/contract/mod.ts";

const T0 = new Date("2026-11-23T01:00:00Z");
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);

function tiers(percent: number): ConditionInput[] {
  return [["CapacityWarning", 70], ["CapacityCritical", 85], ["CapacityExhausted", 95]].map(([type, t]) => ({
    type: type as string,
    status: percent >= (t as number) ? "True" : "False",
    reason: "r",
    message: `Pool utilization is ${percent}% (${percent}/100 IPs)`,
  }));
}

Deno.test("announce", async (t) => {
  await t.step("a new pool below every threshold announces nothing", () => {
    assert.deepEqual(announce([], tiers(50), T0), { announcements: [] });
  });

  await t.step("crossing two thresholds at once announces both, at now", () => {
    assert.deepEqual(announce([], tiers(90), T0).announcements, [
      { type: "CapacityWarning", status: "True", time: "2026-11-23T01:00:00Z" },
      { type: "CapacityCritical", status: "True", time: "2026-11-23T01:00:00Z" },
    ]);
  });

  await t.step(
    "a change within 10 minutes of the tier's last Event waits, and asks to be called back",
    () => {
      const first = announce([], tiers(75), T0).announcements;
      const early = announce(first, tiers(60), at(240));
      assert.deepEqual(early.announcements, first);
      assert.equal(early.resyncAfterSeconds, CAPACITY_EVENT_INTERVAL_SECONDS - 240);
      const later = announce(first, tiers(60), at(CAPACITY_EVENT_INTERVAL_SECONDS));
      assert.deepEqual(later.announcements, [{
        type: "CapacityWarning",
        status: "False",
        time: "2026-11-23T01:10:00Z",
      }]);
      assert.equal(later.resyncAfterSeconds, undefined);
    },
  );

  await t.step("a pool back where it was announced by the end of the interval says nothing more", () => {
    const first = announce([], tiers(75), T0).announcements;
    assert.deepEqual(announce(first, tiers(75), at(CAPACITY_EVENT_INTERVAL_SECONDS + 1)), {
      announcements: first,
    });
  });

  await t.step("an Unknown tier keeps its announcement; unreadable entries are announced again", () => {
    const first = announce([], tiers(75), T0).announcements;
    const unknown = tiers(75).map((c) => ({ ...c, status: "Unknown" as const }));
    assert.deepEqual(announce(first, unknown, at(3600)).announcements, first);
  });
});

Deno.test("property: at most one Event per tier per 10 minutes, and the final state is announced", () => {
  fc.assert(
    fc.property(
      fc.array(
        fc.record({ after: fc.integer({ min: 1, max: 900 }), percent: fc.integer({ min: 0, max: 100 }) }),
        {
          minLength: 1,
          maxLength: 40,
        },
      ),
      (steps) => {
        let announced: Announcement[] = [];
        let clock = 0;
        const times = new Map<string, number[]>();
        const sync = (percent: number) => {
          const result = announce(announced, tiers(percent), at(clock));
          for (const a of result.announcements) {
            const before = announced.find((b) => b.type === a.type);
            if (before?.time !== a.time) times.set(a.type, [...(times.get(a.type) ?? []), clock]);
          }
          announced = result.announcements;
          return result.resyncAfterSeconds;
        };
        let last = 0;
        for (const step of steps) {
          clock += step.after;
          last = step.percent;
          sync(last);
        }
        // Nothing else changes: the resyncs the hook asked for come, and the final state gets announced.
        for (let wait = sync(last); wait !== undefined; wait = sync(last)) clock += wait;
        for (const list of times.values()) {
          for (let i = 1; i < list.length; i++) {
            assert.ok(list[i]! - list[i - 1]! >= CAPACITY_EVENT_INTERVAL_SECONDS, `${list}`);
          }
        }
        for (const c of tiers(last)) {
          const a = announced.find((x) => x.type === c.type);
          assert.equal(a?.status ?? "False", c.status, `${c.type} at ${last}%`);
        }
      },
    ),
    { numRuns: 300 },
  );
});

function poolRequest(allocated: number, status?: Record<string, unknown>): DecoratorRequest {
  const allocations = Object.fromEntries(
    Array.from({ length: allocated }, (_, i) => {
      const name = `a${i}`;
      return [`butler-system/${name}`, {
        apiVersion: API_VERSION,
        kind: "IPAllocation",
        metadata: {
          name,
          namespace: "butler-system",
          uid: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
          creationTimestamp: "2026-11-23T00:00:00Z",
          labels: { "butler.butlerlabs.dev/network-pool": "pool-a" },
        },
        spec: { poolRef: { name: "pool-a", namespace: "butler-system" }, type: "loadbalancer", count: 1 },
      }];
    }),
  );
  return {
    controller: {},
    object: withCheckpoint({
      apiVersion: API_VERSION,
      kind: "NetworkPool",
      metadata: {
        name: "pool-a",
        namespace: "butler-system",
        uid: "pool-uid",
        generation: 1,
        creationTimestamp: "2026-11-22T00:00:00Z",
      },
      spec: { cidr: "10.0.0.0/28" },
      ...(status ? { status } : {}),
    }),
    attachments: {},
    related: { [`IPAllocation.${API_VERSION}`]: allocations },
    finalizing: false,
  } as unknown as DecoratorRequest;
}

Deno.test("NetworkPool sync announces tier changes, and its signals carry one Event per announcement", async (t) => {
  const context = { now: T0, config: DEFAULT_HOOK_CONFIG };
  // A /28 holds 16 addresses: 12 granted is 75 %.
  const request = poolRequest(12);
  const response = syncNetworkPool(request, context);
  await t.step("the status records the announcement", () => {
    assert.deepEqual((response.status as Record<string, unknown>).capacityEvents, [
      { type: "CapacityWarning", status: "True", time: "2026-11-23T01:00:00Z" },
    ]);
  });
  await t.step("the signals name the pool, its figures and the Event, with the seed's reason", () => {
    const signals = networkPoolSignals(request, response);
    assert.deepEqual(signals, [
      {
        signal: "pool",
        namespace: "butler-system",
        name: "pool-a",
        totalIPs: 16,
        allocatedIPs: 12,
        availableIPs: 4,
        largestFreeBlock: 4,
        allocationCount: 12,
        fragmentationPercent: 0,
        pendingAllocations: 0,
      },
      {
        signal: "event",
        regarding: {
          apiVersion: API_VERSION,
          kind: "NetworkPool",
          namespace: "butler-system",
          name: "pool-a",
          uid: "pool-uid",
        },
        type: "Warning",
        reason: "PoolCapacityWarning",
        message:
          "Pool filling up: at or above the 70% threshold of CapacityWarning. Pool utilization is 75% (12/16 IPs)",
      },
    ]);
  });
  await t.step("the next sync, with that status, says nothing new", () => {
    const again = poolRequest(12, response.status as Record<string, unknown>);
    const next = syncNetworkPool(again, { ...context, now: at(60) });
    assert.deepEqual(networkPoolSignals(again, next).filter((s) => s.signal === "event"), []);
  });
  await t.step("recovery after the interval is a Normal PoolCapacityRecovered Event", () => {
    const fewer = poolRequest(4, response.status as Record<string, unknown>);
    const early = syncNetworkPool(fewer, { ...context, now: at(60) });
    assert.equal(early.resyncAfterSeconds, CAPACITY_EVENT_INTERVAL_SECONDS - 60);
    assert.deepEqual(networkPoolSignals(fewer, early).filter((s) => s.signal === "event"), []);
    const late = syncNetworkPool(fewer, { ...context, now: at(CAPACITY_EVENT_INTERVAL_SECONDS) });
    const events = networkPoolSignals(fewer, late).filter((s) => s.signal === "event");
    assert.deepEqual(events.map((e) => e.signal === "event" && [e.type, e.reason, e.message]), [[
      "Normal",
      "PoolCapacityRecovered",
      "Utilization returned below a threshold: below the 70% threshold of CapacityWarning. Pool utilization is 25% (4/16 IPs)",
    ]]);
  });
  await t.step("a finalized pool's signal drops its series", () => {
    const finalizing = { ...poolRequest(0, response.status as Record<string, unknown>), finalizing: true };
    const done = syncNetworkPool(finalizing, context);
    assert.equal(done.finalized, true);
    assert.deepEqual(networkPoolSignals(finalizing, done), [
      { signal: "pool", namespace: "butler-system", name: "pool-a", gone: true },
    ]);
  });
});
