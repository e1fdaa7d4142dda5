/**
 * The connection attacker of the hostile tier (issue #55, item 2), run as a worker of its own like `attacker.ts`:
 * for each listener it keeps ten times the listener's connection cap of hostile connections open, each slot one
 * behaviour, reconnecting `reconnectMs` after the service closes it: TLS connections that say nothing (idle), TCP
 * connections that never begin a handshake, headers trickled a byte a second, small bodies trickled a byte a second
 * (declared or chunked), and never-finished chunked bodies pushing 16 KiB every 50 ms. Any pod can do all of it: none
 * presents a client certificate.
 *
 * Told `{ type: "attack", ... }`, it posts `{ type: "started" }` once it begins opening, `{ type: "ended" }` when
 * the attack's time is up, and `{ type: "done", ... }` with what each behaviour saw.
 *
 * @module
 */
import { pki } from "../api/shipped.ts";

/** The behaviours, each a kind of slot. */
export const BEHAVIOURS = [
  "idle",
  "handshake",
  "headers",
  "trickled-body",
  "trickled-chunked",
  "never-finished-chunked",
] as const;
export type Behaviour = typeof BEHAVIOURS[number];

/** What the attacker is told: each listener's URL, how many slots of each behaviour, and for how long. */
export interface ConnectionAttackOrder {
  readonly type: "attack";
  readonly targets: readonly {
    readonly name: string;
    readonly url: string;
    readonly path: string;
    readonly slots: Readonly<Record<Behaviour, number>>;
  }[];
  readonly attackMs: number;
  /** Milliseconds a slot waits after the service closed its connection before it opens the next. */
  readonly reconnectMs: number;
}

/** What one behaviour saw on one listener. */
export interface BehaviourReport {
  slots: number;
  /** Connections opened. */
  opened: number;
  /** Of those, closed by the service before the attack ended. */
  closedByService: number;
  /** The status lines the service answered before closing, by status (`none`: closed without an answer). */
  answers: Record<string, number>;
  /** Connections that could not be opened (refused, reset during the handshake). */
  failedToOpen: number;
}

/** The attacker's report: per listener, per behaviour. */
export interface ConnectionAttackReport {
  readonly type: "done";
  readonly listeners: Record<string, Record<string, BehaviourReport>>;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const encode = (text: string) => new TextEncoder().encode(text);
const chunk = (bytes: number) => `${bytes.toString(16)}\r\n${" ".repeat(bytes)}\r\n`;

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await conn.write(bytes.subarray(at));
}

/** What a slot of `behaviour` sends once connected: its first bytes, then what it repeats and how often. */
function script(behaviour: Behaviour, host: string, path: string): {
  first: string;
  repeat?: Uint8Array;
  everyMs: number;
} {
  const head = (headers: string) =>
    `POST ${path} HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\n${headers}\r\n`;
  switch (behaviour) {
    case "idle":
    case "handshake":
      return { first: "", everyMs: 0 };
    case "headers":
      return {
        first: `GET /readyz HTTP/1.1\r\nhost: ${host}\r\nx-slow: `,
        repeat: encode("a"),
        everyMs: 1000,
      };
    case "trickled-body":
      return { first: head("content-length: 2000\r\n") + "{", repeat: encode(" "), everyMs: 1000 };
    case "trickled-chunked":
      return {
        first: head("transfer-encoding: chunked\r\n") + chunk(1),
        repeat: encode(chunk(1)),
        everyMs: 1000,
      };
    case "never-finished-chunked":
      return { first: head("transfer-encoding: chunked\r\n"), repeat: encode(chunk(16 * 1024)), everyMs: 50 };
  }
}

/** Reads a connection until the service closes it; the first line it answered, or "none". */
async function answerOf(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      if (text.length < 64) text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch { /* reset: closed too */ }
  return /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? "none";
}

