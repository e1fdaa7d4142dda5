import assert from "node:assert/strict";
import {
  createWorkerPool,
  type FromWorker,
  type OffloadRequest,
  type ToWorker,
  type WorkerLike,
} from "./pool.ts";

/** A fake worker: answers `run` when the test says so, or dies. */
class FakeWorker implements WorkerLike {
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  runs: Extract<ToWorker, { type: "run" }>[] = [];
  /** The poisoned parents it was told of: at init, then one by one. */
  poisoned: string[] = [];
  terminated = false;
  constructor(private readonly startFails = false) {}
  postMessage(message: ToWorker): void {
    queueMicrotask(() => {
      if (message.type === "init") {
        this.poisoned.push(...(message.poisoned ?? []).map(([key]) => key));
        if (this.startFails) this.die("cannot start");
        else this.onmessage?.({ data: { type: "ready" } } as MessageEvent<FromWorker>);
      } else if (message.type === "poison") this.poisoned.push(message.key);
      else this.runs.push(message);
    });
  }
  /** Says which parent the oldest run is about, as the worker does once it has read it. */
  started(key: string): void {
    this.onmessage?.({ data: { type: "started", id: this.runs[0]!.id, key } } as MessageEvent<FromWorker>);
  }
  answer(status = 200): void {
    const run = this.runs.shift()!;
    this.onmessage?.(
      {
        data: {
          type: "reply",
          id: run.id,
          reply: { status, body: new TextDecoder().decode(run.request.body) },
        },
      } as MessageEvent<FromWorker>,
    );
  }
  die(message: string): void {
    this.onerror?.(new ErrorEvent("error", { message, cancelable: true }));
  }
  terminate(): void {
    this.terminated = true;
  }
}

const req = (body: string): OffloadRequest => ({
  route: "/hooks/x/sync",
  body: new TextEncoder().encode(body).buffer as ArrayBuffer,
  headers: {},
  now: "2026-01-01T00:00:00Z",
});
const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("the worker pool", async (t) => {
  await t.step("runs one request per worker, queues up to the limit, then answers busy", async () => {
    const workers: FakeWorker[] = [];
    const pool = createWorkerPool({
      workers: 2,
      queueLimit: 1,
      init: {},
      spawn: () => (workers.push(new FakeWorker()), workers.at(-1)!),
    });
    await pool.ready;
    const a = pool.submit(req("a"));
    const b = pool.submit(req("b"));
    const c = pool.submit(req("c"));
    assert.equal(await pool.submit(req("d")), "busy");
    await tick();
    assert.deepEqual(pool.stats(), {
      workers: 2,
      busy: 2,
      queued: 1,
      queueLimit: 1,
      timedOut: 0,
      unavailable: 0,
      poisoned: 0,
    });
    workers[0]!.answer();
    assert.deepEqual(await a, { status: 200, body: "a" });
    await tick();
    assert.deepEqual(
      pool.stats(),
      { workers: 2, busy: 2, queued: 0, queueLimit: 1, timedOut: 0, unavailable: 0, poisoned: 0 },
      "the queued one started",
    );
    workers[1]!.answer();
    workers[0]!.answer();
    assert.equal((await b as { body: string }).body, "b");
    assert.equal((await c as { body: string }).body, "c");
  });
  await t.step("a worker that dies fails its request with a 500 and is replaced", async () => {
    const workers: FakeWorker[] = [];
    const crashes: string[] = [];
    const pool = createWorkerPool({
      workers: 1,
      queueLimit: 4,
      init: {},
      spawn: () => (workers.push(new FakeWorker()), workers.at(-1)!),
      onCrash: (m) => crashes.push(m),
    });
    await pool.ready;
    const a = pool.submit(req("a"));
    const b = pool.submit(req("b"));
    await tick();
    workers[0]!.die("out of memory");
    assert.equal((await a as { status: number }).status, 500);
    assert.deepEqual(crashes, ["out of memory"]);
    assert.ok(workers[0]!.terminated);
    await tick();
    await tick();
    workers[1]!.answer();
    assert.equal((await b as { body: string }).body, "b", "the next request runs on the new worker");
  });
  await t.step("a worker that cannot start rejects ready (no respawn loop)", async () => {
    let spawned = 0;
    const pool = createWorkerPool({
      workers: 2,
      queueLimit: 0,
      init: {},
      spawn: () => (spawned++, new FakeWorker(true)),
    });
    await assert.rejects(pool.ready, /a hook worker failed to start: cannot start/);
    await tick();
    assert.equal(spawned, 2);
  });
});

