/**
 * One more hook route for the isolation tests, `/hooks/faulty/sync`, whose parent's name says how it fails:
 * `hog` allocates until its heap runs out, `boom` throws, `slow` runs for two seconds, anything else answers.
 * `faulty_worker_fixture.ts` serves it beside every hook route, as `worker.ts` serves those.
 */
import type { Hono } from "hono";
import { type AppEnv, bindComposite } from "../../lib/http/mod.ts";

/** `/hooks/faulty/sync`, failing as its parent's name says. */
export function registerFaultyRoutes(app: Hono<AppEnv>): void {
  app.post(
    "/hooks/faulty/sync",
    bindComposite((request) => {
      const name = request.parent.metadata.name;
      if (name === "hog") {
        const held: unknown[] = [];
        for (;;) held.push({ n: held.length, text: `${"x".repeat(200)}${held.length}` });
      }
      if (name === "boom") throw new Error("boom");
      if (name === "slow") {
        const until = performance.now() + 2000;
        while (performance.now() < until) { /* busy, as a pathological input would keep it */ }
      }
      return { status: { answered: name }, children: [] };
    }),
  );
}
