/**
 * The pool `pool show`'s goldens draw, for the unit test (cli/pool_show_test.ts) and the real API server tier
 * (tests/api/cli.api.ts), which stores the same objects and must print the same bytes.
 */
import { parseAddress } from "../../lib/ipam/mod.ts";
import { encodeRecord, timeToken, uidToken } from "../../lib/pool_ledger/mod.ts";
import type { AllocationInfo, PoolObject } from "../../cli/pool_show.ts";

const at = new Date("2026-11-20T09:00:00Z");
const ip = (text: string) => parseAddress(text)!.value;

/** A UID of the tests' own (the API server gives real objects theirs). */
export const testUid = (n: number): string => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

/** The spec of the seed's lab pool: a /21, its first /24 reserved, tenants from 10.40.1.0. */
export const LAB_SPEC = {
  cidr: "10.40.0.0/21",
  reserved: [{ cidr: "10.40.0.0/24" }],
  tenantAllocation: { start: "10.40.1.0", end: "10.40.7.254" },
};

/** The lab pool's status with `grants` as [first address, count, IPAllocation UID]. */
export function labStatus(grants: readonly (readonly [string, number, string])[]): Record<string, unknown> {
  const base = ip("10.40.0.0");
  return {
    ledger: {
      version: 2,
      base: "10.40.0.0",
      grants: grants.map(([first, count, uid]) =>
        encodeRecord(
          base,
          { start: ip(first), end: ip(first) + BigInt(count) - 1n },
          timeToken(at),
          uidToken(uid),
        )
      ),
    },
  };
}

/** The lab pool object with `grants`. */
export function labPool(grants: readonly (readonly [string, number, string])[]): PoolObject {
  return {
    metadata: { name: "lab-pool", namespace: "butler-system" },
    spec: LAB_SPEC,
    status: labStatus(grants),
  };
}

/** The golden picture's IPAllocations: namespace, name, tenant, pinned, and the grant's first address and count. */
export const LAB_ALLOCATIONS = [
  { namespace: "team-payments", name: "web-lb", tenant: "web", pinned: false, first: "10.40.1.0", count: 8 },
  { namespace: "team-payments", name: "api-lb", tenant: "api", pinned: false, first: "10.40.1.8", count: 4 },
  {
    namespace: "team-platform",
    name: "ingress-pinned",
    tenant: "ingress",
    pinned: true,
    first: "10.40.2.0",
    count: 16,
  },
] as const;

/** A grant whose IPAllocation is not in view: drawn, and listed by its UID. */
export const LAB_ORPHAN = ["10.40.5.100", 1, testUid(4)] as const;

/** The allocations as `pool show` reads them, with `uids` (the tests' own, or the API server's). */
export function labAllocations(uids: readonly string[]): AllocationInfo[] {
  return LAB_ALLOCATIONS.map((a, i) => ({
    metadata: {
      name: a.name,
      namespace: a.namespace,
      uid: uids[i]!,
      labels: { "butler.butlerlabs.dev/tenant": a.tenant },
    },
    spec: a.pinned ? { pinnedRange: { startAddress: a.first, endAddress: "10.40.2.15" } } : {},
  }));
}

/** The grants of the golden picture for allocations with `uids`. */
export function labGrants(uids: readonly string[]): [string, number, string][] {
  return [...LAB_ALLOCATIONS.map((a, i): [string, number, string] => [a.first, a.count, uids[i]!]), [
    ...LAB_ORPHAN,
  ]];
}
