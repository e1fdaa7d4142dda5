/**
 * Issue #55, item 2: bodies are read by the door as they arrive, through real sockets. Before, Hono's `bodyLimit`
 * read a chunked body whole before the door and its deadline applied (100 never-finished 6.5 MiB chunked reviews
 * took the service to 963 MB), and the webhook door gave a review one of its places before its body was read
 * (reviews trickling a byte every 2 s held all 64, and 35 of 38 benign reviews got 429). Now a body is counted
 * chunk by chunk, refused past the limit (413) or its time (408) while it arrives, small ones read within a budget
 * that closes the slowest for a newcomer, large ones in their lane from the byte that makes them large; and a place
 * is taken once the whole body is in.
 */
import assert from "node:assert/strict";
import {
  close,
  connect,
  ending,
  fetchOnce,
  head,
  type Served,
  served,
  sleep,
  statusLine,
  trickle,
  writeAll,
} from "./listener_helpers.ts";

const PATIENCE_MS = 15_000;
const KIB = 1024;
const ROUTE = "/webhooks/validate/providerconfig";
const review = Deno.readTextFileSync(
  new URL("../fixtures/providerconfig/admission/update-reads-nothing/request.json", import.meta.url),
);
const encode = (text: string) => new TextEncoder().encode(text);

/** One chunk of chunked framing holding `bytes` spaces. */
const chunk = (bytes: number) => `${bytes.toString(16)}\r\n${" ".repeat(bytes)}\r\n`;

/** Opens a review whose head says `headers`, sends `first`, then trickles `rest` a byte every 100 ms. */
async function trickled(port: number, headers: Record<string, string>, first: string, rest: string) {
  const conn = await connect(port);
  await writeAll(conn, head(ROUTE, headers) + first);
  const slow = trickle(conn, rest, 100);
  return { conn, slow };
}

Deno.test("a body trickled in is refused at its deadline (408), and holds no place meanwhile", async (t) => {
  const s = await served({ app: { webhookConcurrency: 1 } });
  try {
    const declared = await trickled(s.port, { "content-length": "100" }, "{", " ");
    const chunked = await trickled(s.port, { "transfer-encoding": "chunked" }, chunk(1), chunk(1));
    await sleep(200);
    await t.step("a whole review is decided while two trickle, with one place at the door", async () => {
      const benign = await fetchOnce(s.port, ROUTE, review);
      assert.equal(benign.status, 200, benign.text);
    });
    for (const [name, { conn, slow }] of [["content-length", declared], ["chunked", chunked]] as const) {
      await t.step(`the ${name} one is answered 408 and closed`, async () => {
        const { end, text } = await ending(conn, PATIENCE_MS);
        slow.stop();
        await slow.done;
        assert.match(statusLine(text), /^HTTP\/1\.1 408 /, text);
        assert.match(text, /the request body did not arrive within 1s/);
        assert.equal(end, "closed");
      });
    }
  } finally {
    await s.stop();
  }
});

Deno.test("a never-finished chunked body is counted as it arrives: large ones wait for their lane, 429 at once", async () => {
  // The lane's holder keeps it 5 s: long enough on a loaded machine for the others to be refused meanwhile.
  const s = await served({
    limits: { bodyMs: 5000 },
    app: { webhookBodyLimitBytes: 7 * 1024 * KIB, bodyReadSeconds: { hooks: 5, webhooks: 5 } },
  });
  const conns: Deno.Conn[] = [];
  try {
    // One large chunked review in the lane: 1.1 MiB at once (past the reviews' 1 MiB), then a byte at a time.
    const holder = await trickled(s.port, { "transfer-encoding": "chunked" }, chunk(1100 * KIB), chunk(1));
    conns.push(holder.conn);
    await sleep(300);
    // Five more, each sending a 16 KiB chunk every 10 ms, up to 10 MiB, and never the last chunk.
    const fast = await Promise.all(Array.from({ length: 5 }, async () => {
      const conn = await connect(s.port);
      conns.push(conn);
      await writeAll(conn, head(ROUTE, { "transfer-encoding": "chunked" }));
      let written = 0;
      const sending = (async () => {
        const piece = encode(chunk(16 * KIB));
        try {
          while (written < 10 * 1024 * KIB) {
            written += await writeAll(conn, piece);
            await sleep(10);
          }
        } catch { /* closed by the service */ }
      })();
      const answer = await ending(conn, PATIENCE_MS);
      await sending;
      return { ...answer, written };
    }));
    for (const { text, written } of fast) {
      assert.match(statusLine(text), /^HTTP\/1\.1 429 /, text);
      // Small until 1 MiB, within the 4 MiB reading budget (the longest read closed for the others), then the lane's.
      assert.match(text, /busy: 1 large admission reviews in progress|this one was read longest/);
      assert.ok(written < 10 * 1024 * KIB, `refused before its end: ${written} bytes sent`);
    }
    const held = await ending(holder.conn, PATIENCE_MS);
    holder.slow.stop();
    assert.match(statusLine(held.text), /^HTTP\/1\.1 408 /, held.text);
  } finally {
    conns.forEach(close);
    await s.stop();
  }
});

Deno.test("a chunked body past the limit is refused as it arrives (413), never read to its end", async () => {
  const s = await served({ app: { webhookBodyLimitBytes: 256 * KIB } });
  try {
    const conn = await connect(s.port);
    await writeAll(conn, head(ROUTE, { "transfer-encoding": "chunked" }));
    const sending = (async () => {
      const piece = encode(chunk(16 * KIB));
      try {
        for (let i = 0; i < 4096; i++) await writeAll(conn, piece);
      } catch { /* closed by the service */ }
    })();
    const { text } = await ending(conn, PATIENCE_MS);
    await sending;
    assert.match(statusLine(text), /^HTTP\/1\.1 413 /, text);
    assert.match(text, /request body exceeds the limit of 262144 bytes/);
  } finally {
    await s.stop();
  }
});

