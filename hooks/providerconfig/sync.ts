import { API_VERSION, KINDS, requireDelivered, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { type ConditionInput, conditions, listNames, PreviousConditions } from "../../lib/conditions/mod.ts";
import {
  type CustomizeRequest,
  type CustomizeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  formatPath,
  groupKey,
  type RelatedResourceRule,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { DEFAULT_NODES_PER_TENANT } from "../../lib/api/mod.ts";
import { checkCredentials, type CredentialCheck } from "./credentials.ts";
import { type CapacityFigures, type ReportedCapacity, reportedCapacity } from "./capacity.ts";
import { formatFieldError, validateProviderConfig } from "./rules.ts";
import {
  CLOUD_PROVIDERS,
  credentialsZoneError,
  effectiveZone,
  LB_DEFAULTS,
  ProviderConfigSpec,
  scopeZoneError,
} from "../../lib/api/mod.ts";
import { credentialsNamespaceOf, scopeTeamOf } from "./references.ts";

const SECRET = { apiVersion: "v1", kind: "Secret" } as const;

function secretRefOf(pc: { metadata: { namespace?: string | undefined } }, spec: ProviderConfigSpec) {
  return { namespace: credentialsNamespaceOf({ ...pc, spec }), name: spec.credentialsRef.name };
}

/** Why the credentials Secret is out of this ProviderConfig's trust zone (lib/api/references.ts), if it is. */
function credentialsOutOfZone(
  pc: { metadata: { namespace?: string | undefined } },
  spec: ProviderConfigSpec,
): string | undefined {
  return credentialsZoneError(pc.metadata.namespace ?? "", secretRefOf(pc, spec).namespace);
}

/**
 * The ProviderConfig customize hook: its credentials Secret (not one out of its trust zone: that is never read), the NetworkPools in `poolRefs` (in the
 * ProviderConfig's namespace), and, once it is being deleted, every TenantCluster (to know which still reference
 * it). Only the finalizer reads the clusters: relating them for the whole life of the ProviderConfig would send
 * every cluster with every sync and re-sync every ProviderConfig on every cluster's status write. Setting
 * `deletionTimestamp` bumps `metadata.generation`, so Metacontroller asks this hook again when deletion starts.
 */
export function customizeProviderConfig(request: CustomizeRequest): CustomizeResponse {
  const pc = request.parent;
  const rules: RelatedResourceRule[] = pc.metadata.deletionTimestamp
    ? [{ apiVersion: API_VERSION, resource: "tenantclusters" }]
    : [];
  const parsed = ProviderConfigSpec.safeParse(pc.spec);
  if (!parsed.success) return { relatedResources: rules };
  const ref = secretRefOf(pc, parsed.data);
  const pools = [...new Set((parsed.data.network?.poolRefs ?? []).map((p) => p.name))].sort();
  const secret = credentialsOutOfZone(pc, parsed.data) === undefined
    ? [{ apiVersion: "v1", resource: "secrets", namespace: ref.namespace, names: [ref.name] }]
    : [];
  return {
    relatedResources: [
      ...secret,
      ...(pools.length
        ? [{
          apiVersion: API_VERSION,
          resource: "networkpools",
          namespace: pc.metadata.namespace ?? "",
          names: pools,
        }]
        : []),
      ...rules,
    ],
  };
}

/** How many addresses one tenant takes from the pools, as the TenantCluster controller would ask for them. */
export interface TenantFootprint {
  readonly nodeIPs: number;
  readonly lbIPs: number;
}

/**
 * Node IPs per tenant: `tenantAllocation.defaults.nodesPerTenant` of the first existing pool in priority order
 * (else 5); LB IPs: `defaultPoolSize` (static, else 8) or `initialPoolSize` (elastic, else 2). Each clamped to
 * `quotaPerTenant`, as the TenantCluster controller clamps them.
 */
export function tenantFootprint(
  spec: ProviderConfigSpec,
  firstPoolNodesPerTenant: number | undefined,
): TenantFootprint {
  const lb = spec.network?.loadBalancer;
  const quota = spec.network?.quotaPerTenant;
  const lbWanted = lb?.allocationMode === "elastic"
    ? lb.initialPoolSize ?? LB_DEFAULTS.initialPoolSize
    : lb?.defaultPoolSize ?? LB_DEFAULTS.defaultPoolSize;
  const nodeWanted = firstPoolNodesPerTenant ?? DEFAULT_NODES_PER_TENANT;
  return {
    nodeIPs: Math.min(nodeWanted, quota?.maxNodeIPs ?? nodeWanted),
    lbIPs: Math.min(lbWanted, quota?.maxLoadBalancerIPs ?? lbWanted),
  };
}

interface PoolView {
  name: string;
  priority: number;
  availableIPs: number;
  nodesPerTenant?: number;
}

function poolsOf(
  request: DecoratorRequest,
  spec: ProviderConfigSpec,
): { found: PoolView[]; missing: string[] } {
  const ns = request.object.metadata.namespace ?? "";
  const group = request.related[groupKey(KINDS.NetworkPool)] ?? {};
  const refs = (spec.network?.poolRefs ?? []).map((r, i) => ({ ...r, i }))
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0) || a.i - b.i);
  const found: PoolView[] = [];
  const missing: string[] = [];
  for (const ref of refs) {
    const pool = group[`${ns}/${ref.name}`] as
      | {
        status?: { availableIPs?: unknown };
        spec?: { tenantAllocation?: { defaults?: { nodesPerTenant?: unknown } } };
      }
      | undefined;
    if (!pool) {
      missing.push(ref.name);
      continue;
    }
    const available = pool.status?.availableIPs;
    const nodes = pool.spec?.tenantAllocation?.defaults?.nodesPerTenant;
    found.push({
      name: ref.name,
      priority: ref.priority ?? 0,
      availableIPs: typeof available === "number" && available > 0 ? Math.floor(available) : 0,
      ...(typeof nodes === "number" && nodes >= 1 ? { nodesPerTenant: nodes } : {}),
    });
  }
  return { found, missing };
}

