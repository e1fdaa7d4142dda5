/**
 * The service's and the reporter's listeners: `node:http`, or `node:https` with a key pair read from files and
 * reloaded when they change (cert-manager renews a Secret; the kubelet swaps the mounted files) and, given a client
 * CA, a certificate asked of every client and what it was handed to the app (`peer`), which decides per route.
 * Every connection is held to a {@linkcode ConnectionGuard}: a cap, and deadlines from its accept on. Deno's own
 * `Deno.serve` can neither verify client certificates, swap its key pair, nor bound a connection's time before its
 * request, so every listener is `node:http(s)`. HTTP/1.1 only: Deno's `node:http2` runs nghttp2, and a burst of
 * hostile admission calls (issue #46) hit an assertion in it that aborts the whole process.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { TLSSocket } from "node:tls";
import type { Peer } from "../http/env.ts";
import { bodyExpected, ConnectionGuard, type ConnectionLimits, holdReads } from "./guard.ts";
import { peerOf, readTls, sameTls, type TlsFiles, type TlsMaterial } from "./tls.ts";

/** What the app is handed with each request. */
export interface ServeEnv {
  /** The client certificate, when the listener asks for one. */
  peer?: Peer;
  /** Which listener took the request, when the service runs two. */
  listener?: "hooks" | "webhooks";
  /** When its headers arrived (`performance.now()`): its body's time runs from here. */
  arrivedAt?: number;
  /** The caller's address, as the connection shows it (bounds per caller before any authentication). */
  source?: string;
}

/** The app: a request and what the listener knows of it, to an answer. */
export type Fetch = (request: Request, env: ServeEnv) => Response | Promise<Response>;

/** Options of {@linkcode serve}. */
export interface ServeOptions {
  readonly hostname: string;
  readonly port: number;
  /** The connections' cap and deadlines. */
  readonly limits: ConnectionLimits;
  /** Serve HTTPS with these files; plain HTTP without. */
  readonly tls?: TlsFiles & {
    /** Seconds between checks of the files for a new key pair; 0 never checks. */
    readonly reloadSeconds: number;
  };
  readonly readFile?: (path: string) => string;
  readonly log?: (record: Record<string, unknown>) => void;
  readonly onListen?: (address: { hostname: string; port: number }) => void;
  /** Which listener this is, handed to the app with every request (when the service runs two). */
  readonly listener?: "hooks" | "webhooks";
}

/** A running listener. */
export interface Listener {
  /** Resolves when the listener is bound. */
  readonly ready: Promise<{ hostname: string; port: number }>;
  /** Over TLS: reads the files now and swaps the key pair if they changed; true when it did. */
  reload(): boolean;
  /** Its connections now, and those it closed (cap, deadlines). */
  readonly guard: Pick<ConnectionGuard, "stats" | "states">;
  /** Stops accepting connections, closes those not in a request, and resolves when every open one is done. */
  shutdown(): Promise<void>;
}

/**
 * The request as a `Request`. Its body is read as it is asked for and no sooner: the request stays paused and, over
 * TLS, its connection's reads stopped ({@linkcode holdReads}) until the app reads a chunk, so the caller's bytes
 * wait in the kernel. (Deno's `node:https` goes on reading a TLS socket whose request is paused: a request refused
 * before its body was read had 2 MB of it read meanwhile, one paused for good 200 MB.) A body the app refuses
 * before reading it (413, 429), or one sent with a GET, is never read; {@linkcode send} then closes the connection.
 */
function toRequest(req: IncomingMessage, origin: string): { request: Request; unread: () => boolean } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) { for (const v of value) headers.append(name, v); }
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  const hold = (stop: boolean) => {
    if (stop) req.pause();
    if (req.socket) holdReads(req.socket, stop);
    if (!stop) req.resume();
  };
  let ended = false;
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          // A view, not a copy: the door copies each chunk into the body as it takes it, before the next is read.
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) hold(true);
        });
        req.on("end", () => {
          ended = true;
          controller.close();
        });
        req.on("error", (err) => controller.error(err));
        hold(true);
      },
      pull() {
        hold(false);
      },
      cancel() {
        req.destroy();
      },
    }, { highWaterMark: 0 })
    : null;
  // A body sent with a GET or HEAD is never read: its bytes stay in the kernel, and the connection is closed.
  const ignored = !hasBody && bodyExpected(req);
  if (ignored) hold(true);
  const request = new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    ...(body ? { body, duplex: "half" } as RequestInit : {}),
  });
  return { request, unread: () => ignored || (hasBody && !ended) };
}

/**
 * Writes the response. A request whose body was not read to its end (refused early) gets `Connection: close`
 * and its socket is destroyed once the answer is out: the rest of the body is never read.
 */
