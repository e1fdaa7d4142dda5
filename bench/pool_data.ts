/**
 * The request of the NetworkPool benchmarks and load runs: a /12 whose ledger holds `grants` grants, with as many
 * IPAllocations related plus `fresh` new ones waiting for an address.
 *
 * @module
 */
import { formatAddress } from "../lib/ipam/mod.ts";
import { encodeGrantV1, encodeRecord, timeToken, uidToken } from "../lib/pool_ledger/mod.ts";

/** How the related IPAllocations look: the fields the hook reads, or everything Metacontroller sends. */
export type AllocationShape = "minimal" | "as-sent";

/**
 * An IPAllocation as Metacontroller's informer holds it and sends it (taken from the real-controller tier: about
 * 3.2 KB): last-applied annotation, finalizer, six labels, owner reference, `managedFields`, the projected status
 * with its address list. The minimal shape (about 0.5 KB) carries only what the pool hook reads.
 */
function allocation(i: number, uid: string, shape: AllocationShape, start: bigint | undefined): unknown {
  const name = `tc-${i}-lb`;
  const namespace = `team-${i % 50}`;
  const spec = {
    count: 8,
    poolRef: { name: "big", namespace: "butler-system" },
    tenantClusterRef: { name: `tc-${i}`, namespace },
    type: "loadbalancer",
  };
  const labels = {
    "butler.butlerlabs.dev/allocation-role": "initial",
    "butler.butlerlabs.dev/allocation-type": "loadbalancer",
    "butler.butlerlabs.dev/network-pool": "big",
    "butler.butlerlabs.dev/team": namespace,
    "butler.butlerlabs.dev/tenant": `tc-${i}`,
    "controller-uid": `11111111-2222-4333-8444-${String(i).padStart(12, "0")}`,
  };
  const base = { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "IPAllocation" };
  if (shape === "minimal") {
    return {
      ...base,
      metadata: {
        name,
        namespace,
        uid,
        generation: 1,
        creationTimestamp: "2026-11-20T00:00:00Z",
        labels: {
          "butler.butlerlabs.dev/network-pool": "big",
          "butler.butlerlabs.dev/allocation-type": "loadbalancer",
        },
      },
      spec: { poolRef: spec.poolRef, type: spec.type, count: spec.count },
    };
  }
  const owner = labels["controller-uid"];
  const addresses = start === undefined
    ? []
    : Array.from({ length: 8 }, (_, k) => formatAddress(4, start + BigInt(k)));
  const names = (keys: string[]) => Object.fromEntries([[".", {}], ...keys.map((k) => [`f:${k}`, {}])]);
  return {
    ...base,
    metadata: {
      annotations: {
        "metacontroller.k8s.io/last-applied-configuration": JSON.stringify({
          ...base,
          metadata: { labels, name, namespace },
          spec,
        }),
      },
      creationTimestamp: "2026-11-20T00:00:00Z",
      finalizers: ["metacontroller.io/decoratorcontroller-butler-ipallocation"],
      generation: 1,
      labels,
      managedFields: [{
        apiVersion: base.apiVersion,
        fieldsType: "FieldsV1",
        fieldsV1: {
          "f:metadata": {
            "f:annotations": names(["metacontroller.k8s.io/last-applied-configuration"]),
            "f:finalizers": { ".": {}, 'v:"metacontroller.io/decoratorcontroller-butler-ipallocation"': {} },
            "f:labels": names(Object.keys(labels)),
            "f:ownerReferences": { ".": {}, [`k:{"uid":"${owner}"}`]: {} },
          },
          "f:spec": {
            ...names(["count", "type"]),
            "f:poolRef": names(["name", "namespace"]),
            "f:tenantClusterRef": names(["name", "namespace"]),
          },
        },
        manager: "metacontroller",
        operation: "Update",
        time: "2026-11-20T00:00:02Z",
      }],
      name,
      namespace,
      ownerReferences: [{
        apiVersion: base.apiVersion,
        blockOwnerDeletion: true,
        controller: true,
        kind: "TenantCluster",
        name: `tc-${i}`,
        uid: owner,
      }],
      resourceVersion: String(1000 + i),
      uid,
    },
    spec,
    status: start === undefined ? { phase: "Pending" } : {
      addresses,
      allocatedAt: "2026-11-20T00:00:01Z",
      allocatedBy: "NetworkPool butler-system/big",
      allocatedCount: 8,
      cidr: `${addresses[0]}-${addresses[7]}`,
      conditions: [{
        lastTransitionTime: "2026-11-20T00:00:01Z",
        message: `allocated ${addresses[0]}-${addresses[7]} from NetworkPool butler-system/big`,
        observedGeneration: 1,
        reason: "Allocated",
        status: "True",
        type: "Ready",
      }],
      endAddress: addresses[7],
      observedGeneration: 1,
      phase: "Allocated",
      startAddress: addresses[0],
    },
  };
}

/**
 * A NetworkPool sync request body: `grants` recorded grants and `fresh` pending allocations. The ledger is in the
 * current format (`status.ledger`) or, with `format: "v1"`, in the first one (`status.grants`), as a pool written
 * by version 0.1 is read once. The related IPAllocations are `minimal` (what the benchmarks have always used) or
 * `as-sent` (what Metacontroller really sends, about six times larger).
 */
export function poolSyncBody(
  grants: number,
  fresh: number,
  format: "v1" | "v2" = "v2",
  shape: AllocationShape = "minimal",
): string {
  const base = 0x0a100000n; // 10.16.0.0/12
  const at = new Date("2026-11-20T00:00:00Z");
  const v1: Record<string, string> = {};
  const records: string[] = [];
  const related: Record<string, unknown> = {};
  for (let i = 0; i < grants + fresh; i++) {
    const uid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
    if (i < grants) {
      const start = base + BigInt(i) * 16n;
      const range = { start, end: start + 7n };
      if (format === "v1") v1[uid] = encodeGrantV1(4, range, at);
      else records.push(encodeRecord(base, range, timeToken(at), uidToken(uid)));
    }
    related[`team-${i % 50}/tc-${i}-lb`] = allocation(
      i,
      uid,
      shape,
      i < grants ? base + BigInt(i) * 16n : undefined,
    );
  }
  return JSON.stringify({
    controller: { metadata: { name: "butler-networkpool" } },
    object: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "NetworkPool",
      metadata: { name: "big", namespace: "butler-system", uid: "pool", generation: 1 },
      spec: { cidr: "10.16.0.0/12", reserved: [{ cidr: "10.31.255.0/24" }] },
      status: format === "v1"
        ? { grants: v1 }
        : { ledger: { version: 2, base: "10.16.0.0", grants: records } },
    },
    attachments: {},
    related: { "IPAllocation.butler.butlerlabs.dev/v1alpha1": related },
    finalizing: false,
  });
}

/** What {@linkcode postPoolSync} posts to: an app's `request()` (Hono's, in the benchmarks and load runs). */
export interface RequestTarget {
  request(path: string, init: RequestInit): Response | Promise<Response>;
}

/** Posts a pool sync body to the NetworkPool sync route and returns the answer's text; any other status throws. */
export async function postPoolSync(app: RequestTarget, body: string): Promise<string> {
  const res = await app.request("/hooks/networkpool/sync", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`status ${res.status}: ${text.slice(0, 200)}`);
  return text;
}
