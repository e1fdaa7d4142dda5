/**
 * A hook worker: the same app as the main thread (every hook route, the same validation and error answers), run
 * on one request at a time that the pool hands over. The main thread keeps probes, metrics and logging.
 *
 * @module
 */
/// <reference lib="deno.worker" />
import { HOOK_ROUTES } from "./hooks/mod.ts";
import type { HookConfig } from "./lib/hook_context/mod.ts";
import {
  createApp,
  type FromWorker,
  type LogRecord,
  type OffloadReply,
  type ToWorker,
} from "./lib/http/mod.ts";
import type { Signal } from "./lib/signals/mod.ts";

/** What the main thread sends once: the app's options that are data. */
export interface WorkerInit {
  readonly bodyLimitBytes: number;
  readonly clockOverride: boolean;
  readonly hookConfig: HookConfig;
}

let now = new Date(0);
let last: LogRecord | undefined;
let signals: readonly Signal[] | undefined;
let service: ReturnType<typeof createApp> | undefined;

function reply(message: FromWorker): void {
  self.postMessage(message);
}

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const msg = event.data;
  if (msg.type === "init") {
    const init = msg.options as WorkerInit;
    service = createApp({
      ...init,
      routes: HOOK_ROUTES,
      clock: () => now,
      log: (record) => (last = record),
      onSignals: (s) => (signals = s),
    });
    return reply({ type: "ready" });
  }
  const { request } = msg;
  now = new Date(request.now);
  last = undefined;
  signals = undefined;
  const res = await service!.app.request(request.route, {
    method: "POST",
    headers: request.headers,
    body: new Uint8Array(request.body),
  });
  const body = await res.text();
  // The app's log line for this request (written by its middleware before `request` resolved).
  const record = last as LogRecord | undefined;
  const said = signals as readonly Signal[] | undefined;
  const out: OffloadReply = {
    status: res.status,
    body,
    ...(record?.parent ? { subject: record.parent as OffloadReply["subject"] } : {}),
    ...(typeof record?.error === "string" ? { failure: record.error } : {}),
    ...(said?.length ? { signals: said } : {}),
  };
  reply({ type: "reply", id: msg.id, reply: out });
};
