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
import type { HookContext } from "../../lib/hook/mod.ts";
import {
  enumerateRange,
  formatAddress,
  formatRange,
  MAX_ENUMERATION,
  rangeSize,
} from "../../lib/ipam/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { findGrant } from "../../lib/pool_ledger/mod.ts";
import { IPAllocationSpec } from "../../lib/api/mod.ts";

/** The four lifecycle phases of an IPAllocation. */
export type AllocationPhase = "Pending" | "Allocated" | "Failed" | "Released";

function poolRefOf(spec: unknown): { name: string; namespace: string } | undefined {
  const parsed = IPAllocationSpec.safeParse(spec);
  if (!parsed.success) return undefined;
  return { name: parsed.data.poolRef.name, namespace: parsed.data.poolRef.namespace ?? SYSTEM_NAMESPACE };
}

/** The IPAllocation customize hook: the NetworkPool named in `spec.poolRef`. */
export function customizeIPAllocation(request: CustomizeRequest): CustomizeResponse {
  const ref = poolRefOf(request.parent.spec);
  if (!ref) return { relatedResources: [] };
  return {
    relatedResources: [{
      apiVersion: API_VERSION,
      resource: "networkpools",
      namespace: ref.namespace,
      names: [ref.name],
    }],
  };
}

interface Projection {
  phase: AllocationPhase;
  fields: Record<string, unknown>;
  conditions: ConditionInput[];
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
  if (!pool) {
    return notReady("Pending", "PoolNotFound", `NetworkPool ${poolName} not found`);
  }
  const status = (typeof pool.status === "object" && pool.status !== null ? pool.status : {}) as {
    failures?: Record<string, unknown>;
  };
  const uid = obj.metadata.uid ?? "";
  const grant = findGrant(status, uid);
  if (grant) {
    const { family, range } = grant;
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
    return {
      phase: "Allocated",
      fields: {
        cidr,
        startAddress: formatAddress(family, range.start),
        endAddress: formatAddress(family, range.end),
        ...(addresses.ok ? { addresses: addresses.value } : {}),
        allocatedCount: Number(rangeSize(range) > 2147483647n ? 2147483647n : rangeSize(range)),
        allocatedAt: grant.grantedAt,
        allocatedBy: `NetworkPool ${poolName}`,
      },
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Allocated",
          message: `allocated ${cidr} from NetworkPool ${poolName}`,
        },
        ...listed,
      ],
    };
  }
  const failure = status.failures?.[uid];
  if (typeof failure === "string") {
    return notReady("Failed", "AllocationFailed", failure);
  }
  return notReady("Pending", "WaitingForPool", `waiting for NetworkPool ${poolName} to grant addresses`);
}

function labelsOf(spec: unknown): Record<string, string> {
  const parsed = IPAllocationSpec.safeParse(spec);
  if (!parsed.success) return {};
  return { [LABELS.networkPool]: parsed.data.poolRef.name, [LABELS.allocationType]: parsed.data.type };
}

/**
 * The IPAllocation sync hook. It chooses nothing: it sets the `network-pool` and `allocation-type` labels from
 * the spec (so the pool sees it) and projects its grant, failure or wait from the pool's ledger into status.
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
  return {
    labels: labelsOf(obj.spec),
    status: {
      observedGeneration: generation,
      phase: p.phase,
      ...p.fields,
      conditions: conditions(p.conditions, previous, context.now, generation),
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
