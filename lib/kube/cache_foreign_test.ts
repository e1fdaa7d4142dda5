/**
 * What a team's stored objects can do to the admission cache (issue #55, item 1): nothing. Objects whose free-form
 * members cost hundreds of megabytes to parse are read as the projection keeps them; a collection whose objects
 * do not fit one page is paged; a live read of a cached collection is projected like the cache.
 */
import assert from "node:assert/strict";
import { createKubeCache } from "./cache.ts";
import { createKubeClient } from "./client.ts";
import { createHeapBudget } from "../foreign/mod.ts";
import { ADMISSION_CACHE } from "../api/mod.ts";

const G = "/apis/butler.butlerlabs.dev/v1alpha1";
const MIB = 1024 * 1024;

/** A TenantCluster with `bytes` of empty objects under `spec.addons[0].values`, as a team may store one. */
function heavy(i: number, bytes: number): string {
  const values = `[${"{},".repeat(Math.floor(bytes / 3))}{}]`;
  return `{"apiVersion":"butler.butlerlabs.dev/v1alpha1","kind":"TenantCluster","metadata":{"name":"c${i}",` +
    `"namespace":"team-a","uid":"u${i}","resourceVersion":"${
      10 + i
    }","labels":{"butler.butlerlabs.dev/environment":"dev",` +
    `"noise-${i}":"x"},"annotations":{"butler.butlerlabs.dev/owner":"o${i}@x","kubectl.kubernetes.io/last-applied-configuration":` +
    `"${
      "y".repeat(1000)
    }"}},"spec":{"kubernetesVersion":"v1.30.0","addons":[{"name":"a","values":{"v":${values}}}]},` +
    `"status":{"effective":{"workers":{"value":{"replicas":3}}},"conditions":[{"type":"Ready"}]}}`;
}

/** A fake API with one TenantCluster collection: pages by `limit`/`continue`, watches that stay open, and counts. */
function fakeApi(objects: string[], rv: string) {
  const seen = { lists: [] as string[], revisions: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    if (url.searchParams.get("watch") === "1") return new Response(new ReadableStream({ start() {} }));
    const limit = Number(url.searchParams.get("limit") ?? objects.length);
    if (url.pathname === `${G}/tenantclusters` && limit === 1 && !url.searchParams.has("continue")) {
      seen.revisions++;
    }
    const from = Number(url.searchParams.get("continue") ?? 0);
    const page = url.pathname.endsWith("/tenantclusters") ? objects.slice(from, from + limit) : [];
    seen.lists.push(`${url.pathname.split("/").pop()} ${limit}`);
    const next = from + limit < objects.length && url.pathname.endsWith("/tenantclusters")
      ? String(from + limit)
      : "";
    return new Response(
      `{"kind":"List","metadata":{"resourceVersion":"${rv}"${next ? `,"continue":"${next}"` : ""}},"items":[${
        page.join(",")
      }]}`,
    );
  });
  return { server, seen, url: `http://127.0.0.1:${server.addr.port}` };
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check() && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(check(), what);
}

Deno.test("a team's stored objects cannot stop the admission cache", async (t) => {
  // Ten clusters of 1.1 MiB of `{},`: 11 MiB, over one 8 MiB page, and 1 GB of heap if parsed whole.
  const api = fakeApi(Array.from({ length: 10 }, (_, i) => heavy(i, 1.1 * MIB)), "100");
  // The main thread's share for foreign bytes: far less than one such object costs to parse.
  const budget = createHeapBudget({ maxInFlight: 8 * MIB });
  const cache = createKubeCache({
    client: createKubeClient({ server: api.url }, { budget }),
    collections: ADMISSION_CACHE.filter((c) => c.resource === "tenantclusters"),
  });
  try {
    cache.start();
    await t.step("it syncs: the page that does not fit is asked again with fewer objects", async () => {
      await until(() => cache.synced, `synced (lists: ${api.seen.lists.join(", ")})`);
      assert.equal(cache.undecided(), undefined);
      assert.ok(
        api.seen.lists.includes("tenantclusters 500") &&
          api.seen.lists.some((l) => /tenantclusters [1-7]$/.test(l)),
      );
    });
    await t.step("it keeps what admission reads, and none of the free-form values", async () => {
      const items = await cache.list(`${G}/namespaces/team-a/tenantclusters`) as Record<string, unknown>[];
      assert.equal(items.length, 10);
      assert.deepEqual(items[3], {
        metadata: {
          name: "c3",
          namespace: "team-a",
          uid: "u3",
          resourceVersion: "13",
          labels: { "butler.butlerlabs.dev/environment": "dev" },
          annotations: { "butler.butlerlabs.dev/owner": "o3@x" },
        },
        spec: { kubernetesVersion: "v1.30.0", addons: [{ name: "a" }] },
        status: { effective: { workers: { value: { replicas: 3 } } } },
      });
      assert.equal(budget.charged, 0, "every charge given back");
    });
    await t.step("a live read of a cached collection is projected like the cache", async () => {
      const live = await cache.get(`${G}/namespaces/team-a/tenantclusters/c1`, { live: true });
      // The fake answers a GET with a list page; what matters is that nothing past the projection came back.
      assert.ok(!JSON.stringify(live).includes("{}"), "no free-form values");
    });
  } finally {
    await cache.stop();
    await api.server.shutdown();
  }
});

Deno.test("the cache says it cannot decide until listed, and while its watches fail", async () => {
  let now = 0;
  const cache = createKubeCache({
    client: createKubeClient({ server: "http://127.0.0.1:9" }, { retries: 0 }),
    collections: ADMISSION_CACHE.slice(0, 1),
    clock: () => now,
    watch: { sleep: () => new Promise((r) => setTimeout(r, 5)) },
  });
  assert.equal(cache.undecided(), "the admission cache has not started");
  cache.start();
  assert.match(cache.undecided()!, /has not been listed yet/);
  now = 60_000;
  assert.match(cache.undecided()!, /has not been listed yet/);
  await cache.stop();
});
