/**
 * The HTTPS listener: serves the app with a key pair read from files and reloaded when they change (cert-manager
 * renews a Secret; the kubelet swaps the mounted files), and, given a client CA, asks every client for a
 * certificate and hands what it found to the app (`c.env.peer`), which decides per route. Deno's own
 * `Deno.serve` can neither verify client certificates nor swap its key pair, so this listener is `node:https`.
 * HTTP/1.1 only: Deno's `node:http2` runs nghttp2, and a burst of hostile admission calls (issue #46, the hostile
 * tier) hit an assertion in it (`nghttp2_session.c: find_stream_on_goaway_func`) that aborts the whole process.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";
import https from "node:https";
import type { Server } from "node:net";
import type { TLSSocket } from "node:tls";
import type { Peer } from "./env.ts";

/** Where the key pair (and the CA that signs accepted client certificates) are read from. */
export interface TlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** PEM CA bundle; when set, clients are asked for a certificate and `peer` says whether it verified. */
  readonly clientCaFile?: string | undefined;
}

/** Options of {@linkcode serveTls}. */
export interface ServeTlsOptions extends TlsFiles {
  readonly hostname: string;
  readonly port: number;
  /** Seconds between checks of the files for a new key pair; 0 never checks. */
  readonly reloadSeconds: number;
  readonly readFile?: (path: string) => string;
  readonly log?: (record: Record<string, unknown>) => void;
  readonly onListen?: (address: { hostname: string; port: number }) => void;
  /** Which listener this is, handed to the app with every request (when the service runs two). */
  readonly listener?: "hooks" | "webhooks";
}

/** A running HTTPS listener. */
export interface TlsServer {
  /** Resolves when the listener is bound. */
  readonly ready: Promise<{ hostname: string; port: number }>;
  /** Reads the files now and swaps the key pair if they changed; true when it did. */
  reload(): boolean;
  /** Stops accepting connections, closes idle ones, and resolves when every open one is done. */
  shutdown(): Promise<void>;
}

type Material = { cert: string; key: string; ca?: string };

function read(files: TlsFiles, readFile: (path: string) => string): Material {
  return {
    cert: readFile(files.certFile),
    key: readFile(files.keyFile),
    ...(files.clientCaFile ? { ca: readFile(files.clientCaFile) } : {}),
  };
}

/** What the client presented, as the app sees it. */
function peerOf(socket: TLSSocket): Peer {
  const cert = socket.getPeerCertificate?.();
  const presented = !!cert && Object.keys(cert).length > 0;
  if (!presented) return { authorized: false, reason: "no client certificate" };
  const subject = typeof cert.subject?.CN === "string" ? cert.subject.CN : undefined;
  return socket.authorized
    ? {
      authorized: true,
      ...(subject ? { subject } : {}),
      ...(cert.valid_to ? { validTo: cert.valid_to } : {}),
    }
    : {
      authorized: false,
      reason: `client certificate not trusted (${String(socket.authorizationError ?? "unverified")})`,
      ...(subject ? { subject } : {}),
    };
}

/**
 * The request as a `Request`. Its body is read with backpressure (the socket pauses while nothing consumes it), so
 * a body the app refuses before reading it (413, 429) is never buffered; {@linkcode send} then closes the
 * connection instead of draining it.
 */
function toRequest(req: IncomingMessage, origin: string): { request: Request; unread: () => boolean } {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (Array.isArray(value)) { for (const v of value) headers.append(name, v); }
    else if (value !== undefined) headers.set(name, value);
  }
  const method = req.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  let ended = false;
  const body = hasBody
    ? new ReadableStream<Uint8Array>({
      start(controller) {
        req.on("data", (chunk: Buffer) => {
          controller.enqueue(new Uint8Array(chunk));
          if ((controller.desiredSize ?? 0) <= 0) req.pause();
        });
        req.on("end", () => {
          ended = true;
          controller.close();
        });
        req.on("error", (err) => controller.error(err));
      },
      pull() {
        req.resume();
      },
      cancel() {
        req.destroy();
      },
    })
    : null;
  const request = new Request(new URL(req.url ?? "/", origin), {
    method,
    headers,
    ...(body ? { body, duplex: "half" } as RequestInit : {}),
  });
  return { request, unread: () => hasBody && !ended };
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
  res.writeHead(response.status, headers);
  res.end(body, () => {
    if (close) req.destroy();
  });
}

