import client from "prom-client";
import { registerBuildInfo } from "../build/mod.ts";

/** Request metrics of the hook service, kept in a registry of its own (one per app, so tests stay apart). */
export interface HttpMetrics {
  readonly registry: client.Registry;
  observe(route: string, method: string, status: number, seconds: number): void;
}

/** Buckets from 1 ms to 10 s: hooks answer in milliseconds, and Metacontroller gives up at 10 s. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Creates the request counter (`butler_http_requests_total{route,method,status}`) and latency histogram
 * (`butler_http_request_duration_seconds{route}`) in a fresh registry, with `butler_build_info{component="hooks"}`.
 */
export function createHttpMetrics(): HttpMetrics {
  const registry = new client.Registry();
  registerBuildInfo(registry, "hooks");
  const requests = new client.Counter({
    name: "butler_http_requests_total",
    help: "HTTP requests served, by route, method and status code.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new client.Histogram({
    name: "butler_http_request_duration_seconds",
    help: "HTTP request latency in seconds, by route.",
    labelNames: ["route"] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  return {
    registry,
    observe(route, method, status, seconds) {
      requests.inc({ route, method, status: String(status) });
      duration.observe({ route }, seconds);
    },
  };
}