/** The `PoolAvailable` condition of an ipam-mode ProviderConfig, with the capacity figures it reports. */
function poolAvailable(
  spec: ProviderConfigSpec,
  namespace: string | undefined,
  found: readonly PoolView[],
  missing: readonly string[],
  figures: CapacityFigures,
): ConditionInput {
  if (!spec.network?.poolRefs?.length) {
    return {
      type: "PoolAvailable",
      status: "False",
      reason: "ValidationFailed",
      message: "network.mode is 'ipam' but no poolRefs configured",
    };
  }
  if (!found.length) {
    return {
      type: "PoolAvailable",
      status: "False",
      reason: "PoolNotFound",
      message: `none of the configured pools exist in namespace ${namespace}: ${listNames(missing)}`,
    };
  }
  if (figures.availableIPs <= 0) {
    return {
      type: "PoolAvailable",
      status: "False",
      reason: "PoolExhausted",
      message: "all configured pools are exhausted",
    };
  }
  const suffix = missing.length ? `; missing pools: ${listNames(missing)}` : "";
  return {
    type: "PoolAvailable",
    status: "True",
    reason: "PoolAvailable",
    message: `${figures.availableIPs} IPs available (~${figures.estimatedTenants} tenants)${suffix}`,
  };
}

type Ref = { name?: unknown; namespace?: unknown } | undefined;

/**
 * The keys (`namespace/name`) of the TenantClusters that use the ProviderConfig `pc`: their
 * `spec.providerConfigRef` names it (namespace default butler-system), or, without one, the provider their Team
 * gave them as recorded in `status.effective.providerConfigRef`. Read by the finalizer and by admission alike.
 */
export function clustersReferencing(
  pc: { name: string; namespace?: string | undefined },
  clusters: Iterable<readonly [string, unknown]>,
): string[] {
  return [...clusters].flatMap(([key, tc]) => {
    const { spec, status } = (tc ?? {}) as {
      spec?: { providerConfigRef?: Ref };
      status?: { effective?: { providerConfigRef?: { value?: Ref } } };
    };
    const ref = spec?.providerConfigRef ?? status?.effective?.providerConfigRef?.value;
    const ns = typeof ref?.namespace === "string" && ref.namespace ? ref.namespace : SYSTEM_NAMESPACE;
    return ref?.name === pc.name && ns === pc.namespace ? [key] : [];
  }).sort();
}

