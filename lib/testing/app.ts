import { DEFAULT_HOOK_CONFIG } from "../hook_context/mod.ts";
import type { KubeClient } from "../kube/mod.ts";
import { createApp, type HookService, type LogRecord, type RouteRegistrar } from "../http/mod.ts";

/** The clock of test apps when a request names no time: a fixed instant, so fixtures stay byte-identical. */
export const TEST_EPOCH: Date = new Date("2026-01-01T00:00:00Z");

/**
 * Builds an app for tests: clock override on (the `X-Butler-Now` header wins), fixed fallback clock, log
 * records collected into `logs`.
 */
export function createTestApp(
  routes: readonly RouteRegistrar[],
  options: {
    bodyLimitBytes?: number;
    clockOverride?: boolean;
    clock?: () => Date;
    kube?: KubeClient;
    admissionWrites?: boolean;
  } = {},
): HookService & { logs: LogRecord[] } {
  const logs: LogRecord[] = [];
  const service = createApp({
    bodyLimitBytes: options.bodyLimitBytes ?? 16 * 1024 * 1024,
    clockOverride: options.clockOverride ?? true,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes,
    clock: options.clock ?? (() => TEST_EPOCH),
    log: (r) => logs.push(r),
    ...(options.kube ? { kube: options.kube } : {}),
    ...(options.admissionWrites !== undefined ? { admissionWrites: options.admissionWrites } : {}),
  });
  return { ...service, logs };
}
