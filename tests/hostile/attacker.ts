/**
 * The attacker of the hostile tier, run as a worker of its own: it builds the corpus's bodies, sends them in bursts
 * and trickles bodies in, on its own thread and event loop. In the test's thread its work (tens of megabytes to
 * build and encrypt each round) would hold the benign team's calls there, and their latencies would measure the
 * attacker's client, not the service; in a cluster the attacker is not Metacontroller or the API server either.
 *
 * Told `{ type: "attack", ... }`, it posts `{ type: "started" }` once its bodies are built and it sends the first
 * round, `{ type: "ended" }` after the last, and `{ type: "done", ... }` with what it saw.
 *
 * @module
 */
import { client, pki } from "../api/shipped.ts";
import { type Attack, CORPUS } from "./corpus.ts";

/** What the attacker is told. */
export interface AttackOrder {
  readonly type: "attack";
  readonly hooks: string;
  readonly webhooks: string;
  readonly attackMs: number;
  readonly roundMs: number;
  readonly slowBodies: number;
}

/** What the attacker saw: rounds sent, each attack's answers by status, the wrong ones, the trickled bodies' answers. */
export interface AttackReport {
  readonly type: "done";
  readonly rounds: number;
  readonly answers: Record<string, Record<string, number>>;
  readonly wrong: string[];
  readonly slowAnswers: string[];
}

type Answers = Map<string, Map<number, number>>;

function count(answers: Answers, name: string, status: number): void {
  const seen = answers.get(name) ?? new Map<number, number>();
  seen.set(status, (seen.get(status) ?? 0) + 1);
  answers.set(name, seen);
}

/** One hostile call; the answer is counted, and said when it is not right for it. */
async function one(order: AttackOrder, a: Attack, body: Uint8Array, answers: Answers): Promise<string[]> {
  const c = client(a.as);
  try {
    const res = await fetch(`${a.listener === "hooks" ? order.hooks : order.webhooks}${a.path}`, {
      client: c,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: body as Uint8Array<ArrayBuffer>,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    count(answers, a.name, res.status);
    const wrong = a.expect.includes(res.status) ? [] : [`${a.name}: ${res.status} ${text.slice(0, 300)}`];
    if (a.name.includes("80,000 addons") && res.status === 200) {
      const r = JSON.parse(text).response;
      if (
        r.allowed !== false || (r.status?.details?.causes?.length ?? 0) > 16 || r.status.message.length > 4096
      ) {
        wrong.push(`${a.name}: an unbounded refusal`);
      }
    }
    return wrong;
  } catch (err) {
    // The service may close a connection whose body it refused unread: that is an answer too ("fetch failed").
    count(answers, a.name, 0);
    return /connection|reset|closed|broken pipe|fetch failed/i.test(String(err)) ? [] : [`${a.name}: ${err}`];
  } finally {
    c.close();
  }
}

/** Opens `n` connections to the webhook listener that send headers and then a byte every half second. */
function slowBodies(webhooks: string, n: number) {
  const url = new URL(webhooks);
  const results: string[] = [];
  let running = true;
  const conns: Deno.TlsConn[] = [];
  const done = Promise.all(Array.from({ length: n }, async () => {
    const conn = await Deno.connectTls({
      hostname: url.hostname,
      port: Number(url.port),
      caCerts: [pki("ca.crt")],
    });
    conns.push(conn);
    const w = conn.writable.getWriter();
    await w.write(new TextEncoder().encode(
      `POST /webhooks/validate/providerconfig HTTP/1.1\r\nHost: ${url.host}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`,
    ));
    const reading = new Response(conn.readable).text().then(
      (t) => results.push(t.split("\r\n")[0]!),
      () => {},
    );
    while (running) {
      await new Promise((r) => setTimeout(r, 500));
      try {
        await w.write(new TextEncoder().encode(" "));
      } catch {
        break; // closed by the service: its answer is in `results`
      }
    }
    await Promise.race([reading, new Promise((r) => setTimeout(r, 1000))]);
  }));
  return {
    results,
    async stop() {
      running = false;
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      await done;
    },
  };
}

/** Sends the corpus in rounds for `attackMs`, with bodies trickling throughout. */
async function attack(order: AttackOrder, post: (message: unknown) => void): Promise<AttackReport> {
  const bodies = CORPUS.map((a) => a.body());
  const answers: Answers = new Map();
  const wrong: string[] = [];
  post({ type: "started" });
  const from = performance.now();
  const slow = slowBodies(order.webhooks, order.slowBodies);
  let rounds = 0;
  while (performance.now() - from < order.attackMs) {
    const roundStart = performance.now();
    const calls = CORPUS.flatMap((a, i) =>
      Array.from({ length: a.burst }, () => one(order, a, bodies[i]!, answers))
    );
    wrong.push(...(await Promise.all(calls)).flat());
    rounds++;
    await new Promise((r) => setTimeout(r, Math.max(0, order.roundMs - (performance.now() - roundStart))));
  }
  post({ type: "ended" });
  await slow.stop();
  return {
    type: "done",
    rounds,
    answers: Object.fromEntries([...answers].map(([k, v]) => [k, Object.fromEntries(v)])),
    wrong,
    slowAnswers: slow.results,
  };
}

/** Runs the attacker in a worker: `attacker.postMessage(order)`, and read its messages. */
export function startAttacker(
  order: AttackOrder,
  on: { started(): void; ended(): void },
): Promise<AttackReport> {
  const worker = new Worker(import.meta.url, { type: "module" });
  return new Promise<AttackReport>((resolve, reject) => {
    worker.onerror = (e) => {
      e.preventDefault();
      worker.terminate();
      reject(new Error(`the attacker failed: ${e.message}`));
    };
    worker.onmessage = (e: MessageEvent<{ type: string }>) => {
      if (e.data.type === "started") on.started();
      else if (e.data.type === "ended") on.ended();
      else {
        worker.terminate();
        resolve(e.data as AttackReport);
      }
    };
    worker.postMessage(order);
  });
}

// deno-lint-ignore no-explicit-any
const scope = globalThis as any;
if (typeof scope.WorkerGlobalScope !== "undefined" && scope instanceof scope.WorkerGlobalScope) {
  scope.onmessage = async (e: MessageEvent<AttackOrder>) => {
    scope.postMessage(await attack(e.data, (m) => scope.postMessage(m)));
  };
}
