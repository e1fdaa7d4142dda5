import assert from "node:assert/strict";
import { createKubeCache } from "./cache.ts";
import { laterRevision, reached } from "./revision.ts";
import { createKubeClient } from "./client.ts";
import { KubeApiError } from "./client.ts";

const G = "/apis/butler.butlerlabs.dev/v1alpha1";
const tc = (ns: string, name: string, rv: string) => ({
  metadata: { namespace: ns, name, resourceVersion: rv },
  spec: { n: name },
});

/** A fake API: one list per collection, a watch whose events the test sends, and a log of other requests. */
function fakeApi(
  lists: Record<string, { items: unknown[]; rv: string }>,
  opts: { holdList?: Promise<void> } = {},
) {
  const live: string[] = [];
  const streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const collection = Object.keys(lists).find((p) => url.pathname === p);
    if (collection && url.searchParams.get("watch") === "1") {
      return new Response(
        new ReadableStream<Uint8Array>({ start: (c) => void streams.set(collection, c) }),
      );
    }
    if (collection && url.searchParams.has("limit")) {
      await opts.holdList;
      const l = lists[collection]!;
      return Response.json({ items: l.items, metadata: { resourceVersion: l.rv } });
    }
    live.push(`${url.pathname}${url.search}`);
    return Response.json({ live: url.pathname, items: [{ live: true, metadata: { name: "live" } }] });
  });
  const send = (collection: string, event: unknown) =>
    streams.get(collection)?.enqueue(new TextEncoder().encode(JSON.stringify(event) + "\n"));
  return { server, live, send, url: `http://127.0.0.1:${server.addr.port}`, streams };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
}

Deno.test("reached compares etcd revisions as numbers, and never takes anything else as reached", () => {
  assert.equal(reached("120", "99"), true);
  assert.equal(reached("99", "120"), false);
  assert.equal(reached("120", "120"), true);
  assert.equal(reached(undefined, "1"), false);
  assert.equal(reached("abc", "1"), false);
  assert.equal(reached("5", "x"), false);
  assert.equal(laterRevision("7", "12"), "12");
  assert.equal(laterRevision("12", "7"), "12");
  assert.equal(laterRevision(undefined, "12"), "12");
  assert.equal(laterRevision("x", undefined), undefined);
  assert.equal(laterRevision("7", "x"), undefined);
});

Deno.test("createKubeCache", async (t) => {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const api = fakeApi({
    [`${G}/tenantclusters`]: { items: [tc("a", "one", "5"), tc("b", "two", "6")], rv: "10" },
    [`${G}/teams`]: { items: [{ metadata: { name: "t", resourceVersion: "3" } }], rv: "10" },
    ["/api/v1/configmaps"]: {
      items: [{ metadata: { namespace: "a", name: "ledger", resourceVersion: "7" } }],
      rv: "10",
    },
  }, { holdList: held });
  const cache = createKubeCache({
    client: createKubeClient({ server: api.url }),
    collections: [
      {
        prefix: G,
        resource: "tenantclusters",
        select: (raw) => ({ metadata: (raw as { metadata: unknown }).metadata }),
      },
      { prefix: G, resource: "teams" },
      { prefix: "/api/v1", resource: "configmaps", name: "ledger" },
    ],
    waitMs: 200,
    syncWaitMs: 100,
  });
  const rvOf = () => cache.stats().versions.tenantclusters;
  try {
    await t.step(
      "the first read starts the watches; before their first list it waits, then is a 503 CacheNotSynced",
      async () => {
        await assert.rejects(
          cache.get(`${G}/teams/t`),
          (e) => e instanceof KubeApiError && e.status === 503 && e.reason === "CacheNotSynced",
        );
        assert.equal(cache.synced, false);
      },
    );
    release();
    await until(() => cache.synced, "the cache syncs");

    await t.step("objects and namespaced lists come from memory, reduced by select", async () => {
      assert.deepEqual(await cache.get(`${G}/namespaces/a/tenantclusters/one`), {
        metadata: { namespace: "a", name: "one", resourceVersion: "5" },
      });
      assert.equal(await cache.get(`${G}/namespaces/a/tenantclusters/none`), undefined);
      assert.deepEqual((await cache.list(`${G}/namespaces/b/tenantclusters`)).length, 1);
      assert.deepEqual((await cache.list(`${G}/tenantclusters`)).length, 2);
      assert.deepEqual(await cache.get(`${G}/teams/t`), { metadata: { name: "t", resourceVersion: "3" } });
      assert.deepEqual(api.live, []);
      assert.deepEqual(cache.stats().objects, { tenantclusters: 2, teams: 1, configmaps: 1 });
    });

    await t.step("events update the objects and the namespace's list", async () => {
      await until(() => api.streams.size === 3, "watching");
      api.send(`${G}/tenantclusters`, { type: "ADDED", object: tc("a", "three", "11") });
      api.send(`${G}/tenantclusters`, { type: "DELETED", object: tc("b", "two", "12") });
      const names = async (ns: string) =>
        (await cache.list(`${G}/namespaces/${ns}/tenantclusters`) as { metadata: { name: string } }[])
          .map((c) => c.metadata.name).sort();
      await until(() => rvOf() === "12", "both events applied");
      assert.deepEqual(await names("a"), ["one", "three"]);
      assert.deepEqual(await names("b"), []);
    });

    await t.step("an atLeast read waits for the watch to reach the version, else reads the API", async () => {
      const waiting = cache.list(`${G}/namespaces/a/tenantclusters`, { atLeast: "20" });
      api.send(`${G}/tenantclusters`, { type: "ADDED", object: tc("a", "four", "20") });
      assert.equal((await waiting).length, 3);
      assert.deepEqual(api.live, []);
      const stale = await cache.list(`${G}/namespaces/a/tenantclusters`, { atLeast: "999" });
      // Kept as the cache keeps the collection (its select), whether from memory or the API.
      assert.deepEqual(stale, [{ metadata: { name: "live" } }]);
      assert.deepEqual(api.live, [`${G}/namespaces/a/tenantclusters?limit=500`]);
      // A bookmark moves the version without an object.
      api.send(`${G}/tenantclusters`, { type: "BOOKMARK", object: { metadata: { resourceVersion: "999" } } });
      await until(() => rvOf() === "999", "bookmark applied");
      const after = await cache.list(`${G}/namespaces/a/tenantclusters`, { atLeast: "999" });
      assert.equal(after.length, 3);
      assert.equal(api.live.length, 1);
    });

    await t.step(
      "live reads, set-based selectors, other names and uncached kinds go to the API",
      async () => {
        api.live.length = 0;
        await cache.get(`${G}/teams/t`, { live: true });
        await cache.list(`${G}/namespaces/a/tenantclusters`, { labelSelector: "x in (y)" });
        await cache.get("/api/v1/namespaces/a/configmaps/other");
        await cache.get(`${G}/networkpools/p`);
        assert.deepEqual(api.live, [
          `${G}/teams/t`,
          `${G}/namespaces/a/tenantclusters?labelSelector=x%20in%20(y)&limit=500`,
          "/api/v1/namespaces/a/configmaps/other",
          `${G}/networkpools/p`,
        ]);
        assert.deepEqual(await cache.get("/api/v1/namespaces/a/configmaps/ledger"), {
          metadata: { namespace: "a", name: "ledger", resourceVersion: "7" },
        });
      },
    );
  } finally {
    await cache.stop();
    await api.server.shutdown();
  }
});
