/**
 * NetworkPools as Cluster API IPAM pools (docs/design.md#cluster-api-ipam-pools). A DecoratorController over
 * `IPAddressClaim`s (`ipam.cluster.x-k8s.io/v1beta2`): a claim whose `poolRef` is `{apiGroup: butler.butlerlabs.dev,
 * kind: NetworkPool}` becomes one more allocation request, an IPAllocation of one address in the claim's namespace
 * (owned by the claim, so it goes with it), granted by the pool from the same ledger as every other grant. Once
 * granted, the hook writes the `IPAddress` (owned by the claim too) and the claim's status. Claims of other IPAM
 * providers are left alone: no attachment, no status.
 *
 * @module
 */
import { API_VERSION, GROUP, KINDS, LABELS, requireDelivered } from "../../lib/butler/mod.ts";
import { type ConditionInput, conditions, PreviousConditions } from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  groupKey,
  keepObserved,
  type RelatedObject,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { formatAddress, MESSAGES, readPoolSpec } from "../../lib/ipam/mod.ts";
import {
  CAPI_IPAM_API_VERSION,
  claimsNetworkPool,
  type IPAddressClaimSpec,
  NetworkPoolSpec,
  recordOf,
  refusedRecord,
  refusedRecordMessage,
} from "../../lib/api/mod.ts";

/** The attachment types: the IPAllocation that asks the pool, and Cluster API's IPAddress that answers. */
export const CLAIM_ATTACHMENTS = [
  KINDS.IPAllocation,
  { apiVersion: CAPI_IPAM_API_VERSION, kind: "IPAddress" },
] as const;

/** The label naming the claim an IPAllocation serves. */
export const CLAIM_LABEL = `${GROUP}/ipaddressclaim`;

/** The IPAllocation of a claim: `claim-` and the claim's name, so it never takes a TenantCluster's name. */
export function claimAllocationName(claim: string): string {
  return `claim-${claim}`;
}

/** Longest claim name whose IPAllocation name is still a valid object name (253 characters). */
const MAX_CLAIM_NAME = 253 - claimAllocationName("").length;

/** The pools a claim may name: a NetworkPool of that name in any namespace, to say where it is when it is not in the claim's. */
function poolRule(spec: IPAddressClaimSpec) {
  return { apiVersion: API_VERSION, resource: "networkpools", names: [spec.poolRef.name] };
}

/** The IPAddressClaim customize hook: the NetworkPools of the name the claim's `poolRef` gives, for our claims. */
export function customizeIPAddressClaim(request: CustomizeRequest): CustomizeResponse {
  const spec = request.parent.spec;
  return { relatedResources: claimsNetworkPool(spec) ? [poolRule(spec)] : [] };
}

/** Cluster API's `Ready` reasons (ipam v1beta2), and ours while the pool has not answered yet. */
const REASON = {
  ready: "Ready",
  waiting: "WaitingForPool",
  writing: "WritingIPAddress",
  exhausted: "PoolExhausted",
  notReady: "PoolNotReady",
  failed: "AllocationFailed",
} as const;

/**
 * The IPAddressClaim sync hook. For a claim on a NetworkPool in its namespace: the IPAllocation of one address,
 * and once the pool has granted it, the IPAddress (`address`, `prefix`, `gateway`, `claimRef`, `poolRef`) and the
 * claim's `status.addressRef` with `Ready=True`. Until then `Ready=False` says why, with Cluster API's reasons:
 * `PoolExhausted`, `PoolNotReady` (no such pool in the claim's namespace, or the pool cannot grant), or
 * `AllocationFailed`. The status carries the same condition for v1beta1 readers (`deprecated.v1beta1`).
 */
