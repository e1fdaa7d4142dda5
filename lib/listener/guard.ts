/**
 * The connections of one listener: how many may be open, and how long each may spend on each step, from its
 * accept on. Deno's `node:http(s)` servers keep `headersTimeout`, `requestTimeout` and `keepAliveTimeout` as
 * settings only (a header trickled for 12 s and an idle connection held 20 s past 2 s settings), so this guard
 * keeps its own timer per connection and destroys the socket when it runs out.
 *
 * A connection goes through these states; each has a deadline, and those that wait on the caller may be closed for
 * a newcomer at the cap:
 *
 * | state | from | until | deadline | closed for a newcomer |
 * |---|---|---|---|---|
 * | `handshake` | accept (TLS) | the handshake's end | accept + `handshakeMs` | yes |
 * | `header` | accept, or the handshake's end | the first request's headers | accept + `headerMs` | yes |
 * | `body` | a request's headers | its body's end | headers + `bodyMs` | yes |
 * | `deciding` | the body's end | the answer handed over | none (the app's own) | never |
 * | `writing` | the answer handed over | its last byte sent | + `bodyMs` | never |
 * | `idle` | an answer sent | the next request's headers | + `idleMs` | yes |
 *
 * At the cap, the newcomer is let in and a connection waiting on its caller is closed instead: first among those
 * that never had an answer (one that sent nothing, then one past its handshake with no request, then any), then
 * among those kept alive, oldest first. So a flood of connections cannot lock out the API server's or
 * Metacontroller's: theirs arrive whole within milliseconds, and their kept connections outlast any stranger's.
 *
 * @module
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Server, Socket } from "node:net";

/** How many connections a listener keeps, and how long each step of one may take. */
export interface ConnectionLimits {
  /** Connections open at once; at the cap one waiting on its caller is closed for the newcomer (`#victim`). */
  readonly maxConnections: number;
  /** Milliseconds from accept to the end of the TLS handshake. */
  readonly handshakeMs: number;
  /** Milliseconds from accept to the first request's headers. */
  readonly headerMs: number;
  /** Milliseconds from an answer's last byte to the next request's headers: the keep-alive idle window. */
  readonly idleMs: number;
  /**
   * Milliseconds from a request's headers to its body's last byte, and from its answer handed over to the
   * answer's last byte sent. The app answers a slow body 408 before this (the guard is the backstop).
   */
  readonly bodyMs: number;
}

/** Where a connection is (see the module's table). */
export type ConnectionState = "handshake" | "header" | "body" | "deciding" | "writing" | "idle";

/** What a guard did: connections open now, and those it closed, by why. */
export interface ConnectionStats {
  readonly open: number;
  /** Closed at the cap for a newcomer. */
  readonly evicted: number;
  /** Newcomers closed at once: every open connection had a request being decided. */
  readonly refused: number;
  /** Closed at a deadline, by the state they were in. */
  readonly expired: Readonly<Record<ConnectionState, number>>;
  /** Bytes read from the listener's sockets, open and closed: what callers sent that the process took in. */
  readonly bytesRead: number;
}

/** Grace past `bodyMs` for the backstop, so that the app's 408 goes out first. */
const BACKSTOP_GRACE_MS = 1000;

const WAITING: ReadonlySet<ConnectionState> = new Set(["handshake", "header", "body", "idle"]);

interface Connection {
  readonly raw: Socket;
  tls?: Socket;
  state: ConnectionState;
  readonly acceptedAt: number;
  /** Requests answered on it. */
  served: number;
  timer?: ReturnType<typeof setTimeout>;
}

/** A body is coming when the headers say so (`content-length` above 0, or any `transfer-encoding`). */
export function bodyExpected(req: IncomingMessage): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) !== 0;
}

/** The TCP socket under `socket`: itself, or the one a TLS socket wraps. */
export function tcpSocket(socket: Socket): Socket {
  return (socket as unknown as { _parent?: Socket })._parent ?? socket;
}

type Handle = { readStop?(): unknown; readStart?(): unknown };
const held = new WeakSet<Handle>();

