import assert from "node:assert/strict";
import { createKubeClient } from "./client.ts";
import { kubeconfigConnection } from "./config.ts";
import { startWatch, type WatchHealth } from "./watch.ts";
import { createHeapBudget, members, WHOLE } from "../foreign/mod.ts";

const svc = (name: string, rv: string) => ({ metadata: { namespace: "a", name, resourceVersion: rv } });

/** A fake collection: pages, then watch streams scripted per connection. */
function fakeServer(script: {
  pages: { items: unknown[]; continue?: string }[];
  watches: ((send: (line: string) => void) => Promise<void> | void)[];
}) {
  const requests: string[] = [];
  let page = 0, watch = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    requests.push(url.search);
    if (url.searchParams.get("watch") !== "1") {
      const p = script.pages[page++ % script.pages.length]!;
      return Response.json({
        items: p.items,
        metadata: { resourceVersion: "10", ...(p.continue ? { continue: p.continue } : {}) },
      });
    }
    const step = script.watches[watch++];
    if (!step) return new Response("{}", { status: 500 });
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        await step((line) => controller.enqueue(new TextEncoder().encode(line + "\n")));
        controller.close();
      },
    });
    return new Response(body);
  });
  return { server, requests, url: `http://127.0.0.1:${server.addr.port}` };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), what);
}

Deno.test("startWatch: pages, events, resume from the last resourceVersion, relist on 410 Gone", async () => {
  const fake = fakeServer({
    pages: [{ items: [svc("one", "1")], continue: "next" }, { items: [svc("two", "2")] }],
    watches: [
      (send) => {
        send(JSON.stringify({ type: "ADDED", object: svc("three", "11") }));
        send(JSON.stringify({ type: "DELETED", object: svc("one", "12") }));
        send(JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "15" } } }));
      },
      (send) => send(JSON.stringify({ type: "ERROR", object: { code: 410, reason: "Expired" } })),
      () => new Promise((r) => setTimeout(r, 2000)),
    ],
  });
  let changes = 0;
  const w = startWatch({
    client: createKubeClient({ server: fake.url }),
    path: "/api/v1/services",
    select: (raw) => (raw as { metadata: { name: string } }).metadata.name,
    watchSeconds: () => 1,
    onChange: () => changes++,
  });
  try {
    await until(() => fake.requests.length >= 6, "relisted after Gone");
    assert.deepEqual(fake.requests.slice(0, 6), [
      "?limit=500",
      "?limit=500&continue=next",
      "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=10",
      "?watch=1&allowWatchBookmarks=true&timeoutSeconds=1&resourceVersion=15",
      "?limit=500",
      "?limit=500&continue=next",
    ]);
    // {two, three} after the watch events is also two items: wait for "one", which only the relist brings back.
    await until(() => w.items.has("a/one") && w.items.size === 2 && w.synced, "relisted items");
    assert.deepEqual([...w.items.keys()].sort(), ["a/one", "a/two"]);
    assert.ok(changes >= 4);
  } finally {
    await w.stop();
    await fake.server.shutdown();
  }
});

Deno.test("startWatch: failures back off and report health; an oversized event is refused", async () => {
  const fake = fakeServer({
    pages: [{ items: [svc("one", "1")] }],
    watches: [
      (send) =>
        send(JSON.stringify({ type: "ADDED", object: { ...svc("big", "2"), pad: "x".repeat(5000) } })),
    ],
  });
  const seen: WatchHealth[] = [];
  const w = startWatch({
    client: createKubeClient({ server: fake.url }),
    path: "/api/v1/services",
    select: (raw) => raw,
    maxEventBytes: 1000,
    backoffMs: 5,
    random: () => 1,
    onHealth: (h) => seen.push(h),
  });
  try {
    await until(() => seen.some((h) => h.state === "failing" && h.error.status === 500), "a 500 reported");
    const tooLarge = seen.find((h) => h.state === "failing" && h.error.reason === "TooLarge");
    assert.ok(tooLarge, "the oversized event failed the watch");
    assert.ok(!w.items.has("a/big"));
    assert.equal(w.synced, true);
  } finally {
    await w.stop();
    await fake.server.shutdown();
  }
});