async function send(
  res: ServerResponse,
  response: Response,
  req: IncomingMessage,
  unread: () => boolean,
  guard: ConnectionGuard,
): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    const prior = headers[name];
    headers[name] = prior === undefined ? value : [...(Array.isArray(prior) ? prior : [prior]), value];
  });
  const body = Buffer.from(await response.arrayBuffer());
  headers["content-length"] = String(body.length);
  const close = unread();
  if (close) headers["connection"] = "close";
  if (res.destroyed) return;
  guard.answering(req);
  res.writeHead(response.status, headers);
  res.end(body, () => {
    if (close) req.destroy();
  });
}

/** Each request handed to `fetch` with its peer, listener and arrival; an answer that fails is a JSON 500, logged. */
function handler(
  options: ServeOptions,
  fetch: Fetch,
  guard: ConnectionGuard,
  log: (record: Record<string, unknown>) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const asked = options.tls?.clientCaFile !== undefined;
  const scheme = options.tls ? "https" : "http";
  return (req, res) => {
    const arrivedAt = performance.now();
    guard.request(req, res);
    const { request, unread } = toRequest(req, `${scheme}://${req.headers.host ?? "localhost"}`);
    Promise.resolve()
      .then(() =>
        fetch(request, {
          arrivedAt,
          ...(req.socket.remoteAddress ? { source: req.socket.remoteAddress } : {}),
          ...(asked ? { peer: peerOf(req.socket as TLSSocket) } : {}),
          ...(options.listener ? { listener: options.listener } : {}),
        })
      )
      .then((response) => send(res, response, req, unread, guard))
      .catch((err) => {
        log({ msg: "response failed", error: err instanceof Error ? err.message : String(err) });
        if (res.destroyed) return;
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json", connection: "close" });
        res.end(JSON.stringify({ error: "internal error" }));
      });
  };
}

/** Listens, and resolves with the address bound (the port the system chose for port 0). */
function listen(server: http.Server, options: ServeOptions): Promise<{ hostname: string; port: number }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.hostname, () => {
      const address = server.address();
      const bound = {
        hostname: options.hostname,
        port: typeof address === "object" && address ? address.port : options.port,
      };
      options.onListen?.(bound);
      resolve(bound);
    });
  });
}

/** Checks the TLS files and swaps the key pair when they changed; true when it did. */
function reloader(
  server: https.Server,
  files: TlsFiles,
  readFile: (path: string) => string,
  initial: TlsMaterial,
  log: (record: Record<string, unknown>) => void,
): () => boolean {
  let current = initial;
  return () => {
    let next: TlsMaterial;
    try {
      next = readTls(files, readFile);
    } catch (err) {
      log({ msg: "TLS files not reloaded", error: err instanceof Error ? err.message : String(err) });
      return false;
    }
    if (sameTls(next, current)) return false;
    try {
      server.setSecureContext({ ...next });
    } catch (err) {
      // Half-written files (a certificate from the new pair, the key from the old) fail here; the next check
      // sees the whole pair.
      log({ msg: "TLS key pair not swapped", error: err instanceof Error ? err.message : String(err) });
      return false;
    }
    current = next;
    log({ msg: "TLS key pair reloaded", certFile: files.certFile });
    return true;
  };
}

/**
 * Serves `fetch` over HTTP, or HTTPS with `tls`. `fetch` receives the request and `{ peer, listener, arrivedAt }`
 * (`peer` unless a client CA is set). A key pair that fails to load at a reload is logged and the current one kept;
 * at start it throws.
 *
 * @example
 * ```ts
 * const listener = serve({ hostname: "0.0.0.0", port: 8443, limits,
 *   tls: { certFile, keyFile, clientCaFile, reloadSeconds: 10 } }, (req, env) => app.fetch(req, env));
 * await listener.ready;
 * ```
 */
export function serve(options: ServeOptions, fetch: Fetch): Listener {
  const readFile = options.readFile ?? ((p: string) => Deno.readTextFileSync(p));
  const log = options.log ?? (() => {});
  const tls = options.tls;
  const guard = new ConnectionGuard(options.limits, { tls: tls !== undefined });
  const handle = handler(options, fetch, guard, log);
  let reload = () => false;
  let server: http.Server;
  if (tls) {
    const material = readTls(tls, readFile);
    // Ask for a certificate but let the handshake finish: the app answers 403 with a reason, and probes and the
    // API server's admission calls (which present none) still reach the routes that do not need one.
    const secure = https.createServer(
      { ...material, requestCert: tls.clientCaFile !== undefined, rejectUnauthorized: false },
      handle,
    );
    reload = reloader(secure, tls, readFile, material, log);
    server = secure;
  } else server = http.createServer(handle);
  guard.attach(server);
  const ready = listen(server, options);
  const timer = tls && tls.reloadSeconds > 0 ? setInterval(reload, tls.reloadSeconds * 1000) : undefined;
  return {
    ready,
    reload: () => reload(),
    guard,
    shutdown() {
      if (timer !== undefined) clearInterval(timer);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        guard.close();
      });
    },
  };
}
