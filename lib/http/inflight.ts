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
  /** Requests in flight now. */
  readonly count: number;
}

/** Creates an {@linkcode InflightTracker}. */
export function createInflightTracker(): InflightTracker {
  let count = 0;
  let closing = false;
  let idle: (() => void) | undefined;
  return {
    get count() {
      return count;
    },
    wrap(handler) {
      return async (req, ...rest) => {
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
  };
}
