/**
 * Tenants at work during an upgrade: TenantClusters and Cluster API IPAddressClaims created and deleted on a
 * steady beat, each deleted a few beats after its create, so that allocations, releases and finalizers are in
 * flight while the hook service rolls.
 *
 * @module
 */
import { kubectl } from "../api/cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** What the churn did. */
export interface ChurnReport {
  readonly created: string[];
  readonly deleted: string[];
  /** Creates and deletes the API server refused or could not do, when (ms since the epoch), with its words. */
  readonly errors: { at: number; text: string }[];
}

/** Starts creating `make(i)` objects every `beatMs` and deleting each `keep` beats later, until `stop()`. */
export function startChurn(
  options: { make: (i: number) => Obj[]; keep: number; beatMs: number; prefix: string },
): { stop(): Promise<ChurnReport> } {
  let running = true;
  const created: string[] = [];
  const deleted: string[] = [];
  const errors: { at: number; text: string }[] = [];
  const ref = (
    o: Obj,
  ) => [
    o.kind.toLowerCase() === "ipaddressclaim"
      ? "ipaddressclaims.ipam.cluster.x-k8s.io"
      : `${o.kind.toLowerCase()}s.butler.butlerlabs.dev`,
    o.metadata.name,
    "-n",
    o.metadata.namespace,
  ];
  const live: Obj[][] = [];
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const started = Date.now();
      const batch = options.make(i);
      const r = await kubectl(["create", "-f", "-"], {
        stdin: batch.map((o) => JSON.stringify(o)).join("\n"),
      });
      if (r.code === 0) created.push(...batch.map((o) => `${o.kind}/${o.metadata.name}`));
      else errors.push({ at: started, text: `create ${options.prefix}-${i}: ${r.stderr.trim()}` });
      live.push(r.code === 0 ? batch : []);
      if (live.length > options.keep) {
        for (const o of live.shift()!) {
          const d = await kubectl(["delete", ...ref(o), "--wait=false"]);
          if (d.code === 0) deleted.push(`${o.kind}/${o.metadata.name}`);
          else {errors.push({
              at: Date.now(),
              text: `delete ${o.kind}/${o.metadata.name}: ${d.stderr.trim()}`,
            });}
        }
      }
      await new Promise((res) => setTimeout(res, Math.max(0, options.beatMs - (Date.now() - started))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { created, deleted, errors };
    },
  };
}
