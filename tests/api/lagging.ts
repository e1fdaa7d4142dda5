/**
 * A kube client whose watch events arrive late, for the API server tier's caches that lag.
 *
 * @module
 */
import type { FullKubeClient } from "../../lib/kube/mod.ts";

/**
 * A client whose watch events arrive `ms` late, each at its own time plus `ms` (a cache that lags, not one that
 * slows down).
 */
export function lagging(client: FullKubeClient, ms: number): FullKubeClient {
  return {
    ...client,
    async stream(path, signal) {
      const res = await client.stream(path, signal);
      if (!path.includes("watch=1")) return res;
      const reader = res.body!.getReader();
      const later = (f: () => void) =>
        setTimeout(() => {
          try {
            f();
          } catch { /* cancelled */ }
        }, ms);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          (async () => {
            try {
              for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                later(() => controller.enqueue(value));
              }
              later(() => controller.close());
            } catch (err) {
              later(() => controller.error(err));
            }
          })();
        },
        cancel: () => reader.cancel(),
      });
      return new Response(body, { status: res.status, headers: res.headers });
    },
  };
}
