/**
 * What the backup tier reads of a cluster and holds a restore to: every IPAllocation's range (its record and its
 * status agreeing), overlaps, each TenantCluster's addresses, and who owns the Team's and the clusters' children.
 *
 * @module
 */
import { kubectlOk } from "../api/cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const GRANT = "butler.butlerlabs.dev/grant";

/** One cluster's state, as the checks compare it. */
export interface Snapshot {
  /** `namespace/name` of each Allocated IPAllocation → `first-last`. */
  readonly ranges: Map<string, string>;
  /** IPAllocations whose record does not state the range of their status. */
  readonly unrecorded: string[];
  /** Pairs of IPAllocations sharing an address. */
  readonly overlaps: string[];
  /** Each TenantCluster's reported addresses. */
  readonly clusters: Map<string, string>;
  /** Children of the Team and the TenantClusters that their parent does not own as controller. */
  readonly orphans: string[];
  /** The platform Team's children found (kinds), to be sure something was checked. */
  readonly teamChildren: string[];
  /** Each NetworkPool's `LedgerRebuilt` condition, `reason: message`. */
  readonly rebuilt: Map<string, string>;
}

const list = async (args: string[]) =>
  JSON.parse(await kubectlOk(["get", ...args, "-o", "json"])).items as Obj[];
const toInt = (a: string) => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);

/** The pairs of `ranges` that share an address. */
function overlapping(ranges: Map<string, string>): string[] {
  const spans = [...ranges].map(([k, v]) => {
    const [s, e] = v.split("-");
    return { k, s: toInt(s!), e: toInt(e!) };
  });
  return spans.flatMap((x) =>
    spans.filter((y) => y.k > x.k && y.s <= x.e && x.s <= y.e).map((y) => `${x.k}/${y.k}`)
  );
}

/** Whether `o` has `parent` as its controller. */
const ownedBy = (o: Obj, parent: Obj) =>
  (o.metadata.ownerReferences ?? []).some((r: Obj) => r.controller && r.uid === parent.metadata.uid);

/** Reads the cluster kubectl points at. */
export async function snapshot(): Promise<Snapshot> {
  const allocations = await list(["ipallocations", "-A"]);
  const ranges = new Map<string, string>();
  const unrecorded: string[] = [];
  for (const a of allocations) {
    if (a.status?.phase !== "Allocated") continue;
    const key = `${a.metadata.namespace}/${a.metadata.name}`;
    const range = `${a.status.startAddress}-${a.status.endAddress}`;
    ranges.set(key, range);
    if (!String(a.metadata.annotations?.[GRANT] ?? "").includes(`:${range}@`)) unrecorded.push(key);
  }
  const clusters = new Map<string, string>();
  const orphans: string[] = [];
  const tcs = await list(["tenantclusters", "-A"]);
  const configmaps = await list(["configmaps", "-A", "-l", "butler.butlerlabs.dev/tenant"]);
  for (const tc of tcs) {
    const key = `${tc.metadata.namespace}/${tc.metadata.name}`;
    clusters.set(key, JSON.stringify(tc.status?.loadBalancer?.addresses ?? null));
    const mine = (o: Obj) =>
      o.metadata.namespace === tc.metadata.namespace &&
      o.metadata.labels?.["butler.butlerlabs.dev/tenant"] === tc.metadata.name;
    for (const o of [...configmaps, ...allocations].filter(mine)) {
      if (!ownedBy(o, tc)) {
        orphans.push(`${o.kind ?? "object"} ${o.metadata.namespace}/${o.metadata.name} (of ${key})`);
      }
    }
  }
  const teams = await list(["teams"]);
  const teamChildren: string[] = [];
  for (const team of teams) {
    const selector = `butler.butlerlabs.dev/team=${team.metadata.name}`;
    for (const kind of ["namespaces", "roles", "rolebindings", "clusterroles", "clusterrolebindings"]) {
      for (const o of await list([kind, "-A", "-l", selector])) {
        teamChildren.push(kind);
        if (!ownedBy(o, team)) {
          orphans.push(
            `${kind} ${o.metadata.namespace ?? ""}/${o.metadata.name} (of Team ${team.metadata.name})`,
          );
        }
      }
    }
  }
  const rebuilt = new Map<string, string>();
  for (const p of await list(["networkpools", "-A"])) {
    const c = (p.status?.conditions ?? []).find((x: Obj) => x.type === "LedgerRebuilt");
    rebuilt.set(
      `${p.metadata.namespace}/${p.metadata.name}`,
      c ? `${c.status} ${c.reason}: ${c.message}` : "none",
    );
  }
  return { ranges, unrecorded, overlaps: overlapping(ranges), clusters, orphans, teamChildren, rebuilt };
}

/** Whether the controllers are done with a restore: every range back, every child adopted, every pool rebuilt. */
export function converged(before: Snapshot, after: Snapshot): boolean {
  return after.ranges.size === before.ranges.size && after.orphans.length === 0 &&
    [...after.rebuilt.values()].every((v) => v.startsWith("True"));
}

/** What a restore must keep, from the snapshot `before` the backup and the one `after` the restore converged. */
export function expectations(
  before: Snapshot,
  after: Snapshot,
): { name: string; ok: boolean; detail: string }[] {
  const moved = [...before.ranges].filter(([k, v]) => after.ranges.get(k) !== v).map(([k, v]) =>
    `${k}: ${v} -> ${after.ranges.get(k) ?? "none"}`
  );
  const clustersMoved = [...before.clusters].filter(([k, v]) => after.clusters.get(k) !== v).map(([k]) => k);
  return [
    { name: `0 of ${before.ranges.size} ranges moved`, ok: moved.length === 0, detail: moved.join("; ") },
    { name: "no address granted twice", ok: after.overlaps.length === 0, detail: after.overlaps.join(", ") },
    {
      name: "every grant recorded on its IPAllocation",
      ok: after.unrecorded.length === 0,
      detail: after.unrecorded.join(", "),
    },
    {
      name: "every TenantCluster reports the addresses it had",
      ok: clustersMoved.length === 0,
      detail: clustersMoved.join(", "),
    },
    {
      name: "the Team's namespace and RBAC and every cluster's children owned by their parents",
      ok: after.orphans.length === 0 && after.teamChildren.includes("namespaces") &&
        after.teamChildren.includes("rolebindings"),
      detail: after.orphans.join(", ") || [...new Set(after.teamChildren)].join(", "),
    },
    {
      name: "each pool says it rebuilt its ledger",
      ok: [...after.rebuilt.values()].every((v) => v.startsWith("True")),
      detail: [...after.rebuilt].map(([k, v]) => `${k}: ${v}`).join("; "),
    },
  ];
}
