/**
 * Counts requests in flight so shutdown can wait for them. Deno's `server.shutdown()` alone closes the body
 * stream of a request still uploading; this tracker lets the service stop taking new work first (503,
 * `Connection: close`), wait for what it started, and only then close the listener.
 */
export interface InflightTracker {
  /** Wraps a fetch handler: counts its requests, and answers 503 once closing. */
  wrap<A extends unknown[]>(
    handler: (req: Request, ...rest: A) => Response | Promise<Response>,
  ): (req: Request, ...rest: A) => Promise<Response>;
  /** Stops taking new requests; resolves when none is in flight. */
  close(): Promise<void>;
  /**
   * After {@linkcode close}: resolves once no request has arrived for `quietMs` and none is in flight, or after
   * `maxMs`. Requests the server has received but not yet handed to the handler are invisible here; waiting for
   * a quiet moment lets them arrive and be answered 503 (`Connection: close`) instead of being reset when the
   * listener closes.
   */
  settle(quietMs: number, maxMs: number): Promise<void>;
  /** Requests in flight now. */
  readonly count: number;
}

/** Creates an {@linkcode InflightTracker}. */
export function createInflightTracker(): InflightTracker {
  let count = 0;
  let started = 0;
  let closing = false;
  let idle: (() => void) | undefined;
  return {
    get count() {
      return count;
    },
    wrap(handler) {
      return async (req, ...rest) => {
        started++;
        if (closing) {
          return new Response(JSON.stringify({ error: "shutting down" }), {
            status: 503,
            headers: { "content-type": "application/json", connection: "close" },
          });
        }
        count++;
        try {
          return await handler(req, ...rest);
        } finally {
          if (--count === 0) idle?.();
        }
      };
    },
    close() {
      closing = true;
      return count === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve));
    },
    async settle(quietMs, maxMs) {
      const deadline = Date.now() + maxMs;
      let seen = -1;
      while (Date.now() < deadline && (seen !== started || count > 0)) {
        seen = started;
        await new Promise((r) => setTimeout(r, quietMs));
      }
    },
  };
}
