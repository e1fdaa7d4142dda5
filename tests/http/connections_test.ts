/**
 * Issue #55, item 2: a listener's connections are capped and timed from their accept on, through real sockets (TLS,
 * as the shipped listeners serve, and plain HTTP, as development and the reporter do). Deno's `node:http(s)` keep
 * `headersTimeout`, `requestTimeout` and `keepAliveTimeout` as settings only: before the guard an idle connection,
 * a handshake never finished and headers trickled in were all held for as long as the caller liked, and 18,000 idle
 * connections took the service to 770 MB.
 */
import assert from "node:assert/strict";
import {
  close,
  connect,
  connectRaw,
  ending,
  fetchOnce,
  heldKube,
  served,
  sleep,
  statusLine,
  trickle,
  writeAll,
} from "./listener_helpers.ts";

/** Many times the test deadlines (TEST_LIMITS): a loaded machine is slow, never this slow. */
const PATIENCE_MS = 15_000;
const review = Deno.readTextFileSync(
  new URL("../fixtures/providerconfig/admission/update-reads-nothing/request.json", import.meta.url),
);
const deleteReview = Deno.readTextFileSync(
  new URL(
    "../fixtures/providerconfig/admission/delete-referenced-by-two-clusters/request.json",
    import.meta.url,
  ),
);

Deno.test("an idle connection is closed at its deadline", async (t) => {
  for (const plain of [false, true]) {
    const scheme = plain ? "plain HTTP" : "TLS";
    await t.step(`${scheme}: never a request, at the header deadline`, async () => {
      const s = await served({ plain });
      try {
        const conn = await connect(s.port, { plain });
        assert.equal((await ending(conn, PATIENCE_MS)).end, "closed");
        assert.equal(s.listener.guard.stats().expired.header, 1);
      } finally {
        await s.stop();
      }
    });
    await t.step(`${scheme}: kept alive after an answer, at the idle deadline`, async () => {
      const s = await served({ plain });
      try {
        const conn = await connect(s.port, { plain });
        await writeAll(conn, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
        const { end, text } = await ending(conn, PATIENCE_MS);
        assert.match(statusLine(text), /^HTTP\/1\.1 200 /, "answered first");
        assert.equal(end, "closed", "then closed while idle");
        assert.equal(s.listener.guard.stats().expired.idle, 1);
      } finally {
        await s.stop();
      }
    });
  }
});

Deno.test("a TLS handshake that never finishes is closed at the handshake deadline", async (t) => {
  const s = await served({ limits: { headerMs: 60_000 } });
  try {
    await t.step("nothing sent after connecting", async () => {
      const conn = await connectRaw(s.port);
      assert.equal((await ending(conn, PATIENCE_MS)).end, "closed");
    });
    await t.step("the first bytes of a ClientHello, then nothing", async () => {
      const conn = await connectRaw(s.port, new Uint8Array([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
      assert.equal((await ending(conn, PATIENCE_MS)).end, "closed");
    });
    assert.equal(s.listener.guard.stats().expired.handshake, 2);
  } finally {
    await s.stop();
  }
});

Deno.test("headers trickled in are closed at the header deadline", async (t) => {
  for (const plain of [false, true]) {
    await t.step(`the first request's, ${plain ? "plain HTTP" : "TLS"}`, async () => {
      const s = await served({ plain });
      try {
        const conn = await connect(s.port, { plain });
        const slow = trickle(
          conn,
          "GET /healthz HTTP/1.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
          100,
        );
        const { end, text } = await ending(conn, PATIENCE_MS);
        slow.stop();
        await slow.done;
        assert.equal(end, "closed");
        assert.equal(text, "", "no request was ever answered");
        assert.equal(s.listener.guard.stats().expired.header, 1);
      } finally {
        await s.stop();
      }
    });
  }
  await t.step("the next request's, on a kept connection: within the idle window", async () => {
    const s = await served();
    try {
      const conn = await connect(s.port);
      await writeAll(conn, "GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
      const slow = trickle(conn, "GET /healthz HTTP/1.1\r\nx-slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaa", 100);
      const { end, text } = await ending(conn, PATIENCE_MS);
      slow.stop();
      await slow.done;
      assert.equal(end, "closed");
      assert.equal(text.split("HTTP/1.1 ").length - 1, 1, "the first request alone was answered");
    } finally {
      await s.stop();
    }
  });
});

Deno.test("at the cap, connections waiting longest are closed for newcomers; a request being decided never is", async () => {
  // Deadlines far away: here only the cap closes anything.
  const limits = { maxConnections: 8, handshakeMs: 60_000, headerMs: 60_000, idleMs: 60_000, bodyMs: 60_000 };
  const { kube, asked, answer } = heldKube();
  const s = await served({ limits, app: { kube } });
  const hostile: Deno.Conn[] = [];
  try {
    // A review waiting on the API: its request is being decided.
    const deciding = fetchOnce(s.port, "/webhooks/validate/providerconfig", deleteReview);
    while (asked() === 0) await sleep(5);
    // Ten times the cap of hostile connections: handshakes never begun, idle after a handshake, headers begun.
    for (let i = 0; i < 10 * limits.maxConnections; i++) {
      const kind = i % 3;
      const conn = kind === 0 ? await connectRaw(s.port) : await connect(s.port);
      if (kind === 2) await writeAll(conn, "GET /healthz HTTP/1.1\r\n");
      hostile.push(conn);
    }
    await sleep(200);
    const stats = s.listener.guard.stats();
    assert.ok(stats.open <= limits.maxConnections, JSON.stringify(stats));
    assert.ok(stats.evicted >= 10 * limits.maxConnections - limits.maxConnections, JSON.stringify(stats));
    // The oldest were closed, seen from the callers' side too.
    const first = await ending(hostile[0]!, PATIENCE_MS);
    assert.equal(first.end, "closed");
    // A benign review on a new connection gets through, and the one being decided is answered.
    const benign = await fetchOnce(s.port, "/webhooks/validate/providerconfig", review);
    assert.equal(benign.status, 200, benign.text);
    answer();
    const decided = await deciding;
    assert.equal(decided.status, 200, decided.text);
  } finally {
    answer();
    hostile.forEach(close);
    await s.stop();
  }
});
