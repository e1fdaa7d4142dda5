/**
 * The connection guard's choices, with sockets of its own making: who is closed at the cap (the connection waiting
 * longest on its caller, those never answered before those kept alive, never one whose request is being decided,
 * and the newcomer only when every other is), and which deadline closes a connection in each state. The listener
 * tests (`connections_test.ts`) show the same through real sockets.
 */
import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { ConnectionGuard, type ConnectionLimits } from "../../lib/listener/mod.ts";

/** A socket that says when it was destroyed. */
class FakeSocket extends EventEmitter {
  destroyed = false;
  bytesRead = 0;
  destroy(): this {
    if (!this.destroyed) {
      this.destroyed = true;
      this.emit("close");
    }
    return this;
  }
}

const FAR: ConnectionLimits = {
  maxConnections: 3,
  handshakeMs: 60_000,
  headerMs: 60_000,
  idleMs: 60_000,
  bodyMs: 60_000,
};

function guarded(limits: Partial<ConnectionLimits> = {}, tls = false) {
  const guard = new ConnectionGuard({ ...FAR, ...limits }, { tls });
  /** A connection accepted, with `bytesRead` bytes read at once (its ClientHello, say). */
  const open = (bytesRead = 0) => {
    const socket = new FakeSocket();
    socket.bytesRead = bytesRead;
    guard.accepted(socket as unknown as Socket);
    return socket;
  };
  /** A request on `socket` (with a body, which ends when `end()` is called), and its answer. */
  const request = (socket: FakeSocket, body = false) => {
    const req = Object.assign(new EventEmitter(), {
      socket,
      headers: body ? { "content-length": "10" } : {},
    });
    const res = new EventEmitter();
    guard.request(req as unknown as IncomingMessage, res as unknown as ServerResponse);
    return { end: () => req.emit("end"), answer: () => res.emit("finish") };
  };
  return { guard, open, request, close: () => guard.close() };
}

Deno.test("at the cap: the one waiting longest is closed, never one being decided", async (t) => {
  await t.step("those never answered go before those kept alive, oldest first", () => {
    const g = guarded();
    const kept = g.open();
    g.request(kept).answer(); // answered, now idle: kept alive
    const [a, b] = [g.open(), g.open()];
    const c = g.open(); // fourth: the oldest never answered (a) goes
    assert.deepEqual([kept.destroyed, a.destroyed, b.destroyed, c.destroyed], [false, true, false, false]);
    g.open(); // fifth: b
    assert.equal(b.destroyed, true);
    g.open(); // sixth: c
    assert.equal(c.destroyed, true);
    assert.equal(kept.destroyed, false, "the kept connection outlasts every stranger");
    assert.equal(g.guard.stats().evicted, 3);
    g.close();
  });
  await t.step("one that sent nothing goes first, then one past its handshake with no request yet", () => {
    const g = guarded({ maxConnections: 4 }, true);
    const [early, handshaking] = [g.open(300), g.open(300)]; // both began a handshake
    const silent = g.open(); // younger, but has said nothing
    g.guard.secured(Object.assign(new FakeSocket(), { _parent: early }) as unknown as Socket); // its handshake done
    const newcomer = g.open(300);
    g.open(300); // the fifth: `silent` goes, though younger than both
    assert.deepEqual([silent.destroyed, early.destroyed, handshaking.destroyed], [true, false, false]);
    g.open(300); // the sixth: `early`, past its handshake with no request, before the older `handshaking`
    assert.deepEqual([early.destroyed, handshaking.destroyed, newcomer.destroyed], [true, false, false]);
    g.close();
  });
  await t.step("a connection whose request is decided is never closed for another", () => {
    const g = guarded();
    const deciding = [g.open(), g.open()];
    for (const s of deciding) g.request(s);
    const reading = g.open();
    const body = g.request(reading, true); // still sending its body: it may be closed
    const newcomer = g.open();
    assert.equal(reading.destroyed, true);
    assert.equal(newcomer.destroyed, false);
    assert.deepEqual(deciding.map((s) => s.destroyed), [false, false]);
    body.end();
    g.close();
  });
  await t.step("a kept connection idle is closed rather than the newcomer refused", () => {
    const g = guarded();
    const deciding = [g.open(), g.open()];
    for (const s of deciding) g.request(s);
    const kept = g.open();
    g.request(kept).answer();
    const newcomer = g.open();
    assert.equal(kept.destroyed, true);
    assert.equal(newcomer.destroyed, false);
    g.close();
  });
  await t.step("the newcomer is refused only when every other is being decided", () => {
    const g = guarded();
    const deciding = [g.open(), g.open(), g.open()];
    for (const s of deciding) g.request(s);
    const newcomer = g.open();
    assert.equal(newcomer.destroyed, true);
    assert.deepEqual(deciding.map((s) => s.destroyed), [false, false, false]);
    assert.deepEqual({ evicted: g.guard.stats().evicted, refused: g.guard.stats().refused }, {
      evicted: 0,
      refused: 1,
    });
    g.close();
  });
});

Deno.test("each state has its deadline", async (t) => {
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const short = { headerMs: 50, idleMs: 50, bodyMs: 50 };
  await t.step("headers: from accept", async () => {
    const g = guarded(short);
    const s = g.open();
    await wait(1000);
    assert.equal(s.destroyed, true);
    assert.equal(g.guard.stats().expired.header, 1);
  });
  await t.step("a body: from its headers (past the grace the app's 408 has first)", async () => {
    const g = guarded(short);
    const s = g.open();
    g.request(s, true);
    await wait(3000);
    assert.equal(s.destroyed, true);
    assert.equal(g.guard.stats().expired.body, 1);
  });
  await t.step("idle: from an answer", async () => {
    const g = guarded(short);
    const s = g.open();
    g.request(s).answer();
    await wait(1000);
    assert.equal(s.destroyed, true);
    assert.equal(g.guard.stats().expired.idle, 1);
  });
  await t.step("none while a request is decided", async () => {
    const g = guarded(short);
    const s = g.open();
    const r = g.request(s);
    await wait(1000);
    assert.equal(s.destroyed, false);
    r.answer();
    g.close();
    assert.equal(s.destroyed, true, "closed at shutdown once answered");
  });
});