/** Each request handed to `fetch` with its peer and listener; an answer that fails is a JSON 500, logged. */
function handler(
  options: ServeTlsOptions,
  fetch: (
    request: Request,
    env: { peer?: Peer; listener?: "hooks" | "webhooks" },
  ) => Response | Promise<Response>,
  asked: boolean,
  log: (record: Record<string, unknown>) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const socket = req.socket as TLSSocket;
    const origin = `https://${req.headers.host ?? "localhost"}`;
    const { request, unread } = toRequest(req, origin);
    Promise.resolve()
      .then(() =>
        fetch(request, {
          ...(asked ? { peer: peerOf(socket) } : {}),
          ...(options.listener ? { listener: options.listener } : {}),
        })
      )
      .then((response) => send(res, response, req, unread))
      .catch((err) => {
        log({ msg: "response failed", error: err instanceof Error ? err.message : String(err) });
        if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: "internal error" }));
      });
  };
}

/** Listens, and resolves with the address bound (the port the system chose for port 0). */
function listen(
  server: Server,
  options: ServeTlsOptions,
): Promise<{ hostname: string; port: number }> {
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

/**
 * Serves `fetch` over HTTPS. `fetch` receives the request and `{ peer }` (undefined unless a client CA is set).
 * A key pair that fails to load at a reload is logged and the current one kept; at start it throws.
 *
 * @example
 * ```ts
 * const server = serveTls({ hostname: "0.0.0.0", port: 8443, certFile, keyFile, clientCaFile, reloadSeconds: 10 },
 *   (req, env) => app.fetch(req, env));
 * ```
 */
export function serveTls(
  options: ServeTlsOptions,
  fetch: (
    request: Request,
    env: { peer?: Peer; listener?: "hooks" | "webhooks" },
  ) => Response | Promise<Response>,
): TlsServer {
  const readFile = options.readFile ?? ((p: string) => Deno.readTextFileSync(p));
  const log = options.log ?? (() => {});
  const asked = options.clientCaFile !== undefined;
  let current = read(options, readFile);
  const settings = {
    ...current,
    // Ask for a certificate but let the handshake finish: the app answers 403 with a reason, and probes and the
    // API server's admission calls (which present none) still reach the routes that do not need one.
    requestCert: asked,
    rejectUnauthorized: false,
  };
  const handle = handler(options, fetch, asked, log);
  const server = https.createServer(settings, handle);
  const ready = listen(server, options);
  function reload(): boolean {
    let next: Material;
    try {
      next = read(options, readFile);
    } catch (err) {
      log({ msg: "TLS files not reloaded", error: err instanceof Error ? err.message : String(err) });
      return false;
    }
    if (next.cert === current.cert && next.key === current.key && next.ca === current.ca) return false;
    try {
      server.setSecureContext({ ...next });
    } catch (err) {
      // Half-written files (a certificate from the new pair, the key from the old) fail here; the next check
      // sees the whole pair.
      log({ msg: "TLS key pair not swapped", error: err instanceof Error ? err.message : String(err) });
      return false;
    }
    current = next;
    log({ msg: "TLS key pair reloaded", certFile: options.certFile });
    return true;
  }

  const timer = options.reloadSeconds > 0 ? setInterval(reload, options.reloadSeconds * 1000) : undefined;
  return {
    ready,
    reload,
    shutdown() {
      if (timer !== undefined) clearInterval(timer);
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
      });
    },
  };
}