export function syncIPAddressClaim(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const claim = request.object;
  // Another provider's claim has no attachment of ours; one whose spec no longer reads keeps what it has.
  if (!claimsNetworkPool(claim.spec)) {
    return { attachments: keepObserved(request.attachments, CLAIM_ATTACHMENTS) };
  }
  requireDelivered(
    { related: request.related, children: request.attachments },
    [poolRule(claim.spec)],
    CLAIM_ATTACHMENTS,
  );
  const ns = claim.metadata.namespace ?? "";
  const name = claim.metadata.name;
  const poolName = claim.spec.poolRef.name;
  const poolKey = `${ns}/${poolName}`;
  const pools = request.related[groupKey(KINDS.NetworkPool)] ?? {};
  const pool = pools[poolKey];
  const allocationName = claimAllocationName(name);
  const observed = request.attachments[groupKey(KINDS.IPAllocation)]?.[`${ns}/${allocationName}`];
  const previous = PreviousConditions.parse(
    (claim.status as { conditions?: unknown } | undefined)?.conditions,
  );
  const ready = (status: "True" | "False", reason: string, message: string) =>
    readyStatus(claim, previous, context, { type: "Ready", status, reason, message });

  if (name.length > MAX_CLAIM_NAME) {
    return {
      attachments: [],
      status: ready(
        "False",
        REASON.failed,
        `claim name is longer than ${MAX_CLAIM_NAME} characters: its IPAllocation could not be named`,
      ),
    };
  }
  // A pool that is gone holds no grant (its finalizer waits for them), but a request already made is kept, and so
  // is an address once written while its IPAllocation lives: that allocation keeps the grant it records until a
  // pool takes it back. An address whose IPAllocation was deleted or replaced is no longer held: it goes, so that
  // no machine is told an address the pool may hand to another.
  const allocation = pool || observed ? [allocationOf(ns, name, poolName)] : [];
  const { uid, poolStatus, address, refused } = granted(ns, name, poolName, pool, observed);
  const stale = staleAddress(request, `${ns}/${name}`, observed, refused ? null : address?.spec.address);
  const written = stale ? [] : keepObserved(request.attachments, [CLAIM_ATTACHMENTS[1]]);
  if (stale) {
    return {
      attachments: allocation,
      status: ready(
        "False",
        REASON.writing,
        `IPAddress ${ns}/${name} says ${stale}, which this claim no longer holds: replacing it`,
      ),
    };
  }
  if (!pool) {
    return {
      attachments: [...allocation, ...written],
      status: ready("False", REASON.notReady, poolNotFound(Object.keys(pools), poolKey, ns)),
    };
  }
  if (!address && written.length) return { attachments: [...allocation, ...written] };
  if (address) {
    const text = `${address.spec.address}/${address.spec.prefix} from NetworkPool ${poolKey}`;
    // Metacontroller writes a decorator's status before its attachments: the claim points at its IPAddress only
    // once the IPAddress is seen to exist, so a provider that follows addressRef always finds it.
    return {
      attachments: [...allocation, address],
      status: written.length
        ? { ...ready("True", REASON.ready, text), addressRef: { name } }
        : ready("False", REASON.writing, `${text} granted; writing its IPAddress`),
    };
  }
  if (refused) return { attachments: allocation, status: ready("False", REASON.failed, refused) };
  const [reason, message] = whyWaiting(poolStatus, uid, poolKey);
  return { attachments: allocation, status: ready("False", reason, message) };
}

/** A related pool's status, as far as a claim reads it. */
type PoolStatus = {
  failures?: Record<string, unknown>;
  conditions?: { type?: unknown; status?: unknown; reason?: unknown; message?: unknown }[];
};

/** The claim's IPAllocation UID, its pool's status, and the IPAddress of its grant once the pool holds one. */
function granted(
  ns: string,
  name: string,
  poolName: string,
  pool: RelatedObject | undefined,
  observed: RelatedObject | undefined,
) {
  const uid = (observed?.metadata as { uid?: unknown } | undefined)?.uid;
  const poolStatus =
    (typeof pool?.status === "object" && pool.status !== null ? pool.status : {}) as PoolStatus;
  // The grant its IPAllocation records on itself: an address is told to a machine only once it is durable.
  const record = observed ? recordOf(observed.metadata) : undefined;
  const ours = pool && typeof uid === "string" && record?.pool === `${ns}/${poolName}` ? record : undefined;
  // A record whose addresses the pool's ledger grants to another holder is no grant: no machine is told it.
  const refused = ours && refusedRecord(pool, uid as string, ours);
  const grant = refused ? undefined : ours;
  const address = grant &&
    addressOf(ns, name, poolName, pool!, formatAddress(grant.family, grant.range.start), uid as string);
  return { uid, poolStatus, address, refused: refused ? refusedRecordMessage(ours!, refused) : undefined };
}

/** The annotation naming the IPAllocation (by UID) whose grant an IPAddress states. */
export const ALLOCATION_UID_ANNOTATION = `${GROUP}/ipallocation-uid`;

/**
 * The address of the claim's written IPAddress when it no longer states this claim's grant: its IPAllocation is
 * gone, being deleted or replaced (another UID), or the grant is another address or none (`null`: its record is
 * refused by the pool). `undefined` when it holds.
 */