Deno.test("reviews are answered while others trickle, large or small, chunked or not", async () => {
  const s = await served({ app: { webhookBodyLimitBytes: 7 * 1024 * KIB } });
  const slow: Awaited<ReturnType<typeof trickled>>[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      slow.push(await trickled(s.port, { "transfer-encoding": "chunked" }, chunk(1100 * KIB), chunk(1)));
      slow.push(await trickled(s.port, { "content-length": String(2048 * KIB) }, "{", " "));
    }
    for (let i = 0; i < 8; i++) {
      slow.push(await trickled(s.port, { "transfer-encoding": "chunked" }, chunk(1), chunk(1)));
      slow.push(await trickled(s.port, { "content-length": "2000" }, "{", " "));
    }
    await sleep(200);
    for (let i = 0; i < 10; i++) {
      const benign = await fetchOnce(s.port, ROUTE, review);
      assert.equal(benign.status, 200, `review ${i}: ${benign.text}`);
    }
  } finally {
    for (const { conn, slow: t } of slow) {
      t.stop();
      close(conn);
    }
    await s.stop();
  }
});

Deno.test("the reading budget closes the bodies read longest for newcomers", async () => {
  const s = await served({ app: { readingBytes: { hooks: 128 * KIB, webhooks: 128 * KIB } } });
  const stalled: Deno.Conn[] = [];
  try {
    // Four bodies of 60,000 bytes, 50,000 sent and then nothing: 200,000 bytes for a budget of 131,072.
    for (let i = 0; i < 4; i++) {
      const conn = await connect(s.port);
      await writeAll(conn, head(ROUTE, { "content-length": "60000" }) + " ".repeat(50_000));
      stalled.push(conn);
      await sleep(100);
    }
    const benign = await fetchOnce(s.port, ROUTE, review);
    assert.equal(benign.status, 200, benign.text);
    const first = await ending(stalled[0]!, PATIENCE_MS);
    assert.match(statusLine(first.text), /^HTTP\/1\.1 429 /, first.text);
    assert.match(first.text, /bytes of request bodies are being read and this one was read longest/);
    assert.equal(first.end, "closed");
  } finally {
    stalled.forEach(close);
    await s.stop();
  }
});

/**
 * Sends `request` and then 64 MiB as fast as the service takes them, until it answers and closes: the answer, and
 * how many bytes the listener read meanwhile.
 */
async function unasked(s: Served, request: string, plain = false): Promise<{ text: string; read: number }> {
  const before = s.listener.guard.stats().bytesRead;
  const conn = await connect(s.port, { plain });
  await writeAll(conn, request);
  const sending = (async () => {
    const piece = new Uint8Array(1024 * KIB);
    try {
      for (let i = 0; i < 64; i++) await writeAll(conn, piece);
    } catch { /* closed by the service */ }
  })();
  const { text } = await ending(conn, PATIENCE_MS);
  await sending;
  return { text, read: s.listener.guard.stats().bytesRead - before };
}

Deno.test("a body the app does not ask for stays in the caller's kernel, never read", async (t) => {
  // Deno's TLS socket reads on while its request is paused: before, a review refused unread had 2 MB of its body
  // read by the time it was answered, and a request paused for good took in 200 MB.
  const s = await served({
    limits: { bodyMs: 5000 },
    app: { webhookBodyLimitBytes: 7 * 1024 * KIB, bodyReadSeconds: { hooks: 5, webhooks: 5 } },
  });
  const lane = await trickled(s.port, { "transfer-encoding": "chunked" }, chunk(1100 * KIB), chunk(1));
  await sleep(300); // its 1.1 MiB read (the listener counts every byte it reads) before the cases count theirs
  try {
    const cases: [string, string, RegExp][] = [
      [
        "a POST to no route",
        head("/nope", { "content-length": String(64 * 1024 * KIB) }),
        /^HTTP\/1\.1 404 /,
      ],
      [
        "a large review while the large lane is held",
        head(ROUTE, { "content-length": String(2048 * KIB) }),
        /429/,
      ],
      [
        "a GET with a body",
        head("/healthz", { "content-length": String(64 * 1024 * KIB) }).replace("POST", "GET"),
        /200/,
      ],
    ];
    for (const [name, request, answer] of cases) {
      await t.step(name, async () => {
        const { text, read } = await unasked(s, request);
        assert.match(statusLine(text), answer, text);
        assert.ok(read < 512 * KIB, `${read} bytes of it were read`);
      });
    }
  } finally {
    lane.slow.stop();
    close(lane.conn);
    await s.stop();
  }
});

Deno.test("plain HTTP (development, the reporter): a body no one asks for is not read either", async (t) => {
  const s = await served({ plain: true });
  try {
    const cases: [string, string, RegExp][] = [
      [
        "a POST to no route",
        head("/nope", { "content-length": String(64 * 1024 * KIB) }),
        /^HTTP\/1\.1 404 /,
      ],
      [
        "a GET with a body",
        head("/healthz", { "content-length": String(64 * 1024 * KIB) }).replace("POST", "GET"),
        /200/,
      ],
    ];
    for (const [name, request, answer] of cases) {
      await t.step(name, async () => {
        const { text, read } = await unasked(s, request, true);
        assert.match(statusLine(text), answer, text);
        assert.ok(read < 512 * KIB, `${read} bytes of it were read`);
      });
    }
  } finally {
    await s.stop();
  }
});
