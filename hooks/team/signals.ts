import type { CompositeRequest, CompositeResponse } from "../../lib/contract/mod.ts";
import type { Signal } from "../../lib/signals/mod.ts";

/** `status.resourceUsage` utilisation keys and the resource each is reported as. */
const UTILIZATION = {
  clusterUtilization: "clusters",
  nodeUtilization: "nodes",
  cpuUtilization: "cpu",
  memoryUtilization: "memory",
  storageUtilization: "storage",
} as const;

/**
 * The signal of a Team sync: its quota utilisation per limited resource and whether the quota is exceeded, or
 * `gone` once finalized.
 *
 * @example
 * ```ts
 * teamSignals(request, { status: { resourceUsage: { clusterUtilization: 60 }, quotaStatus: "OK" }, children: [] });
 * // [{ signal: "team", name: "development", utilization: { clusters: 60 }, quotaStatus: "OK" }]
 * ```
 */
export function teamSignals(request: CompositeRequest, response: CompositeResponse): Signal[] {
  const name = request.parent.metadata.name;
  if (response.finalized) return [{ signal: "team", name, gone: true }];
  const status = (response.status ?? {}) as {
    resourceUsage?: Record<string, unknown>;
    quotaStatus?: unknown;
    environments?: unknown;
  };
  const usage = status.resourceUsage ?? {};
  const utilization = Object.fromEntries(
    Object.entries(UTILIZATION).flatMap(([key, resource]) =>
      typeof usage[key] === "number" ? [[resource, usage[key] as number]] : []
    ),
  );
  const environments = Object.fromEntries(
    (Array.isArray(status.environments) ? status.environments : []).flatMap((e) =>
      typeof e?.name === "string" && typeof e.clusterUtilization === "number"
        ? [[e.name, e.clusterUtilization]]
        : []
    ),
  );
  return [{
    signal: "team",
    name,
    utilization,
    ...(Object.keys(environments).length ? { environments } : {}),
    ...(typeof status.quotaStatus === "string" ? { quotaStatus: status.quotaStatus } : {}),
  }];
}