/**
 * Stops reading a TLS connection (`hold`), or starts again. Deno's TLS socket goes on reading and buffering
 * whatever its caller sends while it and its request are paused (a paused request held 200 MB sent to it), and
 * pausing the TCP socket beneath stops it for good; stopping and starting the TCP handle's reads is what works.
 * Plain HTTP needs nothing: a paused request stops its socket.
 */
export function holdReads(socket: Socket, hold: boolean): void {
  const parent = (socket as unknown as { _parent?: Socket })._parent;
  const handle = (parent as unknown as { _handle?: Handle } | undefined)?._handle;
  if (!handle?.readStop || !handle.readStart || hold === held.has(handle)) return;
  if (hold) {
    held.add(handle);
    handle.readStop();
  } else {
    held.delete(handle);
    handle.readStart();
  }
}

/**
 * Guards one listener's connections. Wire it to the server: {@linkcode ConnectionGuard.attach} for accepts and
 * handshakes, {@linkcode ConnectionGuard.request} for each request, {@linkcode ConnectionGuard.answering} when
 * its answer is handed to the socket.
 *
 * @example
 * ```ts
 * const guard = new ConnectionGuard({ maxConnections: 256, handshakeMs: 5000, headerMs: 10000, idleMs: 120000,
 *   bodyMs: 10000 }, { tls: true });
 * const server = https.createServer(options, (req, res) => { guard.request(req, res); ... });
 * guard.attach(server);
 * ```
 */
