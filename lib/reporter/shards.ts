/**
 * Sharing tenants among reporter replicas: each replica holds a Lease (membership), and every tenant belongs to
 * the live member with the highest rendezvous hash of (member, tenant). Chosen over a leader that assigns
 * shards because nothing has to be elected or written besides each replica's own Lease, every replica computes
 * the same answer from the same Leases, and when a member joins or leaves only the tenants it gains or held
 * move. While replicas disagree for a moment (one saw a Lease the other did not yet), a tenant may be written by
 * two replicas: harmless, both apply the same facts under the same field manager.
 *
 * @module
 */
import { z } from "zod";
import { parseTime } from "../time/mod.ts";

/** The label on the reporter's Leases. */
export const MEMBER_LABEL = "butler.butlerlabs.dev/component=reporter";

const Lease = z.object({
  spec: z.object({
    holderIdentity: z.string().min(1),
    renewTime: z.string(),
    leaseDurationSeconds: z.number().int().min(1),
  }),
});

/** The holders of the Leases that have not expired at `now`, sorted and without duplicates. */
export function liveMembers(leases: Iterable<unknown>, now: Date): string[] {
  const live = new Set<string>();
  for (const raw of leases) {
    const lease = Lease.safeParse(raw);
    if (!lease.success) continue;
    const renewed = parseTime(lease.data.spec.renewTime);
    if (renewed && renewed.getTime() + lease.data.spec.leaseDurationSeconds * 1000 > now.getTime()) {
      live.add(lease.data.spec.holderIdentity);
    }
  }
  return [...live].sort();
}

/** A 53-bit hash of a string (cyrb53): fast, well mixed, and the same in every replica. */
export function hash53(text: string): number {
  let h1 = 0xdeadbeef, h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * The member a tenant belongs to (rendezvous hashing), or `undefined` without members.
 *
 * @example
 * ```ts
 * ownerOf("team-a/cluster-1", ["reporter-0", "reporter-1"]); // one of the two, the same in every replica
 * ```
 */
export function ownerOf(tenantKey: string, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const m of members) {
    const score = hash53(`${m}\n${tenantKey}`);
    if (score > bestScore || (score === bestScore && best !== undefined && m < best)) {
      best = m;
      bestScore = score;
    }
  }
  return best;
}

/** The Lease a member writes for itself. */
export function memberLease(
  identity: string,
  namespace: string,
  now: Date,
  durationSeconds: number,
): Record<string, unknown> {
  const [key, value] = MEMBER_LABEL.split("=");
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: leaseName(identity), namespace, labels: { [key!]: value! } },
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: durationSeconds,
      renewTime: now.toISOString().replace(/(\.\d{3})Z$/, "$1000Z"),
    },
  };
}

/** The Lease name of a member: `butler-reporter-` and the identity, made a valid name. */
export function leaseName(identity: string): string {
  const cleaned = identity.toLowerCase().replace(/[^a-z0-9.-]+/g, "-").replace(
    /^[^a-z0-9]+|[^a-z0-9]+$/g,
    "",
  );
  const name = `butler-reporter-${cleaned || "member"}`;
  return name.length <= 253 ? name : `${name.slice(0, 240)}-${hash53(identity).toString(36)}`;
}