/** Why a ProviderConfig may not go yet: the finalizer's condition and the admission denial say the same. */
export function deletionBlockedMessage(name: string, blocking: readonly string[]): string {
  return blocking.length === 1
    ? `cannot delete ProviderConfig "${name}": TenantCluster ${blocking[0]} still references it`
    : `cannot delete ProviderConfig "${name}": TenantClusters ${listNames(blocking)} still reference it`;
}

function referencingClusters(request: DecoratorRequest): string[] {
  return clustersReferencing(
    request.object.metadata,
    Object.entries(request.related[groupKey(KINDS.TenantCluster)] ?? {}),
  );
}

/**
 * The ProviderConfig sync and finalize hook. A pure hook cannot reach Harvester or AWS: `ready` means the
 * configuration passes every admission rule, the credentials Secret holds the keys its provider needs, and, in
 * IPAM mode, at least one referenced pool has room. `providerVersion` stays unset. Secret values are never
 * read beyond "present and non-empty", and never written anywhere.
 */
export function syncProviderConfig(request: DecoratorRequest, context: HookContext): DecoratorResponse {
  const pc = request.object;
  requireDelivered(
    request,
    customizeProviderConfig({ controller: request.controller, parent: pc }).relatedResources,
  );
  const generation = pc.metadata.generation;
  const prev = (pc.status ?? {}) as Record<string, unknown>;
  const previous = PreviousConditions.parse(prev.conditions);
  const parsed = ProviderConfigSpec.safeParse(pc.spec);
  const scope = scopeZoneError(pc.metadata.namespace ?? "", scopeTeamOf(pc));
  const configErrors = parsed.success
    ? [...validateProviderConfig(pc.spec).map(formatFieldError), ...(scope ? [scope] : [])]
    : parsed.error.issues.map((i) => `${formatPath(["spec", ...i.path])}: ${i.message}`);
  const credentials: CredentialCheck = parsed.success
    ? credentialsOf(request, parsed.data)
    : { ok: false, reason: "SecretNotFound", message: "spec cannot be read" };
  const pools = parsed.success ? poolCapacity(request, parsed.data, prev, previous, context.now) : undefined;

  const zone = parsed.success ? effectiveZone(parsed.data) : undefined;
  const validated = configErrors.length === 0 && credentials.ok;
  // A ProviderConfig on its way out is never ready, even while TenantClusters hold up its deletion: no new
  // cluster should pick it.
  const deleting = request.finalizing || Boolean(pc.metadata.deletionTimestamp);
  const ready = validated && (pools === undefined || pools.condition.status === "True") && !deleting;
  const lastValidationTime = validated
    ? (prev.validated === true && typeof prev.lastValidationTime === "string"
      ? prev.lastValidationTime
      : formatTime(context.now))
    : typeof prev.lastValidationTime === "string"
    ? prev.lastValidationTime
    : undefined;
  const blocking = request.finalizing ? referencingClusters(request) : [];
  const conds = conditions(
    [
      readyCondition(pc.metadata.name, blocking, deleting, configErrors, credentials, pools),
      ...validationConditions(configErrors, credentials),
      ...(pools ? [pools.condition] : []),
    ],
    previous,
    context.now,
    generation,
  );
  return {
    status: {
      observedGeneration: generation,
      ready,
      validated,
      ...(lastValidationTime ? { lastValidationTime } : {}),
      ...(pools ? { capacity: pools.reported.capacity } : {}),
      ...(zone ? { effective: { zone } } : {}),
      conditions: conds,
    },
    attachments: [],
    ...(request.finalizing ? { finalized: blocking.length === 0 } : {}),
    ...(pools?.reported.resyncAfterSeconds ? { resyncAfterSeconds: pools.reported.resyncAfterSeconds } : {}),
  };
}

