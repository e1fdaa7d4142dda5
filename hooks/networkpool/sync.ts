import {
  API_VERSION,
  KINDS,
  LABELS,
  requireDelivered,
  statusNumber,
  SYSTEM_NAMESPACE,
} from "../../lib/butler/mod.ts";
import {
  type Condition,
  type ConditionInput,
  conditions,
  listNames,
  PreviousConditions,
  truncate,
} from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  formatPath,
  readGroup,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import {
  Allocator,
  type Capacity,
  type Family,
  type PoolModel,
  readPoolSpec,
  type SpecProblem,
} from "../../lib/ipam/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import {
  type Grant,
  LEDGER_FULL_MESSAGE,
  MAX_FAILURE_MESSAGE,
  MAX_FAILURES,
  MAX_GRANTS,
  readLedger,
  writeLedger,
} from "./ledger.ts";
import {
  DEFAULT_LB_POOL_PER_TENANT,
  DEFAULT_NODES_PER_TENANT,
  type IPAllocationSpec,
  NetworkPoolSpec,
  ObservedAllocation,
} from "../../lib/api/mod.ts";

/** Utilisation thresholds of the capacity conditions, in percent (at or above means True). */
export const CAPACITY_THRESHOLDS = [
  { type: "CapacityWarning", percent: 70 },
  { type: "CapacityCritical", percent: 85 },
  { type: "CapacityExhausted", percent: 95 },
] as const;

/** Seconds until failed allocations are tried again even if nothing else changes (upstream's pool interval). */
export const RETRY_SECONDS = 60;

/**
 * The NetworkPool customize hook: the IPAllocations labelled for this pool, in every namespace.
 */
export function customizeNetworkPool(request: CustomizeRequest): CustomizeResponse {
  return {
    relatedResources: [{
      apiVersion: API_VERSION,
      resource: "ipallocations",
      labelSelector: { matchLabels: { [LABELS.networkPool]: request.parent.metadata.name } },
    }],
  };
}

interface Observed {
  /** UIDs of every related IPAllocation, understood or not: their grants are kept. */
  readonly present: ReadonlySet<string>;
  /** Valid allocations that reference this pool. */
  readonly allocations: readonly ObservedAllocation[];
  /** Allocations whose spec could not be read, with why. */
  readonly invalid: readonly { uid: string; message: string }[];
  /** `namespace/name` by UID, for messages. */
  readonly names: ReadonlyMap<string, string>;
}

function observe(request: DecoratorRequest): Observed {
  const pool = request.object.metadata;
  const present = new Set<string>();
  const names = new Map<string, string>();
  const allocations: ObservedAllocation[] = [];
  const invalid: { uid: string; message: string }[] = [];
  for (const entry of readGroup(request.related, KINDS.IPAllocation, ObservedAllocation)) {
    const uid = entry.raw.metadata.uid;
    if (!uid) continue;
    present.add(uid);
    names.set(uid, entry.key);
    if (!entry.ok) {
      invalid.push({ uid, message: `invalid IPAllocation ${entry.key}: ${entry.error}` });
      continue;
    }
    const ref = entry.value.spec.poolRef;
    if (ref.name === pool.name && (ref.namespace ?? SYSTEM_NAMESPACE) === (pool.namespace ?? "")) {
      allocations.push(entry.value);
    }
  }
  return { present, allocations, invalid, names };
}

