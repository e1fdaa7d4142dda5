/**
 * Hook workers as `node:worker_threads` workers with resource limits. A Web Worker that reaches the heap limit
 * ends the whole process (V8's out-of-memory is fatal: measured, exit 133 with the manifests' 192 MB cap); a
 * worker with `resourceLimits` is terminated alone (`ERR_WORKER_OUT_OF_MEMORY`) and the pool replaces it. The
 * limits are the process's own (`DENO_V8_FLAGS`, which Deno applies to every isolate): what they add is that
 * reaching them stops the worker, not the process.
 *
 * @module
 */
import { Worker } from "node:worker_threads";
import { getHeapStatistics } from "node:v8";
import type { FromWorker, ToWorker, WorkerLike } from "./pool.ts";

const MIB = 1024 * 1024;

/** The heap limits a hook worker runs under: the process's old-generation limit, in MiB. */
export function workerHeapLimits(): { maxOldGenerationSizeMb: number } {
  return { maxOldGenerationSizeMb: Math.max(16, Math.floor(getHeapStatistics().heap_size_limit / MIB)) };
}

/**
 * Starts the module at `url` as a worker whose heap is limited, speaking the pool's {@linkcode WorkerLike}.
 *
 * @example
 * ```ts
 * const pool = createWorkerPool({ workers: 1, queueLimit: 4, init, spawn: () => spawnIsolate(workerUrl) });
 * ```
 */
export function spawnIsolate(url: URL, limits = workerHeapLimits()): WorkerLike {
  const worker = new Worker(url, { resourceLimits: limits });
  let stopped = false;
  const like: WorkerLike = {
    onmessage: null,
    onerror: null,
    postMessage(message: ToWorker, transfer?: Transferable[]) {
      if (!stopped) worker.postMessage(message, transfer as never);
    },
    terminate() {
      stopped = true;
      void worker.terminate();
    },
  };
  worker.on("message", (data: FromWorker) => like.onmessage?.({ data } as MessageEvent<FromWorker>));
  const fail = (message: string) => {
    if (stopped) return;
    stopped = true;
    like.onerror?.({ message, preventDefault() {} } as ErrorEvent);
  };
  worker.on(
    "error",
    (err: Error & { code?: string }) =>
      fail(err.code === "ERR_WORKER_OUT_OF_MEMORY" ? `out of memory: ${err.message}` : err.message),
  );
  // A worker that ends on its own (not terminated by the pool) is as good as crashed.
  worker.on("exit", (code: number) => fail(`the worker exited with code ${code}`));
  return like;
}
