/**
 * Graceful shutdown of the real service (`main.ts` in a child process): on SIGTERM it turns not-ready, keeps
 * serving for the drain period, finishes the request in flight, and exits 0. Also: a bad variable exits 1.
 */
import assert from "node:assert/strict";

const MAIN = new URL("../../main.ts", import.meta.url).pathname;

function spawn(env: Record<string, string>) {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "--unstable-no-legacy-abort", "--allow-net", "--allow-env", "--allow-read", MAIN],
    env: { HOST: "127.0.0.1", PORT: "0", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function readLines(stream: ReadableStream<Uint8Array>, lines: string[]): Promise<void> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of stream) {
    buf += decoder.decode(chunk, { stream: true });
    let i;
    while ((i = buf.indexOf("\n")) >= 0) {
      lines.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  }
}

async function waitFor<T>(what: string, f: () => T | undefined, ms = 15000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = f();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

Deno.test("SIGTERM: not ready, in-flight request finished, exit 0", async () => {
  const child = spawn({ SHUTDOWN_DRAIN_SECONDS: "1", SHUTDOWN_TIMEOUT_SECONDS: "10" });
  const out: string[] = [];
  const reading = Promise.all([readLines(child.stdout, out), child.stderr.cancel()]);
  const port = await waitFor("listening", () => {
    const line = out.find((l) => l.includes("listening on"));
    return line ? JSON.parse(line).port as number : undefined;
  });
  const base = `http://127.0.0.1:${port}`;
  assert.equal(await fetch(`${base}/readyz`).then(async (r) => (await r.body?.cancel(), r.status)), 200);

  // A customize request whose body arrives in two halves, SIGTERM in between.
  const body = JSON.stringify({
    controller: {},
    parent: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "NetworkPool",
      metadata: { name: "lab-pool", namespace: "butler-system" },
      spec: { cidr: "10.40.0.0/21" },
    },
  });
  const half = Math.floor(body.length / 2);
  let push!: (s: string | null) => void;
  const stream = new ReadableStream<Uint8Array>({
    start(ctrl) {
      push = (s) => (s === null ? ctrl.close() : ctrl.enqueue(new TextEncoder().encode(s)));
    },
  });
  const inflight = fetch(`${base}/hooks/networkpool/customize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: stream,
    duplex: "half",
  } as RequestInit);
  push(body.slice(0, half));
  await new Promise((r) => setTimeout(r, 200));

  child.kill("SIGTERM");
  await waitFor("shutdown started", () => out.some((l) => l.includes("shutdown started")) || undefined);
  const ready = await fetch(`${base}/readyz`);
  await ready.body?.cancel();
  assert.equal(ready.status, 503, "not ready while draining");
  // While draining, each answer closes its connection: a caller's next request goes through the Service to a ready
  // replica instead of reaching this one on a kept-alive connection after the drain.
  const served = await fetch(`${base}/healthz`);
  await served.body?.cancel();
  assert.deepEqual([served.status, served.headers.get("connection")], [200, "close"]);

  await new Promise((r) => setTimeout(r, 1300)); // past the drain: the listener is closing, the request is still open
  push(body.slice(half));
  push(null);
  const res = await inflight;
  assert.equal(res.status, 200, out.join("\n"));
  assert.deepEqual((await res.json()).relatedResources[0].labelSelector, {
    matchLabels: { "butler.butlerlabs.dev/network-pool": "lab-pool" },
  });

  const status = await child.status;
  await reading;
  assert.equal(status.code, 0);
  assert.ok(out.some((l) => l.includes("shutdown complete")));
  for (const line of out) JSON.parse(line); // every log line is JSON
});

Deno.test("a bad configuration value exits 1 naming the variable", async () => {
  const child = spawn({ BODY_LIMIT_BYTES: "lots" });
  const { code, stderr } = await child.output();
  assert.equal(code, 1);
  assert.match(new TextDecoder().decode(stderr), /BODY_LIMIT_BYTES must be an integer/);
});

/**
 * 32 clients keep sending on keep-alive connections while SIGTERM lands: each request is answered 200 (taken
 * before shutdown) or 503 (after; the client then backs off, as Metacontroller does), or never reaches the server
 * (connection refused once the listener is closed). None may be reset after the server received it.
 */
async function underLoad(
  drainSeconds: string,
): Promise<{ ok: number; unavailable: number; reset: string[] }> {
  const child = spawn({ SHUTDOWN_DRAIN_SECONDS: drainSeconds, SHUTDOWN_TIMEOUT_SECONDS: "10" });
  const out: string[] = [];
  const reading = Promise.all([readLines(child.stdout, out), child.stderr.cancel()]);
  const port = await waitFor("listening", () => {
    const line = out.find((l) => l.includes("listening on"));
    return line ? JSON.parse(line).port as number : undefined;
  });
  const fixture = new URL("../fixtures/networkpool/sync/lab-pool-first-grants/request.json", import.meta.url);
  const body = await Deno.readTextFile(fixture);
  const tally = { ok: 0, unavailable: 0, reset: [] as string[] };
  let stop = false;
  const client = async () => {
    const http = Deno.createHttpClient({});
    try {
      while (!stop) {
        try {
          const res = await fetch(`http://127.0.0.1:${port}/hooks/networkpool/sync`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body,
            client: http,
          });
          await res.body?.cancel();
          if (res.status === 200) tally.ok++;
          else if (res.status === 503) return void tally.unavailable++; // backs off, as Metacontroller does
          else if (res.status === 429) await new Promise((r) => setTimeout(r, 20)); // the pool is full: retry
          else tally.reset.push(`status ${res.status}`);
        } catch (err) {
          const why = `${err} ${(err as Error).cause ?? ""}`;
          if (/refused/i.test(why)) return; // the listener is gone: nothing was received
          tally.reset.push(why);
          return;
        }
      }
    } finally {
      http.close();
    }
  };
  const clients = Array.from({ length: 32 }, client);
  await new Promise((r) => setTimeout(r, 300));
  child.kill("SIGTERM");
  const status = await child.status;
  stop = true;
  await Promise.all(clients);
  await reading;
  assert.equal(status.code, 0, out.join("\n"));
  return tally;
}

Deno.test("SIGTERM under load: every request answered 200, 429 or 503, none reset", async (t) => {
  for (const drain of ["0", "1"]) {
    await t.step(`drain ${drain} s`, async () => {
      const tally = await underLoad(drain);
      assert.deepEqual(tally.reset, []);
      assert.ok(tally.ok > 0, "requests were answered before the signal");
    });
  }
});
