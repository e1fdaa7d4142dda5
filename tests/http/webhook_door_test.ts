/**
 * Issue #46, item 2: the webhook listener has a byte limit and a door of its own, and every body is charged to the
 * heap budget before it is parsed. An 8 MiB AdmissionReview used to be parsed whole on the main thread and end
 * the process; now a review past the webhook limit is refused unread (413), one whose parse could need more heap
 * than the process may spend is refused before its parse (413, or 503 while others hold it), and past the
 * door's count or bytes a review is answered 429 before its body is read.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { createHeapBudget, jsonHeapEstimate } from "../../lib/foreign/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { TEST_EPOCH } from "../../lib/testing/mod.ts";
import { heldKube } from "./listener_helpers.ts";

const MIB = 1024 * 1024;
const review = Deno.readTextFileSync(
  new URL("../fixtures/providerconfig/admission/update-reads-nothing/request.json", import.meta.url),
);
const deleteReview = Deno.readTextFileSync(
  new URL(
    "../fixtures/providerconfig/admission/delete-referenced-by-two-clusters/request.json",
    import.meta.url,
  ),
);

function app(options: Partial<Parameters<typeof createApp>[0]> = {}) {
  return createApp({
    bodyLimitBytes: 16 * MIB,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    clock: () => TEST_EPOCH,
    webhookBodyLimitBytes: 7 * MIB,
    ...options,
  }).app;
}

function post(
  a: ReturnType<typeof app>,
  body: string | Uint8Array,
  route = "/webhooks/validate/providerconfig",
) {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return a.request(route, {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": String(bytes.length) },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
}

/** A review whose object is padded with `n` empty objects: the shape that costs the heap most per byte. */
function paddedReview(n: number): string {
  const r = JSON.parse(review);
  r.request.oldObject.metadata.annotations = { pad: "" };
  const text = JSON.stringify(r);
  return text.replace('"pad":""', `"pad":[${"{},".repeat(n - 1)}{}]`);
}

Deno.test("the webhook listener's own limit: an 8 MiB review is refused unread", async () => {
  const res = await post(app(), paddedReview((8 * MIB) / 3));
  assert.equal(res.status, 413);
  assert.deepEqual(await res.json(), { error: `request body exceeds the limit of ${7 * MIB} bytes` });
  // The hooks keep theirs.
  assert.equal((await post(app(), paddedReview((8 * MIB) / 3), "/hooks/team/sync")).status, 400);
});

Deno.test("a review's parse is charged to the heap budget before it happens", async (t) => {
  const heapLimit = () => 256 * MIB;
  await t.step(
    "4 MiB of empty objects (about 90 MiB to parse) in a budget of 64 MiB: refused before its parse",
    async () => {
      const budget = createHeapBudget({ share: 0.25, heapLimit, heapUsed: () => 0 });
      const body = paddedReview((4 * MIB) / 3);
      assert.ok(jsonHeapEstimate(new TextEncoder().encode(body), Infinity) > 64 * MIB);
      const res = await post(app({ heapBudget: budget }), body);
      assert.equal(res.status, 413);
      assert.match((await res.json()).error, /could need more than 64\.0 MiB of heap to parse/);
      assert.equal(budget.charged, 0);
    },
  );
  await t.step("the same review fits a budget that can hold it, and gives its charge back", async () => {
    const budget = createHeapBudget({ share: 1, heapLimit: () => 1024 * MIB, heapUsed: () => 0 });
    const res = await post(app({ heapBudget: budget }), paddedReview((4 * MIB) / 3));
    assert.equal(res.status, 200);
    assert.equal(budget.charged, 0);
  });
  await t.step(
    "while the heap is held by others, a review that could fit later is told to retry (503)",
    async () => {
      let used = 0;
      const budget = createHeapBudget({ share: 1, heapLimit: () => 64 * MIB, heapUsed: () => used });
      used = 63 * MIB;
      const res = await post(app({ heapBudget: budget }), paddedReview(100_000));
      assert.equal(res.status, 503);
      assert.equal(res.headers.get("retry-after"), "2");
      used = 0;
      assert.equal((await post(app({ heapBudget: budget }), paddedReview(100_000))).status, 200);
    },
  );
  await t.step("an ordinary review is charged without a scan, and answered", async () => {
    const budget = createHeapBudget({ share: 0.75 });
    const res = await post(app({ heapBudget: budget }), review);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).response.allowed, true);
    assert.equal(budget.charged, 0);
  });
});