/** One slot: connects, sends its script until the service closes it or the attack ends, and again. */
async function slot(
  behaviour: Behaviour,
  target: ConnectionAttackOrder["targets"][number],
  order: ConnectionAttackOrder,
  report: BehaviourReport,
  running: () => boolean,
  ca: string,
): Promise<void> {
  const url = new URL(target.url);
  const at = { hostname: url.hostname, port: Number(url.port) };
  const s = script(behaviour, url.host, target.path);
  while (running()) {
    let conn: Deno.Conn;
    try {
      if (behaviour === "handshake") conn = await Deno.connect(at);
      else {
        const tls = await Deno.connectTls({ ...at, caCerts: [ca] });
        await tls.handshake();
        conn = tls;
      }
    } catch {
      report.failedToOpen++;
      await sleep(order.reconnectMs);
      continue;
    }
    report.opened++;
    let closed = false;
    const answer = answerOf(conn).then((a) => (closed = true, a));
    try {
      if (s.first) await writeAll(conn, encode(s.first));
      while (running() && !closed && s.repeat) {
        await sleep(s.everyMs);
        await writeAll(conn, s.repeat);
      }
    } catch { /* closed by the service */ }
    while (running() && !closed) await sleep(100);
    if (!closed) {
      try {
        conn.close();
      } catch { /* closed */ }
      await answer;
      return;
    }
    const got = await answer;
    report.closedByService++;
    report.answers[got] = (report.answers[got] ?? 0) + 1;
    try {
      conn.close();
    } catch { /* closed */ }
    await sleep(order.reconnectMs);
  }
}

/** Opens every slot (a hundred every 500 ms, so that the opening is itself a flood, not a stampede) and waits. */
async function attack(
  order: ConnectionAttackOrder,
  post: (m: unknown) => void,
): Promise<ConnectionAttackReport> {
  const ca = pki("ca.crt");
  const listeners: ConnectionAttackReport["listeners"] = {};
  let running = true;
  const slots: Promise<void>[] = [];
  post({ type: "started" });
  const from = performance.now();
  for (const target of order.targets) {
    const reports: Record<string, BehaviourReport> = listeners[target.name] = {};
    for (const behaviour of BEHAVIOURS) {
      const report: BehaviourReport = reports[behaviour] = {
        slots: target.slots[behaviour],
        opened: 0,
        closedByService: 0,
        answers: {},
        failedToOpen: 0,
      };
      for (let i = 0; i < target.slots[behaviour]; i++) {
        slots.push(slot(behaviour, target, order, report, () => running, ca));
        if (slots.length % 100 === 0) await sleep(500);
      }
    }
  }
  await sleep(Math.max(0, order.attackMs - (performance.now() - from)));
  post({ type: "ended" });
  running = false;
  await Promise.all(slots);
  return { type: "done", listeners };
}

/** Runs the connection attacker in a worker. */
export function startConnectionAttacker(
  order: ConnectionAttackOrder,
  on: { started(): void; ended(): void },
): Promise<ConnectionAttackReport> {
  const worker = new Worker(import.meta.url, { type: "module" });
  return new Promise<ConnectionAttackReport>((resolve, reject) => {
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(`the connection attacker failed: ${e.message}`));
    };
    worker.onmessage = (e: MessageEvent<{ type: string }>) => {
      if (e.data.type === "started") on.started();
      else if (e.data.type === "ended") on.ended();
      else {
        worker.terminate();
        resolve(e.data as ConnectionAttackReport);
      }
    };
    worker.postMessage(order);
  });
}

// deno-lint-ignore no-explicit-any
const scope = globalThis as any;
if (typeof scope.WorkerGlobalScope !== "undefined" && scope instanceof scope.WorkerGlobalScope) {
  scope.onmessage = async (e: MessageEvent<ConnectionAttackOrder>) => {
    scope.postMessage(await attack(e.data, (m) => scope.postMessage(m)));
  };
}
