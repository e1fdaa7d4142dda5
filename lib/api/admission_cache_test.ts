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

Deno.test("a team's object past 1 MiB, changed while the cache watches, is read as its event (issue #55)", async () => {
  // The API server stores a TenantCluster of 1.1 MiB of `{}` under an addon's values; its change arrives as one
  // watch event. Read under a 1 MiB cap it froze the cache of every team's clusters at that version, for ever.
  const G = "/apis/butler.butlerlabs.dev/v1alpha1";
  const tc = (name: string, rv: string, values = "{}") =>
    `{"metadata":{"name":"${name}","namespace":"team-a","resourceVersion":"${rv}"},` +
    `"spec":{"addons":[{"name":"a","values":${values}}]}}`;
  const big = tc("c1", "11", `{"v":[${"{},".repeat(Math.ceil((1.1 * 1024 * 1024) / 3))}{}]}`);
  const lists: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.searchParams.get("watch") !== "1") {
      lists.push(url.pathname);
      const items = url.pathname.endsWith("/tenantclusters") ? tc("c1", "5") : "";
      return new Response(`{"metadata":{"resourceVersion":"10"},"items":[${items}]}`);
    }
    const from = url.searchParams.get("resourceVersion");
    const tcs = url.pathname.endsWith("/tenantclusters") && from === "10";
    return new Response(
      new ReadableStream({
        async start(c) {
          if (tcs) {
            c.enqueue(new TextEncoder().encode(`{"type":"MODIFIED","object":${big}}\n`));
            c.enqueue(new TextEncoder().encode(`{"type":"ADDED","object":${tc("c2", "12")}}\n`));
          }
          await new Promise((r) => setTimeout(r, 200));
          c.close();
        },
      }),
    );
  });
  const cache = createKubeCache({
    client: createKubeClient({ server: `http://127.0.0.1:${server.addr.port}` }),
    collections: ADMISSION_CACHE.filter((c) => c.resource === "tenantclusters"),
    watch: ADMISSION_CACHE_WATCH,
  });
  try {
    cache.start();
    for (let i = 0; i < 1000 && cache.stats().versions.tenantclusters !== "12"; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.equal(cache.stats().versions.tenantclusters, "12", "the change after it applied");
    const items = await cache.list(`${G}/namespaces/team-a/tenantclusters`) as {
      metadata: { name: string };
    }[];
    assert.deepEqual(items.map((i) => i.metadata.name).sort(), ["c1", "c2"]);
    assert.equal(lists.length, 1, "read as an event, not by listing again");
  } finally {
    await cache.stop();
    await server.shutdown();
  }
});
