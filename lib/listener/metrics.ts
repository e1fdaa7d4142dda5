/**
 * The listeners' connections as Prometheus series, read from their guards when scraped.
 *
 * @module
 */
import client from "prom-client";
import type { ConnectionStats } from "./guard.ts";

/**
 * Registers `butler_connections` (open now, by listener), `butler_connections_closed_total` (by listener and why:
 * `evicted` for a newcomer at the cap, `refused` at once, or the step whose deadline passed) and
 * `butler_connections_read_bytes_total` (by listener) on `registry`.
 *
 * @example
 * ```ts
 * registerConnectionMetrics(registry, { hooks: () => hooks.guard.stats(), webhooks: () => webhooks.guard.stats() });
 * ```
 */
export function registerConnectionMetrics(
  registry: client.Registry,
  listeners: Readonly<Record<string, () => ConnectionStats>>,
): void {
  new client.Gauge({
    name: "butler_connections",
    help: "Connections open now, by listener.",
    labelNames: ["listener"],
    registers: [registry],
    collect() {
      for (const [listener, stats] of Object.entries(listeners)) this.set({ listener }, stats().open);
    },
  });
  new client.Counter({
    name: "butler_connections_closed_total",
    help:
      "Connections the listener closed: evicted (one waiting on its caller, for a newcomer at the cap), refused (a newcomer, every open one busy), or the step whose deadline passed (handshake, header, body, writing, idle).",
    labelNames: ["listener", "reason"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [listener, read] of Object.entries(listeners)) {
        const s = read();
        this.inc({ listener, reason: "evicted" }, s.evicted);
        this.inc({ listener, reason: "refused" }, s.refused);
        for (const [reason, n] of Object.entries(s.expired)) if (n > 0) this.inc({ listener, reason }, n);
      }
    },
  });
  new client.Counter({
    name: "butler_connections_read_bytes_total",
    help: "Bytes read from the listener's connections: what callers sent that the process took in.",
    labelNames: ["listener"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [listener, read] of Object.entries(listeners)) this.inc({ listener }, read().bytesRead);
    },
  });
}
