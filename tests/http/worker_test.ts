/**
 * Hook work in real workers gives exactly what the main thread gives: every golden fixture through an app whose
 * hook routes are offloaded to a pool of two `worker.ts` workers, byte for byte. And a full pool is answered
 * 429 with `Retry-After` while probes stay ready to answer.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { createWorkerPool, type Offload, spawnIsolate, type WorkerLike } from "../../lib/isolation/mod.ts";
import { discoverGoldenCases, TEST_EPOCH } from "../../lib/testing/mod.ts";
import type { WorkerInit } from "../../worker.ts";

const root = new URL("../fixtures", import.meta.url).pathname;
const init: WorkerInit = { bodyLimitBytes: 16 << 20, clockOverride: true, hookConfig: DEFAULT_HOOK_CONFIG };

Deno.test("every golden fixture answered the same by the worker pool, with the same signals", async () => {
  const cases = discoverGoldenCases(root).filter((c) => c.route.startsWith("/hooks/"));
  assert.ok(cases.length > 50);
  const pool = createWorkerPool({
    workers: 2,
    queueLimit: cases.length, // all at once: the queue must hold them
    init,
    spawn: () => spawnIsolate(new URL("../../worker.ts", import.meta.url)),
  });
  try {
    await pool.ready;
    const offloaded: string[] = [];
    const local: string[] = [];
    const { app, metrics } = createApp({
      ...init,
      routes: HOOK_ROUTES,
      clock: () => TEST_EPOCH,
      offload: pool,
      onSignals: (s) => offloaded.push(...s.map((x) => JSON.stringify(x))),
    });
    const here = createApp({
      ...init,
      routes: HOOK_ROUTES,
      clock: () => TEST_EPOCH,
      onSignals: (s) => local.push(...s.map((x) => JSON.stringify(x))),
    });
    const answers = await Promise.all(cases.map(async (c) => {
      const headers: Record<string, string> = { "content-type": "application/json" };
      try {
        headers["X-Butler-Now"] = (await Deno.readTextFile(`${c.dir}/now`)).trim();
      } catch { /* no now file: the app's clock */ }
      const body = await Deno.readTextFile(`${c.dir}/request.json`);
      const res = await app.request(c.route, { method: "POST", headers, body });
      await here.app.request(c.route, { method: "POST", headers, body });
      return { c, status: res.status, body: await res.json() };
    }));
    assert.ok(offloaded.some((s) => s.includes('"signal":"event"')), "capacity Events among the signals");
    assert.deepEqual(offloaded.sort(), local.sort());
    assert.match(
      await metrics.registry.metrics(),
      /butler_networkpool_available_ips\{namespace="butler-system"/,
    );
    for (const { c, status, body } of answers) {
      assert.equal(status, 200, `${c.kind}/${c.hook}/${c.name}`);
      const expected = JSON.parse(await Deno.readTextFile(`${c.dir}/response.json`));
      assert.deepStrictEqual(body, expected, `${c.kind}/${c.hook}/${c.name}`);
    }
  } finally {
    pool.terminate();
  }
});

/**
 * A one-worker pool that holds every request it is given until released (`held`, in arrival order), and counts
 * what was submitted.
 */
function heldOffload(
  queueLimit: number,
): { offload: Offload; held: (() => void)[]; submitted: () => number } {
  const held: (() => void)[] = [];
  let submitted = 0;
  const offload: Offload = {
    submit: () => {
      submitted++;
      return new Promise((resolve) => held.push(() => resolve({ status: 200, body: "{}" })));
    },
    stats: () => ({
      workers: 1,
      busy: Math.min(1, held.length),
      queued: Math.max(0, held.length - 1),
      queueLimit,
    }),
  };
  return { offload, held, submitted: () => submitted };
}

