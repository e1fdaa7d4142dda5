import { API_VERSION, KINDS, LABELS, requireDelivered, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { type ConditionInput, conditions, PreviousConditions } from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  formatPath,
  groupKey,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import {
  enumerateRange,
  formatAddress,
  formatRange,
  MAX_ENUMERATION,
  parseAddress,
  rangeSize,
} from "../../lib/ipam/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { findGrant } from "../../lib/pool_ledger/mod.ts";
import { z } from "zod";
import {
  CHECKPOINT_ANNOTATION,
  formatGrantRecord,
  GRANT_ANNOTATION,
  GRANT_CONFLICT,
  type GrantRecord,
  IPAllocationSpec,
  LEDGER_SEEN_ANNOTATION,
  ledgerTrusted,
  RecordedGrant,
  recordOf,
  refusedRecord,
  refusedRecordMessage,
  tenantClusterRefOf,
} from "../../lib/api/mod.ts";

/** The four lifecycle phases of an IPAllocation. */
export type AllocationPhase = "Pending" | "Allocated" | "Failed" | "Released";

function poolRefOf(spec: unknown): { name: string; namespace: string } | undefined {
  const parsed = IPAllocationSpec.safeParse(spec);
  if (!parsed.success) return undefined;
  return { name: parsed.data.poolRef.name, namespace: parsed.data.poolRef.namespace ?? SYSTEM_NAMESPACE };
}

/**
 * The IPAllocation customize hook: the NetworkPool named in `spec.poolRef`, and the TenantCluster named in
 * `spec.tenantClusterRef` when it is in the allocation's namespace (the only one that can own it).
 */
export function customizeIPAllocation(request: CustomizeRequest): CustomizeResponse {
  const ref = poolRefOf(request.parent.spec);
  if (!ref) return { relatedResources: [] };
  const ns = request.parent.metadata.namespace ?? "";
  const tc = tenantClusterRefOf(request.parent.spec, ns);
  return {
    relatedResources: [
      { apiVersion: API_VERSION, resource: "networkpools", namespace: ref.namespace, names: [ref.name] },
      ...(tc && tc.namespace === ns
        ? [{ apiVersion: API_VERSION, resource: "tenantclusters", namespace: ns, names: [tc.name] }]
        : []),
    ],
  };
}

interface Projection {
  phase: AllocationPhase;
  fields: Record<string, unknown>;
  conditions: ConditionInput[];
  /** Annotations to write: the grant's record, copied once from a trusted ledger, or the rebuild seen. */
  annotations?: Record<string, string>;
}

/** A projection without a grant: a phase and why it is not Ready. */
function notReady(phase: AllocationPhase, reason: string, message: string): Projection {
  return { phase, fields: {}, conditions: [{ type: "Ready", status: "False", reason, message }] };
}

function project(request: DecoratorRequest): Projection {
  const obj = request.object;
  const parsed = IPAllocationSpec.safeParse(obj.spec);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return notReady("Failed", "InvalidSpec", `${formatPath(["spec", ...issue.path])}: ${issue.message}`);
  }
  const ref = {
    name: parsed.data.poolRef.name,
    namespace: parsed.data.poolRef.namespace ?? SYSTEM_NAMESPACE,
  };
  const poolName = `${ref.namespace}/${ref.name}`;
  const pool = request.related[groupKey(KINDS.NetworkPool)]?.[poolName];
  const uid = obj.metadata.uid ?? "";
  const status = (typeof pool?.status === "object" && pool.status !== null ? pool.status : {}) as {
    failures?: Record<string, unknown>;
    ledger?: { checkpoint?: unknown; rebuilding?: unknown };
  };
  const own = recordOf(obj.metadata);
  if (own && own.pool === poolName) {
    // A record whose addresses the pool's ledger grants to another holder is not served: it waits, kept.
    const refused = refusedRecord(pool, uid, own);
    if (refused) return notReady("Pending", GRANT_CONFLICT, refusedRecordMessage(own, refused));
    return fromRecord(own, pool ? findGrant(status, uid) : undefined, pool);
  }
  const recorded = recordedGrant(obj.status, poolName);
  if (!pool) {
    return recorded
      ? keptRecord(recorded, `NetworkPool ${poolName} not found`)
      : notReady("Pending", "PoolNotFound", `NetworkPool ${poolName} not found`);
  }
  // Only a ledger whose checkpoint is the pool's is copied: one being rebuilt is not yet the truth.
  const annotated = (pool.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations?.[
    CHECKPOINT_ANNOTATION
  ];
  const trusted = ledgerTrusted(annotated, status.ledger?.checkpoint);
  const grant = trusted ? findGrant(status, uid) : undefined;
  if (grant) {
    // Recorded and reported by the same sync: Metacontroller writes the status, then the record, fenced by the
    // status write's resourceVersion. A status written without its record (the second write lost) still states
    // the grant, which a rebuilt pool takes back first; the next sync writes the record.
    const record = { pool: poolName, family: grant.family, range: grant.range, grantedAt: grant.grantedAt };
    return {
      ...fromRecord(record, grant, pool),
      annotations: { [GRANT_ANNOTATION]: formatGrantRecord(record) },
    };
  }
  const rebuilding = status.ledger?.rebuilding;
  if (trusted && typeof rebuilding === "string") {
    // Says which rebuild it has seen (the same answer again once it is written: Metacontroller skips it), and
    // keeps a grant its status states: the pool takes it back once every allocation has seen the rebuild.
    const seen = { [LEDGER_SEEN_ANNOTATION]: rebuilding };
    return recorded
      ? { ...keptRecord(recorded, `NetworkPool ${poolName} is rebuilding its ledger`), annotations: seen }
      : { ...waiting(poolName), annotations: seen };
  }
  const failure = status.failures?.[uid];
  if (typeof failure === "string") {
    return notReady("Failed", "AllocationFailed", failure);
  }
  if (!recorded) return waiting(poolName);
  // A grant its status states (written before records) is refused alike when the ledger gives it to another.
  const stated = statedRecord(recorded, poolName);
  const refused = stated && refusedRecord(pool, uid, stated);
  return refused
    ? notReady("Pending", GRANT_CONFLICT, refusedRecordMessage(stated, refused))
    : keptRecord(recorded, `NetworkPool ${poolName} holds no grant for it`);
}

/** Waiting for the pool to grant (or for the grant's record to be seen on the object). */
function waiting(poolName: string): Projection {
  return notReady("Pending", "WaitingForPool", `waiting for NetworkPool ${poolName} to grant addresses`);
}

/**
 * The grant the allocation records on itself: Allocated, whatever the pool's ledger says (the record is the
 * truth, the ledger its index); Ready once the pool's ledger holds the same range.
 */
function fromRecord(
  record: GrantRecord,
  indexed: { range: { start: bigint; end: bigint } } | undefined,
  pool: unknown,
): Projection {
  const { family, range } = record;
  const cidr = formatRange(family, range);
  const addresses = enumerateRange(family, range);
  const listed: ConditionInput[] = addresses.ok ? [] : [{
    type: "AddressesListed",
    status: "False",
    reason: "TooManyAddresses",
    message: `status.addresses is omitted: ${
      rangeSize(range)
    } addresses exceed the ${MAX_ENUMERATION} that are listed`,
  }];
  const poolName = `NetworkPool ${record.pool}`;
  const held = indexed && indexed.range.start === range.start && indexed.range.end === range.end;
  return {
    phase: "Allocated",
    fields: {
      cidr,
      startAddress: formatAddress(family, range.start),
      endAddress: formatAddress(family, range.end),
      ...(addresses.ok ? { addresses: addresses.value } : {}),
      allocatedCount: Number(rangeSize(range) > 2147483647n ? 2147483647n : rangeSize(range)),
      allocatedAt: record.grantedAt,
      allocatedBy: poolName,
    },
    conditions: [
      held
        ? {
          type: "Ready",
          status: "True",
          reason: "Allocated",
          message: `allocated ${cidr} from ${poolName}`,
        }
        : {
          type: "Ready",
          status: "False",
          reason: "GrantNotInLedger",
          message: `${poolName} ${
            pool ? "holds no grant for it yet" : "not found"
          }: keeping ${cidr}, recorded on this IPAllocation, until the pool takes the grant back`,
        },
      ...listed,
    ],
  };
}

/** The grant fields an Allocated status keeps: what the tenant uses until a pool takes the grant back. */
const GRANT_FIELDS = [
  "cidr",
  "startAddress",
  "endAddress",
  "addresses",
  "allocatedCount",
  "allocatedAt",
  "allocatedBy",
];

/** The grant the allocation's own status records from `pool`, if it was Allocated from it. */
function recordedGrant(status: unknown, pool: string): Record<string, unknown> | undefined {
  const s = RecordedGrant.safeParse(status);
  if (!s.success || s.data.allocatedBy !== `NetworkPool ${pool}`) return undefined;
  const all = status as Record<string, unknown>;
  return Object.fromEntries(GRANT_FIELDS.filter((k) => k in all).map((k) => [k, all[k]]));
}

/** The grant an Allocated status states, as a record (its time as stated, else none). */
function statedRecord(fields: Record<string, unknown>, pool: string): GrantRecord | undefined {
  const start = parseAddress(String(fields.startAddress ?? ""));
  const end = parseAddress(String(fields.endAddress ?? ""));
  if (!start || !end || start.family !== end.family || end.value < start.value) return undefined;
  return { pool, family: start.family, range: { start: start.value, end: end.value }, grantedAt: "" };
}

/**
 * An Allocated allocation whose pool lost its grant (the pool deleted past its finalizer, perhaps created again):
 * it keeps the addresses it records, which its tenant still uses, until a pool of that name takes them back (the
 * pool gives recorded grants back first) or refuses them (then it is Failed).
 */
function keptRecord(fields: Record<string, unknown>, why: string): Projection {
  return {
    phase: "Allocated",
    fields,
    conditions: [{
      type: "Ready",
      status: "False",
      reason: "GrantNotInLedger",
      message:
        `${why}: keeping ${fields.startAddress}-${fields.endAddress} until the pool takes the grant back`,
    }],
  };
}

/** The label Metacontroller selects a CompositeController's children by (`generateSelector: true`). */
export const CONTROLLER_UID_LABEL = "controller-uid";

/** The TenantCluster an allocation names, as far as adopting needs it (a related object is read, never trusted). */
const RelatedCluster = z.object({
  metadata: z.object({ uid: z.string().min(1), deletionTimestamp: z.string().nullish() }),
});

/** How an allocation stands with the TenantCluster it names: its labels and the `TenantClusterBound` condition. */
interface Binding {
  readonly labels: Record<string, string>;
  readonly condition?: ConditionInput;
}

/**
 * The seed's labels from the spec (`network-pool`, `allocation-type`, and for an allocation naming a
 * TenantCluster `team` and `tenant`, so the pool and the TenantCluster see it), and a hand-made allocation's
 * binding to its TenantCluster: once both exist, the `controller-uid` label of that TenantCluster makes
 * Metacontroller adopt it (owner reference, controller), so the cluster uses it, deleting the cluster releases
 * it, and Kubernetes' garbage collector deletes it should the cluster go any other way. An allocation already
 * owned by a controller keeps its owner.
 */
function bindingOf(request: DecoratorRequest): Binding {
  const obj = request.object;
  const parsed = IPAllocationSpec.safeParse(obj.spec);
  if (!parsed.success) return { labels: {} };
  const ns = obj.metadata.namespace ?? "";
  const labels: Record<string, string> = {
    [LABELS.networkPool]: parsed.data.poolRef.name,
    [LABELS.allocationType]: parsed.data.type,
  };
  const ref = tenantClusterRefOf(obj.spec, ns);
  if (!ref) return { labels };
  const bound = (status: "True" | "False", reason: string, message: string) => ({
    labels,
    condition: { type: "TenantClusterBound", status, reason, message } as ConditionInput,
  });
  if (ref.namespace !== ns) {
    return bound(
      "False",
      "OtherNamespace",
      `spec.tenantClusterRef names ${ref.namespace}/${ref.name}, outside the allocation's namespace ${ns}: no TenantCluster can own it`,
    );
  }
  labels[LABELS.team] = ns;
  labels[LABELS.tenant] = ref.name;
  // The envelope does not check ownerReferences' items: a malformed one owns nothing.
  const owners = (Array.isArray(obj.metadata.ownerReferences) ? obj.metadata.ownerReferences : []) as (
    | { kind?: string; name?: string; controller?: boolean }
    | null
  )[];
  const controller = owners.find((o) => typeof o === "object" && o !== null && o.controller === true);
  if (controller) {
    return controller.kind === KINDS.TenantCluster.kind && controller.name === ref.name
      ? bound("True", "Owned", `owned by TenantCluster ${ns}/${ref.name}`)
      : bound(
        "False",
        "OwnedElsewhere",
        `owned by ${controller.kind} ${controller.name}, not by the TenantCluster it names`,
      );
  }
  const tc = RelatedCluster.safeParse(request.related[groupKey(KINDS.TenantCluster)]?.[`${ns}/${ref.name}`]);
  if (!tc.success || tc.data.metadata.deletionTimestamp) {
    return bound(
      "False",
      "TenantClusterNotFound",
      `TenantCluster ${ns}/${ref.name} ${
        tc.success ? "is being deleted" : "does not exist yet"
      }: the allocation holds its addresses as a reservation`,
    );
  }
  labels[CONTROLLER_UID_LABEL] = tc.data.metadata.uid;
  return bound("False", "Adopting", `TenantCluster ${ns}/${ref.name} is adopting it`);
}

/**
 * The IPAllocation sync hook. It chooses nothing: it sets the seed's labels from the spec (so the pool sees it),
 * binds a hand-made allocation to the TenantCluster it names (see {@linkcode bindingOf}), and projects its grant,
 * failure or wait from the pool's ledger into status.
 */
export function syncIPAllocation(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const obj = request.object;
  requireDelivered(
    request,
    customizeIPAllocation({ controller: request.controller, parent: obj }).relatedResources,
  );
  const generation = obj.metadata.generation;
  const previous = PreviousConditions.parse((obj.status as { conditions?: unknown } | undefined)?.conditions);
  const p = project(request);
  const binding = bindingOf(request);
  return {
    labels: binding.labels,
    ...(p.annotations ? { annotations: p.annotations } : {}),
    status: {
      observedGeneration: generation,
      phase: p.phase,
      ...p.fields,
      conditions: conditions(
        [...p.conditions, ...(binding.condition ? [binding.condition] : [])],
        previous,
        context.now,
        generation,
      ),
    },
    attachments: [],
  };
}

/**
 * The IPAllocation finalize hook: phase `Released` with `releasedAt` (kept once set), then, once that status
 * is observed, `finalized`. The pool drops the grant when the object is gone.
 */
export function finalizeIPAllocation(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const obj = request.object;
  const prev = (obj.status ?? {}) as Record<string, unknown>;
  const releasedAt = typeof prev.releasedAt === "string" ? prev.releasedAt : formatTime(context.now);
  const previous = PreviousConditions.parse(prev.conditions);
  const generation = obj.metadata.generation;
  const {
    phase: _phase,
    conditions: _conditions,
    releasedAt: _releasedAt,
    observedGeneration: _gen,
    ...kept
  } = prev;
  return {
    status: {
      observedGeneration: generation,
      phase: "Released",
      ...kept,
      releasedAt,
      conditions: conditions(
        [{ type: "Ready", status: "False", reason: "Released", message: "addresses released to the pool" }],
        previous,
        context.now,
        generation,
      ),
    },
    attachments: [],
    finalized: prev.phase === "Released",
  };
}
