/**
 * What must hold after every simulated operation, and once the quiet phase has settled. Each check reads the
 * simulated API server only (never the hooks' own bookkeeping), so a hook that is wrong cannot vouch for itself.
 *
 * @module
 */
import { formatAddress, parseAddress } from "../../lib/ipam/mod.ts";
import { CHECKPOINT_ANNOTATION, GRANT_ANNOTATION, parseGrantRecord } from "../../lib/api/mod.ts";
import { type Obj, objectId } from "../../lib/plan/mod.ts";
import { ledgerMismatches, overlaps, type PoolGrant, poolGrants } from "../scale/checks.ts";
import type { ApiServer } from "./api_server.ts";
import type { SyncOutcome } from "./metacontroller.ts";

/** A broken invariant: which, after which operation, and what was seen. */
export interface Violation {
  readonly step: number;
  readonly invariant: string;
  readonly message: string;
}

const GROUP = "butler.butlerlabs.dev/v1alpha1";
const ENV = "butler.butlerlabs.dev/environment";
const OWNER = "butler.butlerlabs.dev/owner";

interface Held {
  readonly grant: PoolGrant;
  readonly pool: string;
}

interface Release {
  readonly family: number;
  readonly start: bigint;
  readonly end: bigint;
  readonly at: number;
  /** The shortest cooldown the pool has had since: lowering it frees what cooled that long, raising it again does not. */
  cooldownMs: number;
}

/** A cluster's worker count as it asks (the workload always sets it). */
const workers = (c: Obj): number => c.spec?.workers?.replicas ?? 3;

const rangeText = (g: PoolGrant) =>
  `${formatAddress(g.family, g.range.start)}-${formatAddress(g.family, g.range.end)}`;

/** The invariants' memory of the run: grants seen per pool incarnation, releases still cooling. */
export class Invariants {
  /** `poolUid/allocationUid` → the grant, as last seen. */
  #held = new Map<string, Held>();
  /** Pool UID → its releases (kept while they may still be cooling). */
  readonly #releases = new Map<string, Release[]>();
  #pending: Violation | undefined;
  /** Parents written past admission with a spec the hooks cannot read: UID → that generation. */
  readonly #corrupt = new Map<string, number>();

  /** Notes a parent stored with a spec no hook can read (until a later write changes its generation). */
  corrupted(o: Obj): void {
    this.#corrupt.set(o.metadata.uid, o.metadata.generation);
  }
  #ledgerSeen = new Map<string, string>();

