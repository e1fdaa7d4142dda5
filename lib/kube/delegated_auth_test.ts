import assert from "node:assert/strict";
import type { KubeClient } from "./client.ts";
import { createDelegatedAuth, DELEGATED_AUTH, verdictOf } from "./delegated_auth.ts";

/** A fake API server: tokens `good-*` are authenticated as `user-*`; `reader-*` users may get any path. */
function fakeKube(options: { gate?: Promise<void>; fail?: boolean } = {}) {
  const calls: string[] = [];
  const kube = {
    write: async (_m: string, path: string, body: { spec: Record<string, unknown> }) => {
      calls.push(path.split("/").at(-1)!);
      await options.gate;
      if (options.fail) throw new Error("503 Service Unavailable");
      if (path.endsWith("tokenreviews")) {
        const token = body.spec.token as string;
        return token.startsWith("good-") || token.startsWith("reader-")
          ? {
            status: {
              authenticated: true,
              user: { username: `user-${token}`, groups: ["system:authenticated"] },
            },
          }
          : { status: { authenticated: false } };
      }
      return { status: { allowed: (body.spec.user as string).startsWith("user-reader-") } };
    },
  } as unknown as KubeClient;
  return { kube, calls };
}

Deno.test("delegated authentication of readers", async (t) => {
  await t.step("no token, or not a bearer token, or too long: 401 and no review", async () => {
    const { kube, calls } = fakeKube();
    const auth = createDelegatedAuth({ kube });
    assert.deepEqual(await auth.check(undefined, "/metrics"), { status: 401, reason: "no bearer token" });
    assert.deepEqual(await auth.check("Basic eA==", "/metrics"), {
      status: 401,
      reason: "the Authorization header is not a bearer token",
    });
    assert.deepEqual(await auth.check(`Bearer ${"x".repeat(DELEGATED_AUTH.headerMaxBytes)}`, "/metrics"), {
      status: 401,
      reason: "the Authorization header is too long",
    });
    assert.deepEqual(calls, []);
  });
  await t.step(
    "a token the API server does not know: 401; one whose user may not get the path: 403",
    async () => {
      const { kube } = fakeKube();
      const auth = createDelegatedAuth({ kube });
      assert.deepEqual(await auth.check("Bearer forged", "/metrics"), {
        status: 401,
        reason: "the token is not authenticated",
      });
      assert.deepEqual(await auth.check("Bearer good-1", "/metrics"), {
        status: 403,
        reason: 'user "user-good-1" may not get /metrics',
      });
    },
  );
  await t.step("a reader's token: 200, then from the cache until it expires", async () => {
    const { kube, calls } = fakeKube();
    let now = 0;
    const auth = createDelegatedAuth({ kube, clock: () => now });
    assert.deepEqual(await auth.check("Bearer reader-1", "/metrics"), { status: 200, user: "user-reader-1" });
    assert.deepEqual(calls, ["tokenreviews", "subjectaccessreviews"]);
    now += (DELEGATED_AUTH.allowSeconds - 1) * 1000;
    assert.equal((await auth.check("Bearer reader-1", "/metrics")).status, 200);
    assert.equal(calls.length, 2, "answered from the cache");
    assert.equal((await auth.check("Bearer reader-1", "/tenants")).status, 200);
    assert.equal(calls.length, 4, "another path is another question");
    now += 2000;
    await auth.check("Bearer reader-1", "/metrics");
    assert.equal(calls.length, 6, "asked again once expired");
  });
  await t.step("the API server down: 503, and not remembered", async () => {
    const { kube, calls } = fakeKube({ fail: true });
    const auth = createDelegatedAuth({ kube });
    assert.equal((await auth.check("Bearer reader-1", "/metrics")).status, 503);
    assert.equal((await auth.check("Bearer reader-1", "/metrics")).status, 503);
    assert.equal(calls.length, 2);
  });
  await t.step(
    "a stranger's flood of tokens: a few reviews at once, the rest 429 without asking",
    async () => {
      let open!: () => void;
      const gate = new Promise<void>((r) => (open = r));
      const { kube, calls } = fakeKube({ gate });
      const auth = createDelegatedAuth({ kube });
      // The same token asked twice at once shares one review.
      const first = auth.check("Bearer forged-shared", "/metrics");
      while (calls.length < 1) await new Promise((r) => setTimeout(r, 0));
      const again = auth.check("Bearer forged-shared", "/metrics");
      let settled = 0;
      const answers = Array.from(
        { length: 50 },
        (_, i) => auth.check(`Bearer forged-${i}`, "/metrics").finally(() => settled++),
      );
      // Those past the bound are answered without waiting for the API server.
      while (settled < 50 - (DELEGATED_AUTH.maxInFlight - 1)) await new Promise((r) => setTimeout(r, 1));
      assert.equal(calls.length, DELEGATED_AUTH.maxInFlight, "no more reviews than the bound at once");
      open();
      const statuses = (await Promise.all(answers)).map((v) => v.status);
      assert.deepEqual([(await first).status, (await again).status], [401, 401]);
      assert.equal(statuses.filter((s) => s === 401).length, DELEGATED_AUTH.maxInFlight - 1);
      assert.equal(statuses.filter((s) => s === 429).length, 50 - (DELEGATED_AUTH.maxInFlight - 1));
    },
  );
  await t.step("the cache keeps at most maxEntries verdicts, the oldest going first", async () => {
    const { kube, calls } = fakeKube();
    const auth = createDelegatedAuth({ kube });
    for (let i = 0; i <= DELEGATED_AUTH.maxEntries; i++) await auth.check(`Bearer reader-${i}`, "/metrics");
    const before = calls.length;
    await auth.check(`Bearer reader-${DELEGATED_AUTH.maxEntries}`, "/metrics");
    assert.equal(calls.length, before, "the newest is kept");
    await auth.check("Bearer reader-0", "/metrics");
    assert.equal(calls.length, before + 2, "the oldest was dropped");
  });
});

