/**
 * Runs the NetworkPool sync hook directly (no HTTP) on a pool and the IPAllocations related to it, at a fixed
 * time, as the tests under `tests/networkpool` need it.
 */
import { syncNetworkPool } from "../../hooks/networkpool/mod.ts";
import { KINDS } from "../../lib/butler/mod.ts";
import { DecoratorRequest, type DecoratorResponse } from "../../lib/contract/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook/mod.ts";

/** The pool object's own parts; apiVersion and kind are added. */
export interface PoolObject {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
  status?: unknown;
}

/**
 * Syncs `pool` with `related` IPAllocations keyed `namespace/name`, at 2026-11-21T09:00:00Z unless `now` says.
 *
 * @example
 * ```ts
 * const res = syncPool({ metadata: { name: "p", namespace: "butler-system" }, spec: { cidr: "10.0.0.0/24" } }, {});
 * ```
 */
export function syncPool(
  pool: PoolObject,
  related: Record<string, unknown>,
  now: Date = new Date("2026-11-21T09:00:00Z"),
): DecoratorResponse {
  const request = DecoratorRequest.parse({
    controller: {},
    object: { ...KINDS.NetworkPool, ...pool },
    attachments: {},
    // The wire key spelled out, so these tests do not depend on the code that builds it.
    related: { "IPAllocation.butler.butlerlabs.dev/v1alpha1": related },
    finalizing: false,
  });
  return syncNetworkPool(request, { now, config: DEFAULT_HOOK_CONFIG });
}