/** FIFO: creationTimestamp, then namespace/name. */
function fifo(a: ObservedAllocation, b: ObservedAllocation): number {
  const ta = a.metadata.creationTimestamp ?? "";
  const tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

function requestedCount(spec: IPAllocationSpec, pool: NetworkPoolSpec): number {
  const defaults = pool.tenantAllocation?.defaults;
  return spec.count ??
    (spec.type === "nodes"
      ? defaults?.nodesPerTenant ?? DEFAULT_NODES_PER_TENANT
      : defaults?.lbPoolPerTenant ?? DEFAULT_LB_POOL_PER_TENANT);
}

interface Figures {
  totalIPs: number;
  allocatedIPs: number;
  availableIPs: number;
  allocationCount: number;
  fragmentationPercent: number;
  largestFreeBlock: number;
}

function figuresOf(c: Capacity, grants: number): Figures {
  return {
    totalIPs: statusNumber(c.total),
    allocatedIPs: statusNumber(c.allocated),
    availableIPs: statusNumber(c.available),
    allocationCount: grants,
    fragmentationPercent: c.fragmentationPercent,
    largestFreeBlock: statusNumber(c.largestFreeBlock),
  };
}

const FIGURE_KEYS = [
  "totalIPs",
  "allocatedIPs",
  "availableIPs",
  "allocationCount",
  "fragmentationPercent",
  "largestFreeBlock",
] as const;

function previousFigures(status: Record<string, unknown>): Partial<Figures> {
  return Object.fromEntries(
    FIGURE_KEYS.flatMap((k) => (typeof status[k] === "number" ? [[k, status[k]]] : [])),
  ) as Partial<Figures>;
}

function capacityConditions(c: Capacity): ConditionInput[] {
  const percent = c.total === 0n ? 100 : Number((c.allocated * 100n) / c.total);
  const message = `Pool utilization is ${percent}% (${c.allocated}/${c.total} IPs)`;
  return CAPACITY_THRESHOLDS.map(({ type, percent: threshold }) => {
    const above = c.total === 0n || c.allocated * 100n >= BigInt(threshold) * c.total;
    return {
      type,
      status: above ? "True" : "False",
      reason: above ? "UtilizationAboveThreshold" : "UtilizationBelowThreshold",
      message,
    };
  });
}

/** Capacity conditions when figures cannot be computed: the previous ones, else Unknown. */
function carriedCapacityConditions(
  previous: PreviousConditions,
  raw: unknown,
  why: string,
): ConditionInput[] {
  const prior = Array.isArray(raw) ? (raw as Partial<Condition>[]) : [];
  return CAPACITY_THRESHOLDS.map(({ type }) => {
    const p = prior.find((c) => c?.type === type);
    const known = previous.find((c) => c.type === type);
    return known && p && typeof p.reason === "string" && typeof p.message === "string"
      ? { type, status: known.status, reason: p.reason, message: p.message }
      : { type, status: "Unknown", reason: why, message: "capacity unknown until the spec is valid" };
  });
}

function problemText(problems: readonly SpecProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join("; ");
}

function specProblems(spec: unknown): {
  spec?: NetworkPoolSpec;
  model?: Omit<PoolModel, "allocations">;
  problems: SpecProblem[];
} {
  const parsed = NetworkPoolSpec.safeParse(spec);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((i) => ({
        path: formatPath(["spec", ...i.path]),
        message: i.message,
      })),
    };
  }
  const read = readPoolSpec(parsed.data);
  return read.ok ? { spec: parsed.data, model: read.pool, problems: [] } : {
    spec: parsed.data,
    problems: read.problems.map((p) => ({ path: `spec.${p.path}`, message: p.message })),
  };
}

/** Why a NetworkPool may not go yet: its finalizer's condition and the admission denial say the same. */
export function poolDeletionBlockedMessage(allocations: readonly string[]): string {
  return `cannot delete NetworkPool: ${allocations.length} allocation(s) still hold addresses: ${
    listNames(allocations)
  }`;
}

/**
 * The NetworkPool sync and finalize hook: the pool's status is the allocation ledger, and this is the only
 * place where ranges are chosen.
 *
 * It keeps every grant whose IPAllocation still exists, drops the others, and (unless the pool is being
 * deleted or its spec is invalid) grants pending allocations in FIFO order with best-fit, or exactly their
 * pinned range. A grant never moves. Metacontroller writes a decorator's status with the resourceVersion the
 * hook saw, so a decision made on a stale ledger is rejected and retried on fresh data.
 */
