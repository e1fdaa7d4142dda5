/**
 * The service's own gauges and counters beside the HTTP ones: the worker pool, the admission cache, and whether
 * admission is authenticated, each read when scraped.
 *
 * @module
 */
import client from "prom-client";
import type { KubeCacheStats } from "../kube/mod.ts";
import type { Offload } from "../isolation/mod.ts";

/** The worker pool's gauges: each name, its help, and what of the pool's stats it reads. */
const POOL_GAUGES: readonly [string, string, (s: ReturnType<Offload["stats"]>) => number][] = [
  ["butler_hook_workers_busy", "Hook workers running a request now.", (s) => s.busy],
  [
    "butler_hook_queue_length",
    "Hook requests waiting for a worker now (beyond HOOK_QUEUE_LIMIT they are answered 429).",
    (s) => s.queued,
  ],
  [
    "butler_hook_workers_unavailable",
    "Hook workers that could not be replaced (the service reports itself unhealthy).",
    (s) => s.unavailable ?? 0,
  ],
  [
    "butler_hook_parents_poisoned",
    "Parents whose hook kept failing (out of memory, deadline, internal error), answered with their children kept and Ready False (HookStopped) instead of running it.",
    (s) => s.poisoned ?? 0,
  ],
];

/** The worker pool's deadline, load and health, read from the pool when scraped. */
export function registerPoolMetrics(registry: client.Registry, offload: Offload): void {
  new client.Counter({
    name: "butler_hook_deadline_exceeded_total",
    help:
      "Hook requests stopped at their deadline (their worker terminated and replaced, the request answered 503).",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(offload.stats().timedOut ?? 0);
    },
  });
  for (const [name, help, read] of POOL_GAUGES) {
    new client.Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read(offload.stats()));
      },
    });
  }
}

/** The admission cache's objects by resource, and its reads by where they were answered, read when scraped. */
export function registerCacheMetrics(registry: client.Registry, stats: () => KubeCacheStats): void {
  new client.Gauge({
    name: "butler_admission_cache_objects",
    help: "Objects in the admission webhooks' watch cache, by resource.",
    labelNames: ["resource"],
    registers: [registry],
    collect() {
      for (const [resource, n] of Object.entries(stats().objects)) this.set({ resource }, n);
    },
  });
  new client.Counter({
    name: "butler_admission_cache_reads_total",
    help:
      "Admission reads answered from the watch cache (memory) or from the API (api: uncached, live or stale).",
    labelNames: ["source"],
    registers: [registry],
    collect() {
      const s = stats();
      this.reset();
      this.inc({ source: "memory" }, s.hits);
      this.inc({ source: "api" }, s.misses);
    },
  });
}

/** `butler_admission_authenticated`: whether admission reviews are authenticated, and admission writes. */
export function registerAdmissionAuthenticated(registry: client.Registry, writes: boolean): void {
  new client.Gauge({
    name: "butler_admission_authenticated",
    help:
      "1 when admission reviews are authenticated (the API server's client certificate) and admission writes its quota ledger and pool registry; 0 when any caller may send one, and admission writes nothing.",
    registers: [registry],
  }).set(writes ? 1 : 0);
}