Deno.test("kubeconfigConnection: inline CA and token; errors name the source, never the content", () => {
  const c = kubeconfigConnection(
    "apiVersion: v1\nclusters: [{name: t, cluster: {server: 'https://10.0.0.1:6443'}}]\n" +
      "users: [{name: u, user: {token: s3cret}}]\ncontexts: [{name: c, context: {cluster: t, user: u}}]\n" +
      "current-context: c\n",
    "Secret a/b",
  );
  assert.equal(c.server, "https://10.0.0.1:6443");
  assert.equal(c.token?.(), "s3cret");
  assert.throws(() => kubeconfigConnection("token: s3cret: [", "Secret a/b"), (err: Error) => {
    assert.equal(err.message, "Secret a/b: not a kubeconfig (YAML does not parse)");
    return true;
  });
  assert.throws(() => kubeconfigConnection("clusters: []", "Secret a/b"), /Secret a\/b: no cluster server/);
  assert.throws(
    () =>
      kubeconfigConnection(
        "clusters: [{name: t, cluster: {server: 'https://x', certificate-authority-data: bm90IGEgY2VydA==}}]",
        "Secret a/b",
      ),
    (err: Error) =>
      err.message === "Secret a/b: the cluster's certificate authority is not a PEM certificate",
  );
});

Deno.test("startWatch: a server that answers continue forever ends the list, which counts as incomplete", async () => {
  const fake = fakeServer({
    pages: [{ items: [svc("again", "1")], continue: "forever" }],
    watches: [() => new Promise((r) => setTimeout(r, 2000))],
  });
  const w = startWatch({
    client: createKubeClient({ server: fake.url }),
    path: "/api/v1/services",
    select: (raw) => (raw as { metadata: { name: string } }).metadata.name,
    maxItems: 10,
    pageSize: 5,
  });
  try {
    await until(() => w.synced, "the list ended");
    const lists = fake.requests.filter((q) => !q.includes("watch=1"));
    assert.equal(lists.length, 4, "ceil(10 / 5) + 2 pages, no more");
    assert.equal(w.overflow, true);
    assert.deepEqual([...w.items.values()], ["again"]);
  } finally {
    await w.stop();
    await fake.server.shutdown();
  }
});

Deno.test("startWatch: between failed reconnects the watch is never reported healthy", async () => {
  // One watch that ends, then every reconnect answered 500: after the first failure the health must stay
  // "failing" (a reporter would otherwise refresh observedAt for a tenant that is gone).
  const fake = fakeServer({
    pages: [{ items: [svc("one", "1")] }],
    watches: [
      (send) => send(JSON.stringify({ type: "BOOKMARK", object: { metadata: { resourceVersion: "11" } } })),
    ],
  });
  const seen: string[] = [];
  const w = startWatch({
    client: createKubeClient({ server: fake.url }, { retries: 0 }),
    path: "/api/v1/services",
    select: (raw) => (raw as { metadata: { name: string } }).metadata.name,
    backoffMs: 5,
    maxBackoffMs: 10,
    onHealth: (h) => seen.push(h.state),
  });
  try {
    await until(() => seen.filter((s) => s === "failing").length >= 3, "three failed reconnects");
    const afterFirstFailure = seen.slice(seen.indexOf("failing"));
    assert.ok(!afterFirstFailure.includes("watching"), seen.join(" "));
  } finally {
    await w.stop();
    await fake.server.shutdown();
  }
});

/**
 * A collection as a real API server serves it (issue #55): a watch from a resourceVersion before an object's change
 * always sends that change first, so a watch that cannot read the event and resumes from the same version meets it
 * again, for ever. A list brings the object (in a page of what fits) and a version past it.
 */
function collectionServer(event: string) {
  const requests: string[] = [];
  let lists = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    const url = new URL(req.url);
    requests.push(url.search);
    if (url.searchParams.get("watch") !== "1") {
      const after = lists++ > 0;
      return Response.json({
        items: after ? [svc("one", "1"), svc("big", "11")] : [svc("one", "1")],
        metadata: { resourceVersion: after ? "12" : "10" },
      });
    }
    const from = Number(url.searchParams.get("resourceVersion"));
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        const send = (line: string) => c.enqueue(new TextEncoder().encode(line + "\n"));
        if (from < 11) send(event);
        send(JSON.stringify({ type: "ADDED", object: svc("three", "13") }));
        c.close();
      },
    });
    return new Response(body);
  });
  return { server, requests, url: `http://127.0.0.1:${server.addr.port}` };
}