/** The credentials Secret checked: present, and holding the keys its provider needs (values never read). */
function credentialsOf(request: DecoratorRequest, spec: ProviderConfigSpec): CredentialCheck {
  const outOfZone = credentialsOutOfZone(request.object, spec);
  if (outOfZone) return { ok: false, reason: "CrossNamespaceReference", message: outOfZone };
  const ref = secretRefOf(request.object, spec);
  return checkCredentials(
    spec.provider,
    ref,
    request.related[groupKey(SECRET)]?.[`${ref.namespace}/${ref.name}`] as { data?: unknown } | undefined,
    spec.credentialsRef.key,
  );
}

/**
 * In IPAM mode (not a cloud provider), the referenced pools' room: the capacity figures as reported (a change of
 * figures alone is written at most once in 5 minutes) and `PoolAvailable`.
 */
function poolCapacity(
  request: DecoratorRequest,
  spec: ProviderConfigSpec,
  prev: Record<string, unknown>,
  previous: PreviousConditions,
  now: Date,
): { reported: ReportedCapacity; condition: ConditionInput } | undefined {
  if (spec.network?.mode !== "ipam" || CLOUD_PROVIDERS.includes(spec.provider)) return undefined;
  const pc = request.object;
  const { found, missing } = poolsOf(request, spec);
  const available = found.reduce((n, p) => n + p.availableIPs, 0);
  const footprint = tenantFootprint(spec, found[0]?.nodesPerTenant);
  const fresh = {
    availableIPs: available,
    estimatedTenants: Math.floor(available / (footprint.nodeIPs + footprint.lbIPs)),
  };
  const condition = (figures: CapacityFigures) =>
    poolAvailable(spec, pc.metadata.namespace, found, missing, figures);
  const freshCondition = condition(fresh);
  const before = previous.find((c) => c.type === "PoolAvailable");
  // Only a change of the figures waits; a new spec or a pool condition that flips is news now. (Every False
  // reason comes with no address available, so it never changes the figures on its own.)
  const mayHold = prev.observedGeneration === pc.metadata.generation &&
    before?.status === freshCondition.status;
  const reported = reportedCapacity(fresh, prev.capacity, now, mayHold);
  return { reported, condition: condition(reported.capacity) };
}

/** `Ready`: the deletion first, then configuration, credentials and pools, in that order. */
function readyCondition(
  name: string,
  blocking: readonly string[],
  deleting: boolean,
  configErrors: readonly string[],
  credentials: CredentialCheck,
  pools: { readonly condition: ConditionInput } | undefined,
): ConditionInput {
  const no = (reason: string, message: string): ConditionInput => ({
    type: "Ready",
    status: "False",
    reason,
    message,
  });
  if (blocking.length) return no("DeletionBlocked", deletionBlockedMessage(name, blocking));
  if (deleting) {
    return no(
      "Deleting",
      `ProviderConfig "${name}" is being deleted; no TenantCluster references it any more`,
    );
  }
  if (configErrors.length) return no("ValidationFailed", configErrors.join("; "));
  if (!credentials.ok) return no("CredentialsInvalid", credentials.message);
  if (pools && pools.condition.status !== "True") return no(pools.condition.reason, pools.condition.message);
  return {
    type: "Ready",
    status: "True",
    reason: "Ready",
    message: "configuration and credentials are complete" + (pools ? " and a referenced pool has room" : ""),
  };
}

/** `Validated` and `CredentialsValid`. */
function validationConditions(
  configErrors: readonly string[],
  credentials: CredentialCheck,
): ConditionInput[] {
  const configOk = configErrors.length === 0;
  const credentialsMessage = credentials.ok ? "credentials validated" : credentials.message;
  return [
    configOk && credentials.ok
      ? {
        type: "Validated",
        status: "True",
        reason: "ValidationSucceeded",
        message: "configuration and credentials validated",
      }
      : {
        type: "Validated",
        status: "False",
        reason: configOk ? "CredentialsInvalid" : "ValidationFailed",
        message: configOk ? credentialsMessage : configErrors.join("; "),
      },
    credentials.ok
      ? { type: "CredentialsValid", status: "True", reason: "Ready", message: "credentials validated" }
      : {
        type: "CredentialsValid",
        status: "False",
        reason: credentials.reason === "CrossNamespaceReference" ? credentials.reason : "CredentialsInvalid",
        message: credentials.message,
      },
  ];
}
