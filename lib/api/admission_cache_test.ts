import assert from "node:assert/strict";
import { createKubeCache, createKubeClient } from "../kube/mod.ts";
import { ADMISSION_CACHE, ADMISSION_CACHE_MAX_BACKOFF_MS, ADMISSION_CACHE_WATCH } from "./admission_cache.ts";

/** The waits between attempts of a cache whose every list is refused (RBAC not there yet), worst-case jitter. */
async function waitsWhileRefused(watch: Record<string, unknown>, attempts: number): Promise<number[]> {
  const client = createKubeClient({ server: "https://api.invalid" }, {
    retries: 0,
    fetch: () =>
      Promise.resolve(Response.json({ kind: "Status", reason: "Forbidden", message: "no" }, { status: 403 })),
  });
  const waits: number[] = [];
  const cache = createKubeCache({
    client,
    collections: ADMISSION_CACHE.slice(0, 1),
    watch: {
      ...watch,
      random: () => 1,
      // Recorded, not slept: the test sees the whole backoff sequence at once.
      sleep: (ms: number) => (waits.push(ms), new Promise<void>((r) => setTimeout(r, 0))),
    },
  });
  cache.start();
  for (let i = 0; i < 500 && waits.length < attempts; i++) await new Promise((r) => setTimeout(r, 1));
  await cache.stop();
  return waits.slice(0, attempts);
}

Deno.test("the admission cache retries a refused list within 5 s, however long it has been refused", async (t) => {
  await t.step("shipped: doubling from 0.5 s, capped at 5 s", async () => {
    const waits = await waitsWhileRefused(ADMISSION_CACHE_WATCH, 12);
    assert.deepEqual(waits.slice(0, 5), [500, 1000, 2000, 4000, ADMISSION_CACHE_MAX_BACKOFF_MS]);
    assert.ok(waits.every((ms) => ms <= ADMISSION_CACHE_MAX_BACKOFF_MS), waits.join(" "));
  });
  // What the real controller tier found: without the cap, creates were refused 503 for half a minute after an
  // install while the cache waited.
  await t.step("the watch's own default would wait 30 s", async () => {
    const waits = await waitsWhileRefused({}, 12);
    assert.equal(Math.max(...waits), 30_000);
  });
});