function staleAddress(
  request: DecoratorRequest,
  key: string,
  allocation: RelatedObject | undefined,
  granted: string | null | undefined,
): string | undefined {
  const written = request.attachments[groupKey(CLAIM_ATTACHMENTS[1])]?.[key];
  if (!written) return undefined;
  const said = String((written.spec as { address?: unknown } | undefined)?.address ?? "");
  const meta = allocation?.metadata as { uid?: unknown; deletionTimestamp?: unknown } | undefined;
  const from = (written.metadata as { annotations?: Record<string, unknown> }).annotations?.[
    ALLOCATION_UID_ANNOTATION
  ];
  const replaced = from !== undefined && from !== meta?.uid;
  return !meta || meta.deletionTimestamp || replaced || (granted !== undefined && granted !== said)
    ? said
    : undefined;
}

/** A claim's pool not found: a claim uses a pool of its own namespace, and those of others are named. */
function poolNotFound(related: readonly string[], poolKey: string, ns: string): string {
  const elsewhere = related.filter((k) => k !== poolKey).sort();
  const where = elsewhere.length
    ? `; a claim can only use a NetworkPool in its own namespace, and ${elsewhere.join(", ")} ${
      elsewhere.length === 1 ? "is" : "are"
    } not in ${ns}`
    : "";
  return `NetworkPool ${poolKey} not found${where}`;
}

/**
 * Why a claim has no address yet, with Cluster API's reason. A pool that cannot grant (invalid, overlapping
 * another, being deleted) says so before any one refusal does.
 */
function whyWaiting(
  poolStatus: PoolStatus,
  uid: unknown,
  poolKey: string,
): [string, string] {
  const failure = typeof uid === "string" ? poolStatus.failures?.[uid] : undefined;
  const poolReady = Array.isArray(poolStatus.conditions)
    ? poolStatus.conditions.find((c) => c?.type === "Ready")
    : undefined;
  if (poolReady?.status === "False") {
    return [
      REASON.notReady,
      `NetworkPool ${poolKey} is not ready: ${String(poolReady.message ?? poolReady.reason)}`,
    ];
  }
  if (typeof failure === "string") {
    return [failure.startsWith(MESSAGES.exhausted) ? REASON.exhausted : REASON.failed, failure];
  }
  return [REASON.waiting, `waiting for NetworkPool ${poolKey} to grant an address`];
}

/** The claim's status: the Ready condition (kept stable as conditions are), and its v1beta1 twin. */
function readyStatus(
  claim: DecoratorRequest["object"],
  previous: PreviousConditions,
  context: HookContext,
  condition: ConditionInput,
): Record<string, unknown> {
  const [current] = conditions([condition], previous, context.now, claim.metadata.generation);
  const { type, status, reason, message, lastTransitionTime } = current!;
  const severity = status === "True"
    ? {}
    : { severity: reason === REASON.waiting || reason === REASON.writing ? "Info" : "Warning" };
  return {
    conditions: [current],
    deprecated: {
      v1beta1: { conditions: [{ type, status, ...severity, reason, message, lastTransitionTime }] },
    },
  };
}

/** The IPAllocation a claim makes: one address, of type `nodes`, from the pool in its namespace. */
function allocationOf(ns: string, claim: string, pool: string) {
  return {
    ...KINDS.IPAllocation,
    metadata: {
      name: claimAllocationName(claim),
      namespace: ns,
      labels: { [LABELS.networkPool]: pool, [CLAIM_LABEL]: claim },
    },
    spec: { poolRef: { name: pool, namespace: ns }, type: "nodes", count: 1 },
  };
}

/**
 * The IPAddress that answers a claim: the granted address, the pool's prefix and gateway, and both references;
 * `undefined` while the pool's spec cannot be read (no prefix to give).
 */
function addressOf(
  ns: string,
  claim: string,
  poolName: string,
  pool: RelatedObject,
  address: string,
  allocationUid: string,
) {
  const spec = NetworkPoolSpec.safeParse(pool.spec);
  const read = spec.success ? readPoolSpec(spec.data) : undefined;
  if (!read?.ok) return undefined;
  const prefix = spec.data!.prefix ?? read.cidr.prefix;
  return {
    apiVersion: CAPI_IPAM_API_VERSION,
    kind: "IPAddress",
    metadata: { name: claim, namespace: ns, annotations: { [ALLOCATION_UID_ANNOTATION]: allocationUid } },
    spec: {
      address,
      prefix,
      ...(spec.data!.gateway ? { gateway: spec.data!.gateway } : {}),
      claimRef: { name: claim },
      poolRef: { apiGroup: GROUP, kind: "NetworkPool", name: poolName },
    },
  };
}