export function syncNetworkPool(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const pool = request.object;
  requireDelivered(
    request,
    customizeNetworkPool({ controller: request.controller, parent: pool }).relatedResources,
  );
  const generation = pool.metadata.generation;
  const prevStatus = (typeof pool.status === "object" && pool.status !== null ? pool.status : {}) as Record<
    string,
    unknown
  >;
  const previous = PreviousConditions.parse(prevStatus.conditions);
  const poolName = `${pool.metadata.namespace ?? ""}/${pool.metadata.name}`;
  const observed = observe(request);

  const ledger = readLedger(prevStatus.grants);
  if (!ledger.ok) {
    // Never guess at what is allocated: keep the status as it is, grant nothing, say why.
    const conds = conditions(
      [
        {
          type: "Ready",
          status: "False",
          reason: "LedgerUnreadable",
          message: `status.grants has entries that cannot be read (${
            listNames(ledger.unreadable)
          }); no new grants until they are fixed or removed`,
        },
        ...carriedCapacityConditions(previous, prevStatus.conditions, "LedgerUnreadable"),
      ],
      previous,
      context.now,
      generation,
    );
    return {
      status: { ...prevStatus, observedGeneration: generation, conditions: conds },
      attachments: [],
      finalized: false,
    };
  }

  const grants: Grant[] = ledger.grants.filter((g) => observed.present.has(g.uid));
  const granted = new Set(grants.map((g) => g.uid));
  const pending = observed.allocations
    .filter((a) => !granted.has(a.metadata.uid) && !a.metadata.deletionTimestamp)
    .sort(fifo);
  const failures: [string, string][] = observed.invalid.map((i) => [i.uid, i.message]);
  const refuse = (uid: string, message: string) => failures.push([uid, message]);

  const { spec, model, problems } = specProblems(pool.spec);
  let figures: Partial<Figures>;
  let capacity: ConditionInput[];
  let ready: ConditionInput;

  if (problems.length || !spec || !model) {
    for (const a of pending) refuse(a.metadata.uid, `NetworkPool ${poolName} has an invalid spec`);
    figures = { ...previousFigures(prevStatus), allocationCount: grants.length };
    capacity = carriedCapacityConditions(previous, prevStatus.conditions, "InvalidSpec");
    ready = { type: "Ready", status: "False", reason: "InvalidSpec", message: problemText(problems) };
  } else {
    const family: Family = model.family;
    const allocator = Allocator.create({
      ...model,
      allocations: grants.filter((g) => g.family === family).map((g) => g.range),
    });
    const grantedAt = formatTime(context.now);
    for (const a of pending) {
      const uid = a.metadata.uid;
      if (request.finalizing) {
        refuse(uid, `NetworkPool ${poolName} is being deleted`);
        continue;
      }
      if (grants.length >= MAX_GRANTS) {
        refuse(uid, LEDGER_FULL_MESSAGE);
        continue;
      }
      const pin = a.spec.pinnedRange;
      const result = pin
        ? allocator.pin(pin.startAddress, pin.endAddress)
        : allocator.allocate(requestedCount(a.spec, spec));
      if (result.ok) grants.push({ uid, family, range: result.value, grantedAt });
      else refuse(uid, result.error.message);
    }
    const c = allocator.capacity();
    figures = figuresOf(c, grants.length);
    capacity = capacityConditions(c);
    ready = {
      type: "Ready",
      status: "True",
      reason: "Ready",
      message: `${c.available}/${c.total} IPs available (${grants.length} allocations)`,
    };
  }

  if (request.finalizing && grants.length) {
    const blocking = grants.map((g) => observed.names.get(g.uid) ?? g.uid).sort();
    ready = {
      type: "Ready",
      status: "False",
      reason: "DeletionBlocked",
      message: poolDeletionBlockedMessage(blocking),
    };
  }

  const recorded = failures.slice(0, MAX_FAILURES).map(([uid, m]) => [uid, truncate(m, MAX_FAILURE_MESSAGE)]);
  const status = {
    observedGeneration: generation,
    ...figures,
    conditions: conditions([ready, ...capacity], previous, context.now, generation),
    grants: writeLedger(grants),
    failures: Object.fromEntries(recorded),
  };
  return {
    status,
    attachments: [],
    ...(failures.length && !request.finalizing ? { resyncAfterSeconds: RETRY_SECONDS } : {}),
    ...(request.finalizing ? { finalized: grants.length === 0 } : {}),
  };
}
