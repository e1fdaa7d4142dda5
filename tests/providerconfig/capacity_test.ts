import assert from "node:assert/strict";
import fc from "fast-check";
import { CAPACITY_REFRESH_SECONDS, reportedCapacity } from "../../hooks/providerconfig/capacity.ts";
import { syncProviderConfig } from "../../hooks/providerconfig/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";

const fixtures = new URL("../fixtures/providerconfig/sync/", import.meta.url).pathname;
const at = (text: string) => new Date(text);

Deno.test("capacity figures: a change is written at most once in 5 minutes, and never held longer", async (t) => {
  const stored = { availableIPs: 767, estimatedTenants: 59, lastUpdateTime: "2026-11-21T09:10:00Z" };
  const fresh = { availableIPs: 754, estimatedTenants: 58 };

  await t.step("unchanged figures keep their stamp, so nothing is written", () => {
    const same = { availableIPs: 767, estimatedTenants: 59 };
    assert.deepEqual(reportedCapacity(same, stored, at("2026-11-21T12:00:00Z"), true), { capacity: stored });
  });
  await t.step("a change inside the window is held, with a resync at its end", () => {
    assert.deepEqual(reportedCapacity(fresh, stored, at("2026-11-21T09:10:10.500Z"), true), {
      capacity: stored,
      resyncAfterSeconds: 290,
    });
  });
  await t.step("a change after the window is written, stamped now", () => {
    assert.deepEqual(reportedCapacity(fresh, stored, at("2026-11-21T09:15:00Z"), true), {
      capacity: { ...fresh, lastUpdateTime: "2026-11-21T09:15:00Z" },
    });
  });
  await t.step("news (the caller says so), a first report or an unreadable stamp are written at once", () => {
    const now = at("2026-11-21T09:10:01Z");
    const written = { capacity: { ...fresh, lastUpdateTime: "2026-11-21T09:10:01Z" } };
    assert.deepEqual(reportedCapacity(fresh, stored, now, false), written);
    assert.deepEqual(reportedCapacity(fresh, undefined, now, true), written);
    assert.deepEqual(
      reportedCapacity(fresh, { availableIPs: 767, estimatedTenants: 59 }, now, true),
      written,
    );
    assert.deepEqual(reportedCapacity(fresh, { ...stored, lastUpdateTime: "yesterday" }, now, true), written);
  });
  await t.step("a stamp from the future holds nothing", () => {
    const future = { ...stored, lastUpdateTime: "2026-11-21T10:00:00Z" };
    assert.deepEqual(reportedCapacity(fresh, future, at("2026-11-21T09:10:01Z"), true), {
      capacity: { ...fresh, lastUpdateTime: "2026-11-21T09:10:01Z" },
    });
  });

  await t.step(
    "property: over any sequence of syncs, writes are 5 minutes apart and a held change is resynced",
    () => {
      fc.assert(
        fc.property(
          fc.array(fc.record({ after: fc.integer({ min: 0, max: 400_000 }), available: fc.nat(20) }), {
            minLength: 1,
            maxLength: 40,
          }),
          (steps) => {
            let clock = Date.parse("2026-11-21T09:00:00Z");
            let status: unknown = undefined;
            let lastWrite = -Infinity;
            for (const step of steps) {
              clock += step.after;
              const figures = { availableIPs: step.available, estimatedTenants: step.available >> 1 };
              const out = reportedCapacity(figures, status, new Date(clock), true);
              const changed = JSON.stringify(out.capacity) !== JSON.stringify(status);
              if (changed && status !== undefined) {
                assert.ok(
                  clock - lastWrite >= CAPACITY_REFRESH_SECONDS * 1000,
                  "two writes inside one window",
                );
              }
              if (changed) lastWrite = Math.floor(clock / 1000) * 1000;
              const behind = out.capacity.availableIPs !== figures.availableIPs ||
                out.capacity.estimatedTenants !== figures.estimatedTenants;
              assert.equal(behind, out.resyncAfterSeconds !== undefined, "held exactly when behind");
              if (behind) {
                const due = clock + out.resyncAfterSeconds! * 1000;
                assert.ok(
                  due >= lastWrite + CAPACITY_REFRESH_SECONDS * 1000,
                  "resync before the window ends",
                );
                assert.ok(due <= lastWrite + (CAPACITY_REFRESH_SECONDS + 1) * 1000, "resync long after it");
              }
              status = out.capacity;
            }
          },
        ),
        { numRuns: 300 },
      );
    },
  );
});

Deno.test("a ProviderConfig holding a capacity change writes nothing and asks to be synced when it may", async () => {
  const request = JSON.parse(await Deno.readTextFile(`${fixtures}capacity-change-held/request.json`));
  const now = new Date((await Deno.readTextFile(`${fixtures}capacity-change-held/now`)).trim());
  const out = syncProviderConfig(request, { now, config: DEFAULT_HOOK_CONFIG });
  // The very status it read: Metacontroller compares and skips the write, so nothing relating it re-syncs.
  assert.deepEqual(out.status, request.object.status);
  assert.equal(out.resyncAfterSeconds, 290);
});
