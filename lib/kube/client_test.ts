import assert from "node:assert/strict";
import { createHeapBudget } from "../foreign/mod.ts";
import { createKubeClient, KubeApiError, loadKubeConfig } from "./mod.ts";

type Call = { url: string; auth: string | null };

/** A fetch that answers from a script, one response per call, and records what it was asked. */
function scripted(responses: (() => Response | Promise<Response>)[]) {
  const calls: Call[] = [];
  const fetch = ((input: string, init?: RequestInit) => {
    calls.push({ url: input, auth: new Headers(init?.headers).get("authorization") });
    const next = responses.shift();
    if (!next) throw new Error("no more scripted responses");
    return Promise.resolve(next());
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => () =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const noSleep = { sleep: () => Promise.resolve(), random: () => 0.5 };

Deno.test("kube client", async (t) => {
  await t.step("retries 429 and 5xx, then returns the object", async () => {
    const s = scripted([json(503, {}), json(429, {}, { "retry-after": "1" }), json(200, { kind: "Team" })]);
    const waits: number[] = [];
    const kube = createKubeClient({ server: "https://api:6443/" }, {
      fetch: s.fetch,
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      random: () => 0.5,
    });
    assert.deepEqual(await kube.get("/apis/x/teams/a"), { kind: "Team" });
    assert.equal(s.calls.length, 3);
    assert.equal(s.calls[0]!.url, "https://api:6443/apis/x/teams/a");
    assert.deepEqual(waits, [100, 1000], "backoff, then the server's Retry-After");
  });
  await t.step("a 404 is undefined, not an error", async () => {
    const s = scripted([json(404, { reason: "NotFound" })]);
    assert.equal(await createKubeClient({ server: "https://api" }, { fetch: s.fetch }).get("/x"), undefined);
  });
  await t.step("a 403 is a typed error at once, with the API's reason and message", async () => {
    const s = scripted([json(403, { reason: "Forbidden", message: "cannot list tenantclusters" })]);
    const kube = createKubeClient({ server: "https://api" }, { fetch: s.fetch, ...noSleep });
    const err = await kube.list("/apis/x/tenantclusters").catch((e) => e);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.status, 403);
    assert.equal(err.reason, "Forbidden");
    assert.match(err.message, /cannot list tenantclusters/);
    assert.equal(s.calls.length, 1, "not retried");
  });
  await t.step("gives up after the retries with the last status", async () => {
    const s = scripted([json(500, {}), json(502, {}), json(503, { reason: "ServiceUnavailable" })]);
    const kube = createKubeClient({ server: "https://api" }, { fetch: s.fetch, ...noSleep });
    const err = await kube.get("/x").catch((e) => e as KubeApiError);
    assert.equal((err as KubeApiError).status, 503);
    assert.equal(s.calls.length, 3);
  });
  await t.step("a request that outlasts the timeout fails as Timeout", async () => {
    const fetch = ((_: string, init?: RequestInit) =>
      new Promise((_resolve, reject) =>
        init?.signal?.addEventListener("abort", () =>
          reject(init.signal!.reason))
      )) as unknown as typeof globalThis.fetch;
    const kube = createKubeClient({ server: "https://api" }, { fetch, timeoutMs: 20, retries: 0 });
    const err = await kube.get("/x").catch((e) => e);
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.reason, "Timeout");
  });
  await t.step("a body that outlasts the timeout fails as Timeout too, and is retried", async () => {
    // Headers at once, then a body that never ends unless the signal aborts it (a large LIST under load).
    const stalled = (_: string, init?: RequestInit) =>
      Promise.resolve(
        new Response(
          new ReadableStream({
            start(controller) {
              controller.enqueue(new TextEncoder().encode('{"items":['));
              init?.signal?.addEventListener("abort", () => controller.error(init.signal!.reason));
            },
          }),
          { status: 200 },
        ),
      );
    let calls = 0;
    const fetch = ((
      url: string,
      init?: RequestInit,
    ) => (calls++, stalled(url, init))) as unknown as typeof globalThis.fetch;
    const kube = createKubeClient({ server: "https://api" }, {
      fetch,
      timeoutMs: 20,
      retries: 1,
      ...noSleep,
    });
    const err = await kube.list("/x").catch((e) => e);
    assert.ok(err instanceof KubeApiError, `a typed error, not ${err}`);
    assert.equal(err.reason, "Timeout");
    assert.equal(calls, 2, "retried once");
  });
  await t.step("lists pass the label selector and return the items, page by page", async () => {
    const s = scripted([
      json(200, { items: [{ a: 1 }], metadata: { continue: "next" } }),
      json(200, { items: [{ a: 2 }], metadata: {} }),
    ]);
    const kube = createKubeClient({ server: "https://api" }, { fetch: s.fetch });
    assert.deepEqual(await kube.list("/l", { labelSelector: "a in (b,c)" }), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(s.calls.map((c) => c.url), [
      "https://api/l?labelSelector=a%20in%20(b%2Cc)&limit=500",
      "https://api/l?labelSelector=a%20in%20(b%2Cc)&limit=500&continue=next",
    ]);
  });
  await t.step("a page too large or too costly is asked again with half as many objects", async () => {
    const big = JSON.stringify({ items: [{ v: "x".repeat(600) }, { v: "y".repeat(600) }] });
    const s = scripted([
      () => new Response(big, { status: 200 }),
      json(200, { items: [{ v: "x" }], metadata: { continue: "c" } }),
      json(200, { items: [{ v: "y" }], metadata: {} }),
    ]);
    const kube = createKubeClient({ server: "https://api" }, {
      fetch: s.fetch,
      maxResponseBytes: 1024,
      pageSize: 2,
    });
    assert.deepEqual(await kube.list("/l"), [{ v: "x" }, { v: "y" }]);
    assert.deepEqual(s.calls.map((c) => c.url), [
      "https://api/l?limit=2",
      "https://api/l?limit=1",
      "https://api/l?limit=1&continue=c",
    ]);
  });
  await t.step("an answer is parsed only as far as the heap budget holds", async () => {
    const hostile = `{"items":[${"{},".repeat(100_000)}{}]}`;
    const s = scripted([() => new Response(hostile, { status: 200 })]);
    const budget = createHeapBudget({
      share: 1,
      maxInFlight: 64 * 1024,
      heapLimit: () => 1 << 30,
      heapUsed: () => 0,
    });
    const kube = createKubeClient({ server: "https://api" }, { fetch: s.fetch, budget });
    const err = await kube.get("/x").catch((e) => e);
    assert.ok(err instanceof KubeApiError && err.reason === "TooCostly", String(err));
    assert.equal(budget.charged, 0);
  });
  await t.step("the token is read on every request (a projected token rotates)", async () => {
    let token = "one";
    const s = scripted([json(200, {}), json(200, {})]);
    const kube = createKubeClient({ server: "https://api", token: () => token }, { fetch: s.fetch });
    await kube.get("/x");
    token = "two";
    await kube.get("/x");
    assert.deepEqual(s.calls.map((c) => c.auth), ["Bearer one", "Bearer two"]);
  });
});

Deno.test("where the API is", async (t) => {
  const files: Record<string, string> = {
    "/home/k/config": `
apiVersion: v1
kind: Config
current-context: dev
contexts:
  - { name: other, context: { cluster: c2, user: u2 } }
  - { name: dev, context: { cluster: c1, user: u1 } }
clusters:
  - { name: c1, cluster: { server: "https://127.0.0.1:6443" } }
  - { name: c2, cluster: { server: "https://elsewhere" } }
users:
  - { name: u1, user: { token: abc } }
  - { name: u2, user: { token: nope } }
`,
  };
  const read = (path: string) => {
    const text = files[path];
    if (text === undefined) throw new Deno.errors.NotFound(path);
    return text;
  };
  await t.step("the kubeconfig's current context", () => {
    const c = loadKubeConfig({ KUBECONFIG: "/home/k/config" }, read)!;
    assert.equal(c.server, "https://127.0.0.1:6443");
    assert.equal(c.token?.(), "abc");
  });
  await t.step("neither in a pod nor with a kubeconfig: none", () => {
    assert.equal(loadKubeConfig({}, read), undefined);
  });
});