export class ConnectionGuard {
  readonly #limits: ConnectionLimits;
  readonly #tls: boolean;
  readonly #now: () => number;
  readonly #bySocket = new WeakMap<Socket, Connection>();
  readonly #all = new Set<Connection>();
  /** Connections waiting on their caller, oldest wait first: those never answered, and those kept alive. */
  readonly #fresh = new Set<Connection>();
  readonly #kept = new Set<Connection>();
  #closing = false;
  #evicted = 0;
  #bytesReadClosed = 0;
  #refused = 0;
  readonly #expired: Record<ConnectionState, number> = {
    handshake: 0,
    header: 0,
    body: 0,
    deciding: 0,
    writing: 0,
    idle: 0,
  };

  constructor(limits: ConnectionLimits, options: { tls: boolean; now?: () => number }) {
    this.#limits = limits;
    this.#tls = options.tls;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Follows the server's accepts (`connection`) and, over TLS, handshakes (`secureConnection`). */
  attach(server: Server): void {
    server.on("connection", (socket: Socket) => this.accepted(socket));
    if (this.#tls) server.on("secureConnection", (socket: Socket) => this.secured(socket));
  }

  /** A socket accepted: counted, timed, and at the cap someone waiting is closed for it. */
  accepted(raw: Socket): void {
    if (this.#closing) return void raw.destroy();
    const conn: Connection = {
      raw,
      state: this.#tls ? "handshake" : "header",
      acceptedAt: this.#now(),
      served: 0,
    };
    this.#bySocket.set(raw, conn);
    this.#all.add(conn);
    raw.once("close", () => this.#forget(conn));
    this.#enter(conn, conn.state);
    while (this.#all.size > this.#limits.maxConnections) {
      const victim = this.#victim(conn);
      if (!victim) {
        this.#refused++;
        return void this.#destroy(conn);
      }
      this.#evicted++;
      this.#destroy(victim);
    }
  }

  /** The TLS handshake of an accepted socket ended. */
  secured(tls: Socket): void {
    const conn = this.#find(tls);
    if (!conn) return;
    conn.tls = tls;
    this.#bySocket.set(tls, conn);
    tls.once("close", () => this.#forget(conn));
    if (conn.state === "handshake") this.#enter(conn, "header");
  }

  /** A request's headers arrived: its body is read until its end, its answer sent until its last byte. */
  request(req: IncomingMessage, res: ServerResponse): void {
    const conn = this.#find(req.socket);
    if (!conn) return;
    // Nothing more is read until the app asks for the body (the listener's `toRequest` starts reads again).
    if (conn.tls) holdReads(conn.tls, true);
    if (bodyExpected(req)) {
      this.#enter(conn, "body");
      req.once("end", () => conn.state === "body" && this.#enter(conn, "deciding"));
    } else this.#enter(conn, "deciding");
    res.once("finish", () => {
      conn.served++;
      if (this.#closing) return void this.#destroy(conn);
      this.#enter(conn, "idle");
    });
  }

  /** The answer to `req` was handed to its socket: it must be sent within the body's time. */
  answering(req: IncomingMessage): void {
    const conn = this.#find(req.socket);
    if (conn && conn.state !== "idle") this.#enter(conn, "writing");
  }

  /**
   * Stops taking connections and closes those not in a request (handshaking, waiting for one, idle); the others
   * close once answered.
   */
  close(): void {
    this.#closing = true;
    for (const conn of [...this.#all]) {
      if (conn.state !== "body" && conn.state !== "deciding" && conn.state !== "writing") this.#destroy(conn);
    }
  }

  /** Connections open now, and those closed by the cap or a deadline. */
  stats(): ConnectionStats {
    return {
      open: this.#all.size,
      evicted: this.#evicted,
      refused: this.#refused,
      expired: { ...this.#expired },
      bytesRead: [...this.#all].reduce((sum, c) => sum + (c.raw.bytesRead ?? 0), this.#bytesReadClosed),
    };
  }

  /** Each connection's state now (tests, metrics). */
  states(): ConnectionState[] {
    return [...this.#all].map((c) => c.state);
  }

  /**
   * Who is closed for a newcomer: among the connections never answered, one that has sent nothing since its
   * accept, else one past its handshake with no request yet, else any; then the kept ones; oldest first in each.
   * A caller whose request is on its way (its handshake under way, its headers arriving) goes last: under a flood
   * of connections that say nothing, the kubelet's and the API server's new connections are never the ones closed.
   */
  #victim(newcomer: Connection): Connection | undefined {
    let best: Connection | undefined;
    let bestRank = 3;
    for (const c of this.#fresh) {
      if (c === newcomer) continue;
      const rank = (c.raw.bytesRead ?? 0) === 0 ? 0 : c.state === "header" ? 1 : 2;
      if (rank < bestRank) [best, bestRank] = [c, rank];
      if (rank === 0) break;
    }
    return best ?? first(this.#kept, newcomer);
  }

  #find(socket: Socket | null | undefined): Connection | undefined {
    if (!socket) return undefined;
    return this.#bySocket.get(socket) ?? this.#bySocket.get(tcpSocket(socket));
  }

  #enter(conn: Connection, state: ConnectionState): void {
    if (!this.#all.has(conn)) return;
    // Nothing is read while a request is decided and answered (a caller cannot pile bytes up meanwhile); reading
    // starts again once the answer is out.
    if (conn.tls && state !== "body") holdReads(conn.tls, state === "deciding" || state === "writing");
    conn.state = state;
    clearTimeout(conn.timer);
    this.#fresh.delete(conn);
    this.#kept.delete(conn);
    if (WAITING.has(state)) (conn.served > 0 ? this.#kept : this.#fresh).add(conn);
    const ms = this.#deadline(conn, state);
    conn.timer = ms === undefined ? undefined : setTimeout(() => {
      this.#expired[conn.state]++;
      this.#destroy(conn);
    }, Math.max(0, ms));
  }

  /** Milliseconds left in `state` for `conn`; none while its request is decided. */
  #deadline(conn: Connection, state: ConnectionState): number | undefined {
    const l = this.#limits;
    switch (state) {
      case "handshake":
        return conn.acceptedAt + l.handshakeMs - this.#now();
      case "header":
        return conn.acceptedAt + l.headerMs - this.#now();
      case "body":
        return l.bodyMs + BACKSTOP_GRACE_MS;
      case "writing":
        return l.bodyMs;
      case "idle":
        return l.idleMs;
      case "deciding":
        return undefined;
    }
  }

  #destroy(conn: Connection): void {
    this.#forget(conn);
    conn.tls?.destroy();
    conn.raw.destroy();
  }

  #forget(conn: Connection): void {
    clearTimeout(conn.timer);
    if (this.#all.has(conn)) this.#bytesReadClosed += conn.raw.bytesRead ?? 0;
    this.#all.delete(conn);
    this.#fresh.delete(conn);
    this.#kept.delete(conn);
  }
}

/** The oldest of `set` but `except`. */
function first<T>(set: Set<T>, except: T): T | undefined {
  for (const v of set) if (v !== except) return v;
  return undefined;
}
