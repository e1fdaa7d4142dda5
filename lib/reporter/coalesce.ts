/**
 * Coalesced runs of one task: many requests, few runs, none lost.
 *
 * @module
 */

/** A coalesced task. */
export interface Coalesced {
  /** Asks for a run that starts after this call. */
  request(): void;
  /** Resolves once no run is queued or running. */
  idle(): Promise<void>;
}

/** Options of {@linkcode coalesce}: the clock and the wait, injectable for tests. */
export interface CoalesceOptions {
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called with a run's error (the next request runs again). */
  readonly onError?: (error: unknown) => void;
}

/**
 * Runs `task` on request. Requests while a run is queued are covered by it; a request while a run is in progress
 * queues one more, so every request is followed by a run that starts after it. Runs start at least `intervalMs`
 * apart: a task that reads everything, asked for by every event of a burst, runs a bounded number of times.
 *
 * @example
 * ```ts
 * const reconcile = coalesce(() => readEverything(), 1000);
 * watch.onChange(() => reconcile.request());
 * ```
 */
export function coalesce(
  task: () => Promise<void>,
  intervalMs: number,
  options: CoalesceOptions = {},
): Coalesced {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let queued = false;
  let lastStart = -Infinity;
  let chain: Promise<void> = Promise.resolve();
  return {
    request() {
      if (queued) return;
      queued = true;
      chain = chain.then(async () => {
        const wait = lastStart + intervalMs - now();
        if (wait > 0) await sleep(wait);
        queued = false;
        lastStart = now();
        await task();
      }).catch((err) => options.onError?.(err));
    },
    async idle() {
      // A request during a run extends the chain: wait until it stops growing.
      for (let seen = chain;; seen = chain) {
        await seen;
        if (seen === chain) return;
      }
    },
  };
}
