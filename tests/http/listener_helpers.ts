/**
 * What the listener tests share: the service's app behind a real listener (`serve`, over TLS with the test PKI in
 * `tls/`, or plain HTTP), and raw clients that hold connections the way a hostile caller does. The PKI is a CA and
 * a serving pair for 127.0.0.1, valid for a hundred years; the CA's key was discarded once it signed the pair.
 *
 * @module
 */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { type AppOptions, createApp, type HookService } from "../../lib/http/mod.ts";
import { type ConnectionLimits, type Listener, serve } from "../../lib/listener/mod.ts";
import { TEST_EPOCH } from "../../lib/testing/mod.ts";

const pki = (name: string) => new URL(`./tls/${name}`, import.meta.url).pathname;
/** The test CA, which signed the listener's pair. */
export const CA: string = Deno.readTextFileSync(pki("ca.crt"));

/** Deadlines short enough for a test, long enough for a loaded machine: the tests wait many times longer. */
export const TEST_LIMITS: ConnectionLimits = {
  maxConnections: 64,
  handshakeMs: 600,
  headerMs: 1000,
  idleMs: 600,
  bodyMs: 1000,
};

/** A running listener in front of the service's app. */
export interface Served {
  readonly port: number;
  readonly listener: Listener;
  readonly service: HookService;
  stop(): Promise<void>;
}

/** The service's app (every hook and webhook) behind a listener on 127.0.0.1, TLS unless `plain`. */
export async function served(
  o: { limits?: Partial<ConnectionLimits>; plain?: boolean; app?: Partial<AppOptions> } = {},
): Promise<Served> {
  const service = createApp({
    bodyLimitBytes: 16 * 1024 * 1024,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    clock: () => TEST_EPOCH,
    webhookBodyLimitBytes: 1024 * 1024,
    webhookConcurrency: 4,
    webhookQueueBytes: 16 * 1024 * 1024,
    bodyReadSeconds: { hooks: 1, webhooks: 1 },
    ...o.app,
  });
  const listener = serve({
    hostname: "127.0.0.1",
    port: 0,
    limits: { ...TEST_LIMITS, ...o.limits },
    ...(o.plain
      ? {}
      : { tls: { certFile: pki("server.crt"), keyFile: pki("server.key"), reloadSeconds: 0 } }),
  }, (req, env) => service.app.fetch(req, env));
  const { port } = await listener.ready;
  return { port, listener, service, stop: () => listener.shutdown() };
}

/** A connection to `port`: TLS (its handshake done unless `handshake` is false) or plain TCP. */
export async function connect(
  port: number,
  o: { plain?: boolean; handshake?: boolean } = {},
): Promise<Deno.Conn> {
  if (o.plain) return await Deno.connect({ hostname: "127.0.0.1", port });
  const conn = await Deno.connectTls({ hostname: "127.0.0.1", port, caCerts: [CA] });
  if (o.handshake !== false) await conn.handshake();
  return conn;
}

/** A TCP connection to a TLS port that never starts its handshake (or sends `prefix` of one). */
export async function connectRaw(port: number, prefix?: Uint8Array): Promise<Deno.Conn> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  if (prefix) await writeAll(conn, prefix);
  return conn;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Reads `conn` until the server closes it or `ms` pass: `closed` (with what it sent before), or `open`. The tests
 * wait many times a deadline, so that a loaded machine does not fail them; before the guard, they stayed open.
 */
export async function ending(conn: Deno.Conn, ms: number): Promise<{ end: "closed" | "open"; text: string }> {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reading = (async () => {
    const buf = new Uint8Array(16 * 1024);
    try {
      for (;;) {
        const n = await conn.read(buf);
        if (n === null) return "closed" as const;
        chunks.push(decoder.decode(buf.subarray(0, n), { stream: true }));
      }
    } catch {
      return "closed" as const;
    }
  })();
  const end = await Promise.race([
    reading,
    new Promise<"open">((r) => (timer = setTimeout(() => r("open"), ms))),
  ]);
  clearTimeout(timer);
  if (end === "open") {
    close(conn);
    await reading;
  }
  return { end, text: chunks.join("") };
}

/** Writes all of `bytes` (a write may take only part); the bytes written. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array | string): Promise<number> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  let at = 0;
  while (at < data.length) at += await conn.write(data.subarray(at));
  return at;
}

/** Closes `conn` if it is still open. */
export function close(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed */ }
}

/** Writes `text` a byte every `everyMs` until the server closes the connection or `stop()` is called. */
export function trickle(
  conn: Deno.Conn,
  text: string,
  everyMs: number,
): { stop(): void; done: Promise<void> } {
  let running = true;
  const bytes = new TextEncoder().encode(text);
  const done = (async () => {
    for (let i = 0; running; i = (i + 1) % bytes.length) {
      try {
        await conn.write(bytes.subarray(i, i + 1));
      } catch {
        return;
      }
      await sleep(everyMs);
    }
  })();
  return { stop: () => void (running = false), done };
}

/** The first line of an HTTP answer (`HTTP/1.1 200 OK`), or "" when none came. */
export function statusLine(text: string): string {
  return text.split("\r\n")[0] ?? "";
}

/** An HTTP/1.1 POST's head for `path`, with `headers`. */
export function head(path: string, headers: Record<string, string>): string {
  const lines = Object.entries({ host: "127.0.0.1", "content-type": "application/json", ...headers })
    .map(([k, v]) => `${k}: ${v}\r\n`).join("");
  return `POST ${path} HTTP/1.1\r\n${lines}\r\n`;
}

/** One whole request on a fresh client (as the API server sends a review): its status and body. */
export async function fetchOnce(
  port: number,
  path: string,
  body?: string,
  o: { plain?: boolean } = {},
): Promise<{ status: number; text: string }> {
  const client = Deno.createHttpClient(o.plain ? {} : { caCerts: [CA] });
  try {
    const res = await fetch(`${o.plain ? "http" : "https"}://127.0.0.1:${port}${path}`, {
      client,
      ...(body === undefined
        ? {}
        : { method: "POST", headers: { "content-type": "application/json" }, body }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, text: await res.text() };
  } finally {
    client.close();
  }
}

/**
 * A Kubernetes reader whose lists wait until `answer()` (then none): a review that reads holds its place at the
 * door, being decided, for as long as the test likes. `asked()` counts the lists begun.
 */
export function heldKube(): {
  kube: { get(): Promise<unknown>; list(): Promise<unknown[]>; write(): Promise<unknown> };
  asked(): number;
  answer(): void;
} {
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  let asked = 0;
  return {
    kube: {
      // A ProviderConfig delete reads lists and one live page (its TenantClusters' count): all held alike.
      get: () => (asked++, answered.then(() => undefined)),
      list: () => (asked++, answered.then(() => [])),
      write: () => Promise.reject(new Error("no write expected")),
    },
    asked: () => asked,
    answer: () => answer(),
  };
}

export { sleep };