  /** Records a broken rule seen outside `observe` (at admission, at a sync); reported by the next `observe`. */
  #flag(invariant: string, message: string): void {
    this.#pending ??= { step: -1, invariant, message };
  }

  /**
   * After an admitted TenantCluster create or update: nothing the write added to may exceed its limit (team
   * clusters and worker nodes, environment, member within environment, ProviderConfig per team).
   */
  admittedCluster(api: ApiServer, stored: Obj, before: Obj | undefined): void {
    const ns = stored.metadata.namespace!;
    const team = api.peek(`butler.butlerlabs.dev/Team//${ns.replace(/^team-/, "")}`);
    const live = api.ofKind(GROUP, "TenantCluster").filter((c) =>
      c.metadata.namespace === ns && !c.metadata.deletionTimestamp
    );
    const env = stored.metadata.labels?.[ENV];
    const owner = stored.metadata.annotations?.[OWNER];
    const provider = stored.spec.providerConfigRef?.name;
    const moved = !before || before.metadata.labels?.[ENV] !== env;
    const limits: [boolean, number | undefined, Obj[], string][] = [];
    if (team) {
      limits.push([
        !before,
        team.spec.resourceLimits?.maxClusters,
        live,
        `team ${team.metadata.name} maxClusters`,
      ]);
      // Worker nodes, as a list of one entry per node: a growing update adds to it.
      limits.push([
        !before || workers(stored) > workers(before),
        team.spec.resourceLimits?.maxTotalNodes,
        live.flatMap((c) => Array.from({ length: workers(c) }, () => c)),
        `team ${team.metadata.name} maxTotalNodes`,
      ]);
      const e = (team.spec.environments ?? []).find((x: { name: string }) => x.name === env);
      const inEnv = live.filter((c) => c.metadata.labels?.[ENV] === env);
      limits.push([moved, e?.limits?.maxClusters, inEnv, `environment ${env} maxClusters`]);
      const ownerMoved = moved || before?.metadata.annotations?.[OWNER] !== owner;
      limits.push([
        ownerMoved,
        e?.limits?.maxClustersPerMember,
        inEnv.filter((c) => c.metadata.annotations?.[OWNER] === owner),
        `environment ${env} maxClustersPerMember (${owner})`,
      ]);
    }
    const pc = api.peek(`butler.butlerlabs.dev/ProviderConfig/butler-system/${provider}`);
    limits.push([
      !before || before.spec.providerConfigRef?.name !== provider,
      pc?.spec.limits?.maxClustersPerTeam,
      live.filter((c) => c.spec.providerConfigRef?.name === provider),
      `ProviderConfig ${provider} maxClustersPerTeam`,
    ]);
    for (const [added, max, counted, what] of limits) {
      if (added && max !== undefined && counted.length > max) {
        this.#flag(
          "quota",
          `${ns}/${stored.metadata.name} was admitted and ${counted.length} count against ${what} = ${max}: ${
            counted.map((c) => c.metadata.name).join(", ")
          }`,
        );
      }
    }
  }

  /**
   * Without a quota ledger (admission unauthenticated, so reviews decided on one view all pass): what the clusters
   * use in force never passes a limit their team's clusters share. In force is a cluster's quota record
   * (`{tc}-quota`, what its Team admitted) where it has one, else, once it says `Admitted`, its spec.
   */
  inForce(api: ApiServer): void {
    for (const team of api.ofKind(GROUP, "Team")) {
      const ns = `team-${team.metadata.name}`;
      const used = api.ofKind(GROUP, "TenantCluster").filter((c) =>
        c.metadata.namespace === ns && !c.metadata.deletionTimestamp
      ).flatMap((c) => {
        const record = api.peek(`/ConfigMap/${ns}/${c.metadata.name}-quota`);
        const mine = record?.metadata.ownerReferences?.some((r: { uid: string }) => r.uid === c.metadata.uid);
        const admitted = mine && record?.data?.admitted ? JSON.parse(record.data.admitted) : undefined;
        if (admitted) {
          return [{
            name: c.metadata.name,
            env: admitted.env,
            owner: admitted.owner,
            nodes: admitted.workerCount.value,
          }];
        }
        const started = (c.status?.conditions ?? []).some((x: { type: string; status: string }) =>
          x.type === "Admitted" && x.status === "True"
        );
        return started
          ? [{
            name: c.metadata.name,
            env: c.metadata.labels?.[ENV],
            owner: c.metadata.annotations?.[OWNER],
            nodes: workers(c),
          }]
          : [];
      });
      const limits = team.spec.resourceLimits ?? {};
      const over: string[] = [];
      const check = (what: string, n: number, max: number | undefined) =>
        max !== undefined && n > max && over.push(`${what} ${n} > ${max}`);
      check("clusters", used.length, limits.maxClusters);
      check("worker nodes", used.reduce((n, c) => n + c.nodes, 0), limits.maxTotalNodes);
      for (const e of team.spec.environments ?? []) {
        const inEnv = used.filter((c) => c.env === e.name);
        check(`clusters in ${e.name}`, inEnv.length, e.limits?.maxClusters);
        for (const owner of new Set(inEnv.map((c) => c.owner))) {
          check(
            `clusters of ${owner} in ${e.name}`,
            inEnv.filter((c) => c.owner === owner).length,
            e.limits?.maxClustersPerMember,
          );
        }
      }
      if (over.length) {
        this.#flag(
          "quota",
          `team ${team.metadata.name} has in force ${over.join(", ")}: ${JSON.stringify(used)}`,
        );
      }
    }
  }

  /**
   * After a sync: a TenantCluster that is not being deleted never gives up its initial or node allocation once it
   * is Allocated (only growth ranges shrink; one that failed in a pool may be dropped to try the next), and a Team
   * that is not being deleted never loses its namespace (a hook must not drop what it cannot account for).
   */
  synced(_api: ApiServer, outcome: SyncOutcome): void {
    if (outcome.error) return;
    const unreadable = outcome.uid !== undefined && this.#corrupt.get(outcome.uid) === outcome.generation;
    const gone = outcome.dropped.filter((c) => !c.metadata.deletionTimestamp);
    if (unreadable && gone.length) {
      this.#flag(
        "dropped-child",
        `${outcome.controller} answered 200 for ${outcome.parent}, whose spec it cannot read, and left out ${
          gone.map(objectId).join(", ")
        }`,
      );
      return;
    }
    if (outcome.deleting) return;
    const parentName = outcome.parent.split("/").at(-1)!;
    for (const child of outcome.dropped) {
      if (child.metadata.deletionTimestamp) continue;
      const name = child.metadata.name;
      const kept = child.kind === "IPAllocation"
        ? (name === `${parentName}-lb` || name === `${parentName}-nodes`) &&
          child.status?.phase === "Allocated"
        : child.kind === "Namespace";
      if (kept) {
        this.#flag(
          "dropped-child",
          `${outcome.controller} sync of ${outcome.parent} dropped ${objectId(child)}`,
        );
      }
    }
  }

  /** Checks the state after one operation; returns the first violation. */
  observe(api: ApiServer, clockMs: number, step = 0): Violation | undefined {
    if (this.#pending) {
      const v = { ...this.#pending, step };
      this.#pending = undefined;
      return v;
    }
    const pools = api.ofKind(GROUP, "NetworkPool");
    const { grants, unreadable } = poolGrants(pools);
    if (unreadable.length) {
      return { step, invariant: "ledger", message: `unreadable ledger: ${unreadable.join(", ")}` };
    }
    const twice = overlaps(grants);
    if (twice.length) {
      return { step, invariant: "granted-twice", message: `two grants share addresses: ${twice[0]}` };
    }
    const allocations = api.ofKind(GROUP, "IPAllocation");
    const claimed = allocatedOverlaps(allocations);
    if (claimed) return { step, invariant: "granted-twice", message: claimed };
    const recorded = this.#records(allocations, grants, step);
    if (recorded) return recorded;
    const tracked = pools.filter(ledgerCurrent);
    const uids = new Set(tracked.map((p) => p.metadata.uid as string));
    for (const key of [...this.#held.keys()]) if (!uids.has(key.split("/")[0]!)) this.#held.delete(key);
    for (const uid of [...this.#releases.keys()]) if (!uids.has(uid)) this.#releases.delete(uid);
    const names = new Set(tracked.map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
    const fresh = new Set([...uids].filter((u) => !this.#tracked.has(u)));
    this.#tracked = uids;
    return this.#ledgerChanges(
      tracked,
      grants.filter((g) => names.has(g.pool)),
      allocations,
      clockMs,
      step,
      fresh,
    );
  }

  /** Pools whose ledger was trusted at the last observation (a lost one is not, until it is rebuilt). */
  #tracked = new Set<string>();
  /** IPAllocations a partial restore created beside what was made since (their records may be refused). */
  readonly restoredBeside = new Set<string>();
  /** IPAllocation UID → the grant it records (annotation), as last seen. */
  #recorded = new Map<string, string>();

  /**
   * The grants recorded on their holders: a record never changes or goes while its IPAllocation exists, no two
   * records share an address, and no pool's ledger gives a recorded address to another existing IPAllocation.
   */
  #records(allocations: readonly Obj[], grants: readonly PoolGrant[], step: number): Violation | undefined {
    const now = new Map<string, string>();
    const ranges: { uid: string; name: string; family: number; start: bigint; end: bigint }[] = [];
    for (const a of allocations) {
      const text = a.metadata.annotations?.[GRANT_ANNOTATION];
      const uid = a.metadata.uid as string;
      const before = this.#recorded.get(uid);
      if (before !== undefined && before !== text) {
        return {
          step,
          invariant: "grant-moved",
          message: `IPAllocation ${a.metadata.namespace}/${a.metadata.name} recorded ${before}, now ${
            text ?? "nothing"
          }`,
        };
      }
      const r = parseGrantRecord(text);
      if (!r) continue;
      now.set(uid, text);
      ranges.push({
        uid,
        name: `${a.metadata.namespace}/${a.metadata.name}`,
        family: r.family,
        start: r.range.start,
        end: r.range.end,
      });
    }
    this.#recorded = now;
    const byUid = new Map(allocations.map((a) => [a.metadata.uid as string, a]));
    const existing = new Set(allocations.map((a) => a.metadata.uid as string));
    // A record restored beside grants made since may share their addresses, but is never served (Allocated).
    const unserved = new Set(
      ranges.filter((x) => this.restoredBeside.has(x.uid) && !servedRecord(byUid.get(x.uid)!, x)).map((x) =>
        x.uid
      ),
    );
    const all = [
      ...ranges,
      ...grants.filter((g) => existing.has(g.uid)).map((g) => ({
        uid: g.uid,
        name: `${g.pool} ledger`,
        family: g.family,
        start: BigInt(g.range.start),
        end: BigInt(g.range.end),
      })),
    ];
    for (const x of ranges) {
      if (unserved.has(x.uid)) continue;
      const hit = all.find((y) =>
        !unserved.has(y.uid) &&
        y.uid !== x.uid && y.family === x.family && y.start <= x.end && x.start <= y.end
      );
      if (hit) {
        return {
          step,
          invariant: "granted-twice",
          message: `${x.name} records addresses that ${hit.name} (${hit.uid}) also holds`,
        };
      }
    }
    return undefined;
  }

  #ledgerChanges(
    pools: readonly Obj[],
    grants: readonly PoolGrant[],
    allocations: readonly Obj[],
    clockMs: number,
    step: number,
    fresh: ReadonlySet<string> = new Set(),
  ): Violation | undefined {
    const poolUid = new Map(pools.map((p) => [`${p.metadata.namespace}/${p.metadata.name}`, p]));
    const now = new Map<string, Held>();
    for (const g of grants) {
      const pool = poolUid.get(g.pool)!;
      now.set(`${pool.metadata.uid}/${g.uid}`, { grant: g, pool: pool.metadata.uid });
    }
    const byUid = new Map(allocations.map((a) => [a.metadata.uid as string, a]));
    for (const pool of pools) {
      const current = 1000 * (pool.spec.releaseCooldownSeconds ?? 0);
      for (const r of this.#releases.get(pool.metadata.uid) ?? []) {
        r.cooldownMs = Math.min(r.cooldownMs, current);
      }
    }
    for (const [key, held] of this.#held) {
      const after = now.get(key);
      if (after) {
        if (
          after.grant.range.start !== held.grant.range.start || after.grant.range.end !== held.grant.range.end
        ) {
          return {
            step,
            invariant: "grant-moved",
            message: `${held.grant.pool}: the grant of ${held.grant.uid} moved from ${
              rangeText(held.grant)
            } to ${rangeText(after.grant)}`,
          };
        }
        continue;
      }
      if (!pools.some((p) => p.metadata.uid === held.pool)) continue;
      const holder = byUid.get(held.grant.uid);
      if (holder && !holder.metadata.deletionTimestamp) {
        return {
          step,
          invariant: "grant-dropped",
          message: `${held.grant.pool} dropped ${
            rangeText(held.grant)
          } while ${holder.metadata.namespace}/${holder.metadata.name} still holds it`,
        };
      }
      const pool = pools.find((p) => p.metadata.uid === held.pool)!;
      const list = this.#releases.get(held.pool) ?? [];
      list.push({
        family: held.grant.family,
        start: BigInt(held.grant.range.start),
        end: BigInt(held.grant.range.end),
        at: clockMs,
        cooldownMs: 1000 * (pool.spec.releaseCooldownSeconds ?? 0),
      });
      this.#releases.set(held.pool, list);
    }
    for (const [key, held] of now) {
      // A ledger just rebuilt is a new baseline: what it lost of its releases it cannot cool down.
      if (this.#held.has(key) || fresh.has(held.pool)) continue;
      const list = (this.#releases.get(held.pool) ?? []).filter((r) => r.at + r.cooldownMs > clockMs);
      this.#releases.set(held.pool, list);
      const hit = list.find((r) =>
        r.family === held.grant.family && r.start <= BigInt(held.grant.range.end) &&
        BigInt(held.grant.range.start) <= r.end
      );
      if (hit) {
        return {
          step,
          invariant: "cooldown",
          message: `${held.grant.pool} granted ${rangeText(held.grant)} to ${held.grant.uid} ${
            (clockMs - hit.at) / 1000
          } s after releasing it, within its cooldown of ${hit.cooldownMs / 1000} s`,
        };
      }
    }
    this.#held = now;
    return undefined;
  }

  /** Once the quiet phase found a fixed point: ledgers and holders agree, and nothing is left half deleted. */
  settled(api: ApiServer, step: number): Violation | undefined {
    const pools = api.ofKind(GROUP, "NetworkPool");
    const { grants } = poolGrants(pools);
    // An allocation whose pool is gone keeps the grant it records (Ready False, GrantNotInLedger): no ledger to match.
    const poolIds = new Set(pools.map((p) => `${p.metadata.namespace}/${p.metadata.name}`));
    const allocations = api.ofKind(GROUP, "IPAllocation").filter((a) =>
      poolIds.has(`${a.spec.poolRef.namespace ?? "butler-system"}/${a.spec.poolRef.name}`)
    );
    const mismatch = ledgerMismatches(grants, allocations);
    if (mismatch.length) return { step, invariant: "ledger-holders", message: mismatch[0]! };
    const uids = new Set(api.all().map((o) => o.metadata.uid));
    for (const o of api.all()) {
      const ref = (o.metadata.ownerReferences ?? []).find((r: { controller?: boolean }) => r.controller);
      if (ref && !uids.has(ref.uid)) {
        return {
          step,
          invariant: "left-after-delete",
          message: `${objectId(o)} outlived its owner ${ref.kind} ${ref.name}`,
        };
      }
      if (o.metadata.deletionTimestamp && !heldOnPurpose(api, o, grants)) {
        return {
          step,
          invariant: "left-after-delete",
          message: `${objectId(o)} is still being deleted once everything settled (finalizers ${
            JSON.stringify(o.metadata.finalizers ?? [])
          })`,
        };
      }
    }
    for (const address of api.ofKind("ipam.cluster.x-k8s.io/v1beta2", "IPAddress")) {
      const ns = address.metadata.namespace;
      const allocation = api.peek(`butler.butlerlabs.dev/IPAllocation/${ns}/claim-${address.metadata.name}`);
      if (
        allocation?.status?.phase !== "Allocated" || allocation.status.startAddress !== address.spec.address
      ) {
        return {
          step,
          invariant: "ledger-holders",
          message: `IPAddress ${ns}/${address.metadata.name} says ${address.spec.address}, its IPAllocation ${
            allocation ? `${allocation.status?.phase} ${allocation.status?.startAddress}` : "does not exist"
          }`,
        };
      }
    }
    for (const ns of api.ofKind("v1", "Namespace")) {
      const team = /^team-(.+)$/.exec(ns.metadata.name)?.[1];
      if (team && !api.peek(`butler.butlerlabs.dev/Team//${team}`)) {
        return {
          step,
          invariant: "left-after-delete",
          message: `namespace ${ns.metadata.name} outlived its Team`,
        };
      }
    }
    return undefined;
  }
}

/** Whether a pool's ledger is the one its checkpoint names, and not being rebuilt. */
function ledgerCurrent(pool: Obj): boolean {
  const ledger = pool.status?.ledger;
  const checkpoint = pool.metadata.annotations?.[CHECKPOINT_ANNOTATION];
  return checkpoint === ledger?.checkpoint && !ledger?.rebuilding &&
    (checkpoint === undefined || checkpoint.endsWith(`/${pool.metadata.uid}`));
}

/**
 * Objects whose deletion waits by design: a pool that still holds grants, a ProviderConfig still used, and the
 * namespace and IPAllocations waiting on such a pool.
 */
function heldOnPurpose(api: ApiServer, o: Obj, grants: readonly PoolGrant[]): boolean {
  if (o.kind === "NetworkPool") {
    return grants.some((g) => g.pool === `${o.metadata.namespace}/${o.metadata.name}`);
  }
  if (o.kind === "ProviderConfig") {
    return api.ofKind(GROUP, "TenantCluster").some((c) => c.spec.providerConfigRef?.name === o.metadata.name);
  }
  return false;
}

/** Two IPAllocations that both say Allocated with ranges that share an address, described; else `undefined`. */
/** Whether an allocation says Allocated with addresses of the range it records. */
function servedRecord(a: Obj, r: { family: number; start: bigint; end: bigint }): boolean {
  if (a.status?.phase !== "Allocated") return false;
  const s = parseAddress(a.status.startAddress ?? "");
  const e = parseAddress(a.status.endAddress ?? "");
  return !s || !e || (s.family === r.family && s.value <= r.end && r.start <= e.value);
}

function allocatedOverlaps(allocations: readonly Obj[]): string | undefined {
  const ranges = allocations.filter((a) => a.status?.phase === "Allocated").flatMap((a) => {
    const s = parseAddress(a.status.startAddress ?? "");
    const e = parseAddress(a.status.endAddress ?? "");
    return s && e ? [{ a, family: s.family, start: s.value, end: e.value }] : [];
  }).sort((
    x,
    y,
  ) => (x.family !== y.family
    ? (x.family < y.family ? -1 : 1)
    : x.start < y.start
    ? -1
    : x.start > y.start
    ? 1
    : 0)
  );
  let reach: typeof ranges[number] | undefined;
  for (const c of ranges) {
    const p = reach;
    if (!p || p.family !== c.family || c.end > p.end) reach = c;
    if (p && p.family === c.family && c.start <= p.end) {
      return `${p.a.metadata.namespace}/${p.a.metadata.name} (${p.a.status.startAddress}-${p.a.status.endAddress}) and ${c.a.metadata.namespace}/${c.a.metadata.name} (${c.a.status.startAddress}-${c.a.status.endAddress}) both say Allocated`;
    }
  }
  return undefined;
}
