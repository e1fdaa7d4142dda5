/**
 * The request of the NetworkPool benchmarks and load runs: a /12 whose ledger holds `grants` grants, with as many
 * IPAllocations related plus `fresh` new ones waiting for an address.
 *
 * @module
 */
import { encodeGrant } from "./ledger.ts";

/** A NetworkPool sync request body: `grants` recorded grants and `fresh` pending allocations. */
export function poolSyncBody(grants: number, fresh: number): string {
  const base = 0x0a100000n; // 10.16.0.0/12
  const ledger: Record<string, string> = {};
  const related: Record<string, unknown> = {};
  for (let i = 0; i < grants + fresh; i++) {
    const uid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    if (i < grants) {
      const start = base + BigInt(i) * 16n;
      ledger[uid] = encodeGrant(4, { start, end: start + 7n }, "2026-11-20T00:00:00Z");
    }
    related[`team-${i % 50}/tc-${i}-lb`] = {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "IPAllocation",
      metadata: {
        name: `tc-${i}-lb`,
        namespace: `team-${i % 50}`,
        uid,
        generation: 1,
        creationTimestamp: "2026-11-20T00:00:00Z",
        labels: {
          "butler.butlerlabs.dev/network-pool": "big",
          "butler.butlerlabs.dev/allocation-type": "loadbalancer",
        },
      },
      spec: { poolRef: { name: "big", namespace: "butler-system" }, type: "loadbalancer", count: 8 },
    };
  }
  return JSON.stringify({
    controller: { metadata: { name: "butler-networkpool" } },
    object: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "NetworkPool",
      metadata: { name: "big", namespace: "butler-system", uid: "pool", generation: 1 },
      spec: { cidr: "10.16.0.0/12", reserved: [{ cidr: "10.31.255.0/24" }] },
      status: { grants: ledger },
    },
    attachments: {},
    related: { "IPAllocation.butler.butlerlabs.dev/v1alpha1": related },
    finalizing: false,
  });
}