Deno.test("a full pool: 429 with Retry-After, never queued; readyz 503; healthz 200", async () => {
  const { offload, held, submitted } = heldOffload(1);
  const { app } = createApp({ ...init, routes: HOOK_ROUTES, offload, retryAfterSeconds: 3 });
  const post = () =>
    app.request("/hooks/team/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
  const running = [post(), post()]; // one running, one queued: the pool is full
  while (submitted() < 2) await new Promise((r) => setTimeout(r, 1));
  assert.equal((await app.request("/readyz")).status, 503);
  assert.equal((await app.request("/healthz")).status, 200);
  const res = await post();
  assert.equal(res.status, 429);
  assert.equal(res.headers.get("retry-after"), "3");
  assert.match((await res.json()).error, /^busy: 1 hook requests running and 1 queued/);
  assert.equal(submitted(), 2, "refused at the door: never queued");
  for (const release of held) release();
  for (const r of await Promise.all(running)) assert.equal(r.status, 200);
  assert.equal((await app.request("/readyz")).status, 200);
  const unknown = await app.request("/hooks/nope/sync", { method: "POST", body: "{}" });
  assert.equal(unknown.status, 404, "unknown routes are not offloaded");
});

Deno.test("the door counts large bodies' bytes as they arrive; small calls are never held by them", async () => {
  const { offload, held } = heldOffload(32);
  const KIB = 1024;
  const { app } = createApp({ ...init, routes: HOOK_ROUTES, offload, queueBytes: 200 * KIB });
  const post = (bytes: number, chunked = false) => {
    const text = " ".repeat(bytes - 2) + "{}";
    return app.request("/hooks/team/sync", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        ...(chunked ? {} : { "content-length": String(bytes) }),
      },
      body: chunked
        ? new ReadableStream<Uint8Array>({
          start(c) {
            const bytes = new TextEncoder().encode(text);
            for (let i = 0; i < bytes.length; i += 16 * KIB) c.enqueue(bytes.slice(i, i + 16 * KIB));
            c.close();
          },
        })
        : text,
    });
  };
  const waitHeld = async (n: number) => {
    while (held.length < n) await new Promise((r) => setTimeout(r, 1));
  };
  // Alone, a body over the budget still runs: the budget never starves a request that has the service to itself.
  const alone = post(300 * KIB);
  await waitHeld(1);
  const over = await post(100 * KIB);
  assert.equal(over.status, 429, "nothing large more while the budget is spent");
  assert.match((await over.json()).error, /^busy: 1 hook requests running and 0 queued/);
  assert.equal((await post(100 * KIB, true)).status, 429, "a chunked one is counted as it arrives");
  const small = post(10 * KIB);
  await waitHeld(2);
  held.splice(0).forEach((release) => release());
  assert.deepEqual(
    [(await alone).status, (await small).status],
    [200, 200],
    "a small call is not held by them",
  );
  // Two of 90 KiB fit in 200 KiB at once, chunked or not; a third does not.
  const two = [post(90 * KIB), post(90 * KIB, true)];
  await waitHeld(2);
  assert.equal((await post(90 * KIB, true)).status, 429);
  held.splice(0).forEach((release) => release());
  for (const r of await Promise.all(two)) assert.equal(r.status, 200);
  // The budget is given back: the same call now gets in.
  const again = post(90 * KIB, true);
  await waitHeld(1);
  held.shift()!();
  assert.equal((await again).status, 200);
});

Deno.test("a worker that cannot be replaced makes healthz 503; deadline stops are counted", async () => {
  let unavailable = 0;
  const offload: Offload = {
    submit: () => Promise.resolve({ status: 503, body: "{}" }),
    stats: () => ({ workers: 1, busy: 0, queued: 0, queueLimit: 1, timedOut: 2, unavailable }),
  };
  const { app } = createApp({ ...init, routes: HOOK_ROUTES, offload });
  assert.equal((await app.request("/healthz")).status, 200);
  unavailable = 1;
  const res = await app.request("/healthz");
  assert.equal(res.status, 503);
  assert.match((await res.json()).reason, /1 hook worker\(s\) could not be replaced/);
  const metrics = await (await app.request("/metrics")).text();
  assert.match(metrics, /^butler_hook_deadline_exceeded_total 2$/m);
  assert.match(metrics, /^butler_hook_workers_unavailable 1$/m);
});

Deno.test("a real worker running a slow hook is stopped at its deadline and replaced", async () => {
  // A worker module whose hook spins for a second: the pool must stop it after 200 ms and serve the next.
  const slow = new URL("./slow_worker_fixture.ts", import.meta.url);
  const pool = createWorkerPool({
    workers: 1,
    queueLimit: 1,
    init: {},
    deadlineMs: 200,
    spawn: () => new Worker(slow, { type: "module" }) as unknown as WorkerLike,
  });
  try {
    await pool.ready;
    const body = (text: string) => new TextEncoder().encode(text).buffer as ArrayBuffer;
    // A 503, not the 200 the hook would have given had it been let finish.
    const reply = await pool.submit({ route: "/slow", body: body("spin"), headers: {}, now: "" });
    assert.ok(reply !== "busy" && reply.status === 503, JSON.stringify(reply));
    const fast = await pool.submit({ route: "/slow", body: body("quick"), headers: {}, now: "" });
    assert.ok(fast !== "busy" && fast.status === 200, JSON.stringify(fast));
    assert.equal(pool.stats().timedOut, 1);
  } finally {
    pool.terminate();
  }
});