Deno.test("verdictOf reads the answers, and an unreadable one refuses", () => {
  assert.deepEqual(
    verdictOf(
      { status: { authenticated: true, user: { username: "p" } } },
      { status: { allowed: true } },
      "/m",
    ),
    {
      status: 200,
      user: "p",
    },
  );
  assert.equal(verdictOf({ status: { authenticated: "yes" } }, {}, "/m").status, 401);
  assert.equal(
    verdictOf({ status: { authenticated: true, user: { username: "p" } } }, { status: 1 }, "/m").status,
    503,
  );
});

/** A fake API server whose answers wait while held; `calls` counts what was asked, held or not. */
function heldKube() {
  const base = fakeKube();
  const calls: string[] = [];
  let release: () => void = () => {};
  let gate: Promise<void> | undefined;
  const kube = {
    write: async (m: string, path: string, body: unknown) => {
      calls.push(path.split("/").at(-1)!);
      await gate;
      return await (base.kube.write as (m: string, p: string, b: unknown) => Promise<unknown>)(m, path, body);
    },
  } as unknown as KubeClient;
  return {
    kube,
    calls,
    hold: () => void (gate = new Promise<void>((r) => (release = r))),
    open: () => {
      release();
      gate = undefined;
    },
  };
}

const tick = () => new Promise((r) => setTimeout(r, 1));

Deno.test("a flood of made-up tokens does not starve readers (issue #55, F5)", async (t) => {
  await t.step("one address's flood takes two places; another address's new token is reviewed", async () => {
    const api = heldKube();
    const auth = createDelegatedAuth({ kube: api.kube });
    api.hold();
    const flood = Array.from(
      { length: 50 },
      (_, i) => auth.check(`Bearer forged-${i}`, "/metrics", "10.0.0.9"),
    );
    const reader = auth.check("Bearer reader-new", "/metrics", "10.0.0.7");
    while (api.calls.length < DELEGATED_AUTH.maxInFlightPerSource + 1) await tick();
    await tick();
    assert.equal(
      api.calls.length,
      DELEGATED_AUTH.maxInFlightPerSource + 1,
      "two of the flood, and the reader",
    );
    api.open();
    assert.equal((await reader).status, 200);
    const statuses = (await Promise.all(flood)).map((v) => v.status);
    assert.equal(statuses.filter((s) => s === 429).length, 50 - DELEGATED_AUTH.maxInFlightPerSource);
  });
  await t.step("a reader allowed before is reviewed again in places no stranger can take", async () => {
    const api = heldKube();
    let now = 0;
    const auth = createDelegatedAuth({ kube: api.kube, clock: () => now });
    assert.equal((await auth.check("Bearer reader-prometheus", "/metrics", "10.0.1.1")).status, 200);
    now += (DELEGATED_AUTH.allowSeconds + 1) * 1000; // its verdict has run out
    api.hold();
    // Strangers from as many addresses as it takes fill every place unknown tokens may have.
    const flood = Array.from(
      { length: 3 * DELEGATED_AUTH.maxInFlight },
      (_, i) => auth.check(`Bearer forged-${i}`, "/metrics", `10.0.2.${i}`),
    );
    await tick();
    const newcomer = await auth.check("Bearer reader-newcomer", "/metrics", "10.0.3.1");
    assert.equal(newcomer.status, 429, "a token never seen waits for the strangers like them");
    const known = auth.check("Bearer reader-prometheus", "/metrics", "10.0.1.1");
    api.open();
    assert.equal((await known).status, 200);
    await Promise.all(flood);
  });
  await t.step("known readers past their own places take ordinary ones", async () => {
    const api = heldKube();
    let now = 0;
    const auth = createDelegatedAuth({ kube: api.kube, clock: () => now });
    const readers = DELEGATED_AUTH.knownInFlight + 2;
    for (let i = 0; i < readers; i++) {
      assert.equal((await auth.check(`Bearer reader-k${i}`, "/metrics")).status, 200);
    }
    now += (DELEGATED_AUTH.allowSeconds + 1) * 1000;
    api.hold();
    const again = Array.from({ length: readers }, (_, i) => auth.check(`Bearer reader-k${i}`, "/metrics"));
    await tick();
    assert.equal(api.calls.filter((c) => c === "tokenreviews").length, 2 * readers, "each reviewed again");
    api.open();
    assert.deepEqual((await Promise.all(again)).map((v) => v.status), Array(readers).fill(200));
  });
  await t.step(
    "four loops of random tokens from one address: 10 of 10 new readers' scrapes answered",
    async () => {
      const { kube } = fakeKube();
      const slow = {
        write: (m: string, path: string, body: unknown) =>
          new Promise((r) => setTimeout(r, 20)).then(() =>
            (kube.write as (m: string, p: string, b: unknown) => Promise<unknown>)(m, path, body)
          ),
      } as unknown as KubeClient;
      const auth = createDelegatedAuth({ kube: slow });
      let stop = false;
      const loops = Array.from({ length: 4 }, async () => {
        while (!stop) await auth.check(`Bearer forged-${crypto.randomUUID()}`, "/metrics", "10.0.0.66");
      });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) {
        statuses.push((await auth.check(`Bearer reader-scrape-${i}`, "/metrics", "10.0.0.5")).status);
      }
      stop = true;
      await Promise.all(loops);
      assert.deepEqual(statuses, Array(10).fill(200));
    },
  );
});
