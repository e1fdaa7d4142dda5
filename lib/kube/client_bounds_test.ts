/**
 * Issue #46, item 4: the client distrusts the server it talks to (a tenant's API server is whatever its kubeconfig
 * names). Against a real HTTP server on loopback: answers, error answers included, are read up to a cap and the
 * rest is never read; a redirect is refused, not followed (to plain http, another port, with a write's body);
 * a stream that does not answer with its headers in time fails as Timeout.
 */
import assert from "node:assert/strict";
import { createKubeClient, KubeApiError } from "./mod.ts";
import { classifyTenantError } from "../reporter/classify.ts";

/** A server on a free loopback port answering by path; `hits` counts what it was asked. */
function serve(handler: (req: Request) => Response | Promise<Response>) {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    hits.push(`${req.method} ${new URL(req.url).pathname}`);
    return handler(req);
  });
  return { url: `http://127.0.0.1:${server.addr.port}`, hits, stop: () => server.shutdown() };
}

/** A body of `mib` MiB that is produced as it is read, and says how much of it was. */
function endless(mib: number) {
  let sent = 0;
  const chunk = new TextEncoder().encode(`"${"x".repeat(64 * 1024 - 2)}"`);
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= mib * 1024 * 1024) return c.close();
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  return { body, sent: () => sent };
}

const error = (p: Promise<unknown>) => p.then(() => undefined, (e) => e as KubeApiError);

Deno.test("a server's answers are read up to a cap, errors included", async (t) => {
  const big = endless(150);
  const errorBody = endless(150);
  const s = serve((req) => {
    const path = new URL(req.url).pathname;
    if (path === "/ok") return new Response(big.body, { status: 200 });
    return new Response(errorBody.body, { status: 500 });
  });
  const kube = createKubeClient({ server: s.url }, { retries: 0, maxResponseBytes: 1024 * 1024 });
  try {
    await t.step("a success of 150 MB: TooLarge after about a megabyte", async () => {
      const err = await error(kube.get("/ok"));
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.reason, "TooLarge");
      assert.ok(big.sent() < 8 * 1024 * 1024, `${big.sent()} bytes were produced`);
      assert.equal(classifyTenantError(err, "").reason, "TooLarge");
    });
    await t.step("an error of 150 MB: its status, and at most 64 KiB of it read", async () => {
      const err = await error(kube.apply("/err", { kind: "X" }, "butler"));
      assert.ok(err instanceof KubeApiError);
      assert.equal(err.status, 500);
      assert.ok(errorBody.sent() < 8 * 1024 * 1024, `${errorBody.sent()} bytes were produced`);
    });
  } finally {
    await s.stop();
  }
});

Deno.test("a redirect is refused, never followed", async () => {
  const target = serve(() => new Response("{}", { status: 200 }));
  const s = serve(() => Response.redirect(`${target.url}/stolen`, 307));
  try {
    const kube = createKubeClient({ server: s.url }, { retries: 0 });
    const err = await error(kube.apply("/api/v1/x", { secret: "body" }, "butler"));
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.status, 0);
    assert.deepEqual(target.hits, [], "the redirect's target was never asked");
    assert.equal(classifyTenantError(err, "").reason, "Redirected");
    const streamed = await error(kube.stream("/api/v1/services?watch=1", new AbortController().signal));
    assert.equal(classifyTenantError(streamed, "").reason, "Redirected");
  } finally {
    await Promise.all([s.stop(), target.stop()]);
  }
});

Deno.test("a stream that does not answer with its headers in time fails as Timeout", async () => {
  // A server that takes the connection and never says a word.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  try {
    const kube = createKubeClient({ server: `http://127.0.0.1:${listener.addr.port}` }, {
      retries: 0,
      openTimeoutMs: 200,
    });
    const started = performance.now();
    const err = await error(kube.stream("/api/v1/services?watch=1", new AbortController().signal));
    assert.ok(err instanceof KubeApiError);
    assert.equal(err.reason, "Timeout");
    assert.ok(performance.now() - started < 5000);
    assert.equal(classifyTenantError(err, "").reason, "Timeout");
  } finally {
    listener.close();
    for (const c of held) c.close();
    await accepting.catch(() => {});
  }
});

Deno.test("an answer is read as it was sent: the client asks for none compressed, and inflates none (issue #55)", async () => {
  // 39 KB of gzip that inflate to 9 MB of `{}`: a cap on what is read means nothing if the client inflates what it
  // reads (the inflating took the reporter's resident memory from 80 to 270 MB on one list of the management API
  // server, which compresses its answers when asked to).
  const inflated = new TextEncoder().encode(`{"items":[${"{},".repeat(3_000_000)}{}]}`);
  const gzip = new Uint8Array(
    await new Response(new Blob([inflated]).stream().pipeThrough(new CompressionStream("gzip")))
      .arrayBuffer(),
  );
  const asked: (string | null)[] = [];
  const s = serve((req) => {
    asked.push(req.headers.get("accept-encoding"));
    return new Response(gzip, {
      headers: { "content-encoding": "gzip", "content-type": "application/json" },
    });
  });
  try {
    const client = createKubeClient({ server: s.url }, { retries: 0 });
    const err = await error(client.get("/api/v1/services"));
    assert.equal(err?.reason, "BadResponse", String(err));
    const res = await client.stream("/api/v1/services?watch=1", AbortSignal.timeout(5000));
    assert.equal(new Uint8Array(await res.arrayBuffer()).length, gzip.length, "the stream is the bytes sent");
    assert.deepEqual(asked, ["identity", "identity"]);
  } finally {
    await s.stop();
  }
});