Deno.test("the webhook door: reviews decided at once, and large ones in a lane of their own", async (t) => {
  await t.step(
    "past the count: a place is held while a review is decided, never while its body trickles",
    async () => {
      const { kube, asked, answer } = heldKube();
      const a = app({ webhookConcurrency: 1, webhookQueueBytes: 64 * MIB, kube });
      // A body that never ends takes no place: a whole review is decided meanwhile.
      let hold!: ReadableStreamDefaultController<Uint8Array>;
      const trickling = a.request("/webhooks/validate/providerconfig", {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": "100" },
        body: new ReadableStream<Uint8Array>({
          start: (c) => void (hold = c, c.enqueue(new TextEncoder().encode("{"))),
        }),
      });
      await new Promise((r) => setTimeout(r, 10));
      assert.equal((await post(a, review)).status, 200, "a whole review is decided while a body trickles");
      // A review waiting on the API holds the one place; the next is refused at the door.
      const deciding = post(a, deleteReview);
      while (asked() === 0) await new Promise((r) => setTimeout(r, 1));
      const second = await post(a, review);
      assert.equal(second.status, 429);
      assert.equal(second.headers.get("retry-after"), "2");
      assert.match((await second.json()).error, /^busy: 1 admission reviews in progress/);
      answer();
      await (await deciding).body?.cancel();
      assert.equal((await post(a, review)).status, 200, "the place is given back");
      hold.close();
      await (await trickling).body?.cancel();
    },
  );
  await t.step("large reviews have a lane of their own: they never take the small ones' places", async () => {
    const a = app({ webhookConcurrency: 4, webhookQueueBytes: 64 * MIB });
    let hold!: ReadableStreamDefaultController<Uint8Array>;
    const first = a.request("/webhooks/validate/providerconfig", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(2 * MIB) },
      body: new ReadableStream<Uint8Array>({ start: (c) => void (hold = c) }),
    });
    await new Promise((r) => setTimeout(r, 10));
    const large = await post(a, paddedReview(400_000));
    assert.equal(large.status, 429);
    assert.match((await large.json()).error, /^busy: 1 large admission reviews in progress/);
    assert.equal((await post(a, review)).status, 200, "a small review still gets in");
    hold.close();
    await (await first).body?.cancel();
  });
  await t.step("past the bytes, unless it would be the only one", async () => {
    const a = app({ webhookConcurrency: 64, webhookQueueBytes: 1024 });
    assert.equal((await post(a, review)).status, 200, "alone, any size within the limit is let in");
  });
});

Deno.test("a body that trickles in is cut at its time, and its place at the door given back", async () => {
  const a = app({
    webhookConcurrency: 1,
    webhookQueueBytes: 64 * MIB,
    bodyReadSeconds: { hooks: 1, webhooks: 0.2 },
  });
  const slow = new ReadableStream<Uint8Array>({
    start: (c) => void c.enqueue(new TextEncoder().encode("{")),
  });
  const res = await a.request("/webhooks/validate/providerconfig", {
    method: "POST",
    headers: { "content-type": "application/json", "content-length": "100" },
    body: slow,
  });
  assert.equal(res.status, 408);
  assert.deepEqual(await res.json(), { error: "the request body did not arrive within 0.2s" });
  assert.equal((await post(a, review)).status, 200, "the place is given back");
});

Deno.test("large reviews take at most their share of the main thread's time", async (t) => {
  const large = paddedReview(400_000);
  await t.step("one that took 15 ms closes the lane for 1.5 s; small reviews pass meanwhile", async () => {
    let now = 0;
    const a = app({ webhookConcurrency: 64, webhookQueueBytes: 64 * MIB, webhookClockMs: () => (now += 15) });
    assert.equal((await post(a, large)).status, 200);
    const next = await post(a, large);
    assert.equal(next.status, 429);
    assert.equal(next.headers.get("retry-after"), "2");
    assert.deepEqual(await next.json(), {
      error:
        "busy: large admission reviews (over 1048576 bytes, or 12 MiB to parse) may take 1% of the main thread's " +
        "time and the last " +
        "took 15 ms; retry in 2s",
    });
    assert.equal((await post(a, review)).status, 200, "a small review is not held");
    now = 1600;
    assert.equal((await post(a, large)).status, 200, "past its share, the next is let in");
  });
  await t.step(
    "a review's time is booked at most 250 ms: one that waited on a slow API closes it 25 s",
    async () => {
      let now = 0;
      const a = app({
        webhookConcurrency: 64,
        webhookQueueBytes: 64 * MIB,
        webhookClockMs: () => (now += 10_000),
      });
      assert.equal((await post(a, large)).status, 200);
      const next = await post(a, large);
      assert.equal(next.status, 429);
      assert.equal(next.headers.get("retry-after"), "5");
      assert.match((await next.json()).error, /the last took 250 ms; retry in 5s$/);
    },
  );
  await t.step("a body that trickled in and was cut books no time", async () => {
    // The real clock: the 0.2 s it trickled, were it booked, would close the lane for 20 s.
    const a = app({
      webhookConcurrency: 64,
      webhookQueueBytes: 64 * MIB,
      bodyReadSeconds: { hooks: 1, webhooks: 0.2 },
    });
    const res = await a.request("/webhooks/validate/providerconfig", {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": String(MIB) },
      body: new ReadableStream<Uint8Array>({ start: (c) => void c.enqueue(new TextEncoder().encode("{")) }),
    });
    assert.equal(res.status, 408);
    assert.equal((await post(a, large)).status, 200);
  });
  await t.step("the share is a setting", async () => {
    let now = 0;
    const a = app({
      webhookConcurrency: 64,
      webhookQueueBytes: 64 * MIB,
      webhookClockMs: () => (now += 15),
      webhookLargeShare: 1,
    });
    for (let i = 0; i < 3; i++) assert.equal((await post(a, large)).status, 200);
  });
});