Deno.test("the worker pool stops a request at its deadline and replaces the worker", async (t) => {
  await t.step(
    "a hook that never answers: 503 at the deadline, the worker replaced, the next request served",
    async () => {
      const workers: FakeWorker[] = [];
      const pool = createWorkerPool({
        workers: 1,
        queueLimit: 1,
        init: {},
        deadlineMs: 30,
        spawn: () => (workers.push(new FakeWorker()), workers.at(-1)!),
      });
      await pool.ready;
      const slow = pool.submit(req("slow"));
      const reply = await slow;
      assert.ok(reply !== "busy");
      assert.equal(reply.status, 503);
      assert.match(JSON.parse(reply.body as string).error, /ran longer than 0\.03s and was stopped/);
      assert.match(reply.failure ?? "", /deadline/);
      assert.equal(workers.length, 2, "a new worker");
      assert.ok(workers[0]!.terminated, "the slow one terminated");
      assert.equal(pool.stats().timedOut, 1);
      await tick();
      const next = pool.submit(req("fast"));
      await tick();
      workers[1]!.answer();
      assert.equal(((await next) as { status: number }).status, 200);
      assert.equal(pool.stats().timedOut, 1, "an answer in time is no timeout");
      pool.terminate();
    },
  );
  await t.step("a replacement that cannot start leaves the slot unavailable, and takes no work", async () => {
    let spawned = 0;
    const pool = createWorkerPool({
      workers: 1,
      queueLimit: 1,
      init: {},
      deadlineMs: 20,
      // The first worker starts; its replacement cannot.
      spawn: () => new FakeWorker(spawned++ > 0),
    });
    await pool.ready;
    assert.equal((await pool.submit(req("slow")) as { status: number }).status, 503);
    await tick();
    await tick();
    assert.equal(pool.stats().unavailable, 1);
    assert.equal(spawned, 2, "no respawn loop");
    assert.equal(await pool.submit(req("next")), "busy");
    pool.terminate();
  });
});

Deno.test("the pool poisons a parent whose runs keep failing, and tells every worker", async (t) => {
  const setup = async () => {
    const workers: FakeWorker[] = [];
    let clock = 1_000;
    const pool = createWorkerPool({
      workers: 2,
      queueLimit: 4,
      init: {},
      clock: () => clock,
      spawn: () => (workers.push(new FakeWorker()), workers.at(-1)!),
    });
    await pool.ready;
    return { pool, workers, advance: (ms: number) => (clock += ms) };
  };
  /** Submits a run, names its parent, and lets `end` finish it; resolves to its reply. */
  const run = async (
    pool: Awaited<ReturnType<typeof setup>>["pool"],
    worker: () => FakeWorker,
    key: string,
    end: (w: FakeWorker) => void,
  ) => {
    const reply = pool.submit(req(key));
    await tick();
    const w = worker();
    w.started(key);
    end(w);
    return await reply;
  };
  await t.step("a worker that dies twice on one parent poisons it", async () => {
    const { pool, workers } = await setup();
    const busyOne = () => workers.find((w) => w.runs.length && !w.terminated)!;
    const first = await run(pool, busyOne, "k", (w) => w.die("out of memory: heap"));
    assert.ok(first !== "busy" && first.status === 500);
    assert.equal(pool.stats().poisoned, 0, "one failure is not enough");
    await tick();
    await run(pool, busyOne, "k", (w) => w.die("out of memory: heap"));
    await tick();
    assert.equal(pool.stats().poisoned, 1);
    const live = workers.filter((w) => !w.terminated);
    assert.equal(live.length, 2);
    for (const w of live) assert.deepEqual(w.poisoned, ["k"], "every live worker knows, at init or after");
  });
  await t.step("two 500s in a row poison; an answer in between clears the count", async () => {
    const { pool, workers } = await setup();
    const busyOne = () => workers.find((w) => w.runs.length)!;
    await run(pool, busyOne, "a", (w) => w.answer(500));
    await run(pool, busyOne, "a", (w) => w.answer(200));
    await run(pool, busyOne, "a", (w) => w.answer(500));
    assert.equal(pool.stats().poisoned, 0);
    await run(pool, busyOne, "a", (w) => w.answer(500));
    assert.equal(pool.stats().poisoned, 1);
  });
  await t.step("a poisoned parent is tried again after ten minutes", async () => {
    const { pool, workers, advance } = await setup();
    const busyOne = () => workers.find((w) => w.runs.length)!;
    await run(pool, busyOne, "b", (w) => w.answer(500));
    await run(pool, busyOne, "b", (w) => w.answer(500));
    assert.equal(pool.stats().poisoned, 1);
    advance(10 * 60 * 1000 + 1);
    assert.equal(pool.stats().poisoned, 0);
  });
});

Deno.test("with several workers, the first keeps to small requests", async () => {
  const workers: FakeWorker[] = [];
  const pool = createWorkerPool({
    workers: 2,
    queueLimit: 4,
    init: {},
    largeBytes: 10,
    spawn: () => (workers.push(new FakeWorker()), workers.at(-1)!),
  });
  await pool.ready;
  const large1 = pool.submit(req("a large request"));
  const large2 = pool.submit(req("another large one"));
  await tick();
  assert.equal(workers[0]!.runs.length, 0, "the first worker is not given a large request");
  assert.equal(workers[1]!.runs.length, 1);
  const small = pool.submit(req("small"));
  await tick();
  assert.equal(workers[0]!.runs.length, 1, "a small one passes the large one queued, on the first worker");
  workers[0]!.answer();
  assert.deepEqual(await small, { status: 200, body: "small" });
  workers[1]!.answer();
  await tick();
  workers[1]!.answer();
  assert.equal((await large1 as { body: string }).body, "a large request");
  assert.equal((await large2 as { body: string }).body, "another large one");
});