Deno.test("startWatch: an event it cannot read is never resumed onto: it relists, and follows what comes after", async (t) => {
  const unreadable = {
    "over the event cap": JSON.stringify({
      type: "MODIFIED",
      object: { ...svc("big", "11"), pad: "x".repeat(5000) },
    }),
    "not JSON": `{"type":"MODIFIED","object":${JSON.stringify(svc("big", "11")).slice(0, -1)}`,
  };
  for (const [why, event] of Object.entries(unreadable)) {
    await t.step(why, async () => {
      const fake = collectionServer(event);
      const w = startWatch({
        client: createKubeClient({ server: fake.url }),
        path: "/api/v1/services",
        select: (raw) => (raw as { metadata: { name: string } }).metadata.name,
        maxEventBytes: 1000,
        backoffMs: 5,
        random: () => 1,
      });
      try {
        for (let i = 0; i < 500 && !w.items.has("a/three"); i++) await new Promise((r) => setTimeout(r, 10));
        const resumed = fake.requests.filter((r) => r.endsWith("resourceVersion=10")).length;
        assert.ok(
          w.items.has("a/three"),
          `the change after it applied (${resumed} watches resumed before it)`,
        );
        assert.ok(w.items.has("a/big"), "the object read by the list");
        assert.equal(w.resourceVersion, "13");
      } finally {
        await w.stop();
        await fake.server.shutdown();
      }
    });
  }
});

Deno.test("startWatch: a watch that opens and fails before it reads anything backs off like any failure", async () => {
  // Every watch opens, then sends a line that is not JSON: were an opened watch a success, every reconnect would be
  // a first attempt, at once.
  const fake = fakeServer({
    pages: [{ items: [svc("one", "1")] }],
    watches: Array.from({ length: 50 }, () => (send: (line: string) => void) => send("{not json")),
  });
  const attempts: number[] = [];
  const w = startWatch({
    client: createKubeClient({ server: fake.url }),
    path: "/api/v1/services",
    select: (raw) => raw,
    backoffMs: 1,
    maxBackoffMs: 8,
    random: () => 1,
    onHealth: (h) => h.state === "failing" && attempts.push(h.attempts),
  });
  try {
    for (let i = 0; i < 500 && attempts.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(attempts.slice(0, 4), [1, 2, 3, 4]);
  } finally {
    await w.stop();
    await fake.server.shutdown();
  }
});

Deno.test("startWatch: a page of more objects than the watch keeps builds no more of them than it keeps", async () => {
  // A tenant's page of 100,000 objects (8 MiB of `{}` ended the reporter): a watch that keeps at most 10 objects
  // reads 11 of them (the 11th says it overflowed) and skips the rest unbuilt, within a budget that could not hold
  // them all.
  const items = Array.from({ length: 100_000 }, (_, i) => `{"metadata":{"name":"s${i}"}}`).join(",");
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req) =>
      new URL(req.url).searchParams.get("watch") === "1"
        ? new Response(new ReadableStream({ start() {} }))
        : new Response(`{"metadata":{"resourceVersion":"1"},"items":[${items}]}`),
  );
  const budget = createHeapBudget({
    share: 1,
    maxInFlight: 1024 * 1024,
    heapLimit: () => 1 << 30,
    heapUsed: () => 0,
  });
  const w = startWatch({
    client: createKubeClient({ server: `http://127.0.0.1:${server.addr.port}` }, { budget }),
    path: "/api/v1/services",
    projection: members({ metadata: members({ name: WHOLE }) }),
    select: (raw) => raw,
    maxItems: 10,
  });
  try {
    for (let i = 0; i < 500 && !w.synced; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(w.synced, "listed");
    assert.equal(w.overflow, true);
  } finally {
    await w.stop();
    await server.shutdown();
  }
});
