import assert from "node:assert/strict";
import { coalesce } from "../../lib/reporter/mod.ts";

Deno.test("coalesce: a burst of requests is one run; a request during a run gets one more, later", async (t) => {
  await t.step("1,000 requests at once: one run", async () => {
    let runs = 0;
    const c = coalesce(() => Promise.resolve(void runs++), 1000);
    for (let i = 0; i < 1000; i++) c.request();
    await c.idle();
    assert.equal(runs, 1);
  });

  await t.step(
    "requests while a run is in progress: exactly one more, at least the interval later",
    async () => {
      let clock = 0;
      const starts: number[] = [];
      const c = coalesce(
        () => {
          starts.push(clock);
          // Events arrive while the task runs (the first run only).
          if (starts.length === 1) { for (let i = 0; i < 3; i++) c.request(); }
          return Promise.resolve();
        },
        1000,
        {
          now: () => clock,
          sleep: (ms) => {
            clock += ms;
            return Promise.resolve();
          },
        },
      );
      c.request();
      await c.idle();
      assert.deepEqual(starts, [0, 1000]);
      // Nothing asked since: nothing runs; a later request runs again.
      c.request();
      await c.idle();
      assert.equal(starts.length, 3);
    },
  );

  await t.step("a failed run is reported and does not stop later ones", async () => {
    const errors: unknown[] = [];
    let runs = 0;
    const c = coalesce(() => (++runs === 1 ? Promise.reject(new Error("boom")) : Promise.resolve()), 0, {
      onError: (e) => errors.push(e),
    });
    c.request();
    await c.idle();
    c.request();
    await c.idle();
    assert.equal(runs, 2);
    assert.equal(errors.length, 1);
  });
});

Deno.test("coalesce with real timers: runs at least the interval apart, and one starts after the last request", async () => {
  const interval = 40;
  const starts: number[] = [];
  const c = coalesce(() => Promise.resolve(void starts.push(performance.now())), interval);
  const begin = performance.now();
  let lastRequest = 0;
  while (performance.now() - begin < 400) {
    lastRequest = performance.now();
    c.request();
    await new Promise((r) => setTimeout(r, 3));
  }
  await c.idle();
  const elapsed = performance.now() - begin;
  for (let i = 1; i < starts.length; i++) {
    assert.ok(starts[i]! - starts[i - 1]! >= interval - 1, `runs ${starts[i]! - starts[i - 1]!} ms apart`);
  }
  assert.ok(starts.length <= Math.ceil(elapsed / interval) + 1, `${starts.length} runs in ${elapsed} ms`);
  assert.ok(starts.at(-1)! >= lastRequest, "the last request is followed by a run");
});
