/**
 * The body of a hook worker (`worker.ts`): the same app as the main thread (every hook route, the same validation
 * and error answers), run on one request at a time that the pool hands over. The main thread keeps probes,
 * metrics and logging. Under `node:worker_threads` with resource limits (`isolate.ts`), running out of heap ends
 * this worker, not the process; a body whose parse could not fit its heap is refused before it is parsed; a
 * poisoned parent is answered without running its hook (`poison.ts`).
 *
 * @module
 */
import { parentPort } from "node:worker_threads";
import type { HookConfig } from "../hook_context/mod.ts";
import type { Signal } from "../signals/mod.ts";
import { createApp, type LogRecord, type RouteRegistrar } from "./app.ts";
import { createHeapBudget } from "../foreign/mod.ts";
import type { FromWorker, OffloadReply, PoisonNote, ToWorker } from "../isolation/mod.ts";

/** What the main thread sends once: the app's options that are data. */
export interface WorkerInit {
  readonly bodyLimitBytes: number;
  readonly clockOverride: boolean;
  readonly hookConfig: HookConfig;
}

/** The channel to the pool: `parentPort` under `node:worker_threads`, the global scope under a Web Worker. */
interface Port {
  postMessage(message: FromWorker, transfer?: Transferable[]): void;
  on(event: "message", listener: (message: ToWorker) => void): void;
}

function pool(): Port {
  if (parentPort) return parentPort as unknown as Port;
  const scope = self as unknown as {
    postMessage(m: unknown, t?: Transferable[]): void;
    onmessage(event: MessageEvent<ToWorker>): void;
  };
  return {
    postMessage: (m, t) => scope.postMessage(m, t),
    on: (_, listener) => (scope.onmessage = (event) => listener(event.data)),
  };
}

/**
 * Serves the pool's requests with `routes`: the worker module calls this once.
 *
 * @example
 * ```ts
 * // worker.ts
 * serveHookWorker(HOOK_ROUTES);
 * ```
 */
export function serveHookWorker(routes: readonly RouteRegistrar[]): void {
  const port = pool();
  const poisoned = new Map<string, PoisonNote>();
  let now = new Date(0);
  let last: LogRecord | undefined;
  let signals: readonly Signal[] | undefined;
  let running = -1;
  let answerLimit = Infinity;
  let service: ReturnType<typeof createApp> | undefined;

  const init = (options: WorkerInit) => {
    answerLimit = options.bodyLimitBytes;
    service = createApp({
      ...options,
      routes,
      clock: () => now,
      log: (record) => (last = record),
      onSignals: (s) => (signals = s),
      heapBudget: createHeapBudget(),
      poison: {
        started: (key) => port.postMessage({ type: "started", id: running, key }),
        note: (key, at) => {
          const note = poisoned.get(key);
          if (note && note.until > at.getTime()) return note;
          if (note) poisoned.delete(key);
          return undefined;
        },
      },
    });
  };

  port.on("message", async (msg: ToWorker) => {
    if (msg.type === "poison") return void poisoned.set(msg.key, msg.note);
    if (msg.type === "init") {
      for (const [key, note] of msg.poisoned ?? []) poisoned.set(key, note);
      init(msg.options as WorkerInit);
      return port.postMessage({ type: "ready" });
    }
    const { request } = msg;
    running = msg.id;
    now = new Date(request.now);
    last = undefined;
    signals = undefined;
    const res = await service!.app.request(request.route, {
      method: "POST",
      headers: request.headers,
      body: new Uint8Array(request.body),
    });
    const out = replyOf(new Uint8Array(await res.arrayBuffer()), res.status, last, signals, answerLimit);
    // The answer's bytes are handed over, not copied: the main thread sends them as they are.
    port.postMessage({ type: "reply", id: msg.id, reply: out }, [
      (out.body as Uint8Array).buffer as ArrayBuffer,
    ]);
  });
}

/**
 * The reply to the pool: the answer, what the log line said of it (written by the app's middleware before the
 * request resolved), and its signals. An answer larger than the largest request is not sound, and the main
 * thread must not hold it: it becomes a 500.
 */
function replyOf(
  body: Uint8Array,
  status: number,
  record: LogRecord | undefined,
  signals: readonly Signal[] | undefined,
  limit: number,
): OffloadReply {
  const failure = typeof record?.error === "string" ? record.error : undefined;
  const tooLarge = body.byteLength > limit;
  return {
    status: tooLarge ? 500 : status,
    body: tooLarge
      ? new TextEncoder().encode(JSON.stringify({ error: "internal error: the hook's answer is too large" }))
      : body,
    ...(record?.parent ? { subject: record.parent as OffloadReply["subject"] } : {}),
    ...(tooLarge
      ? { failure: `the hook's answer (${body.byteLength} bytes) is over the limit of ${limit} bytes` }
      : failure
      ? { failure }
      : {}),
    ...(signals?.length && !tooLarge ? { signals } : {}),
  };
}
