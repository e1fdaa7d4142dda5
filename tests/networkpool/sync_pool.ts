/**
 * Runs the NetworkPool sync hook directly (no HTTP) on a pool and the IPAllocations related to it, at a fixed
 * time, as the tests under `tests/networkpool` need it.
 */
import { syncNetworkPool } from "../../hooks/networkpool/mod.ts";
import { KINDS } from "../../lib/butler/mod.ts";
import { CHECKPOINT_ANNOTATION } from "../../lib/api/mod.ts";
import { DecoratorRequest, type DecoratorResponse } from "../../lib/contract/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";

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
    object: { ...KINDS.NetworkPool, ...withCheckpoint(pool) },
    attachments: {},
    // The wire key spelled out, so these tests do not depend on the code that builds it.
    related: { "IPAllocation.butler.butlerlabs.dev/v1alpha1": related },
    finalizing: false,
  });
  return syncNetworkPool(request, { now, config: DEFAULT_HOOK_CONFIG });
}

/**
 * The pool as Metacontroller leaves it after the sync that wrote its status: the ledger's checkpoint in its
 * annotation too (both are written by the same sync).
 */
export function withCheckpoint<P extends { metadata: Record<string, unknown>; status?: unknown }>(
  pool: P,
): P {
  const checkpoint = (pool.status as { ledger?: { checkpoint?: unknown } } | undefined)?.ledger?.checkpoint;
  const annotations = (pool.metadata.annotations ?? {}) as Record<string, string>;
  if (typeof checkpoint !== "string" || CHECKPOINT_ANNOTATION in annotations) return pool;
  return {
    ...pool,
    metadata: { ...pool.metadata, annotations: { ...annotations, [CHECKPOINT_ANNOTATION]: checkpoint } },
  };
}

/** An IPAllocation as the pool's tests relate it. */
export interface TestAllocation {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid: string;
    creationTimestamp: string;
    labels: Record<string, string>;
  };
  spec: Record<string, unknown>;
}

/**
 * An IPAllocation of pool `p` in `team-a`, the `seq`-th created, for `count` addresses or, with `pin`, for the
 * range of 10.9.0.`pin` onward (its end kept at or below 10.9.0.`lastOctet`, the pool's last address).
 *
 * @example
 * ```ts
 * syncPool(pool, { "team-a/a0": testAllocation("u0", 0, 4, undefined, 31) });
 * ```
 */
export function testAllocation(
  uid: string,
  seq: number,
  count: number,
  pin: number | undefined,
  lastOctet: number,
): TestAllocation {
  const spec: Record<string, unknown> = { poolRef: { name: "p" }, type: "loadbalancer", count };
  if (pin !== undefined) {
    spec.pinnedRange = {
      startAddress: `10.9.0.${pin}`,
      endAddress: `10.9.0.${Math.min(lastOctet, pin + count - 1)}`,
    };
  }
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `a${seq}`,
      namespace: "team-a",
      uid,
      creationTimestamp: `2026-11-21T08:${String(Math.floor(seq / 60) % 60).padStart(2, "0")}:${
        String(seq % 60).padStart(2, "0")
      }Z`,
      labels: { "butler.butlerlabs.dev/network-pool": "p" },
    },
    spec,
  };
}
