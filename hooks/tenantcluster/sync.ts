import { withPoolsWord } from "./refused.ts";
import { API_VERSION, KINDS, LABELS, requireDelivered, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { type ConditionInput, conditions, listNames, PreviousConditions } from "../../lib/conditions/mod.ts";
import {
  asDesired,
  type CompositeRequest,
  type CompositeResponse,
  type CustomizeRequest,
  type CustomizeResponse,
  groupKey,
  type KubeObject,
  readGroup,
  type RelatedResourceRule,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { parseTime } from "../../lib/time/mod.ts";
import { CONFIGMAP, metallbConfigMap } from "./metallb.ts";
import { planNetwork } from "./network.ts";
import type { ObservedChild } from "./plan_draft.ts";
import { resyncAfter, stateInterval } from "./resync.ts";
import { quotaHold } from "./gate.ts";
import { recordName } from "./record.ts";
import { inputConditions, type Inputs, readInputs, readyCondition, related } from "./inputs.ts";
import {
  ChildAllocation,
  InventorySpec,
  IpamMemory,
  PoolView,
  providerRefOf,
  ProviderView,
  providerZoneError,
  teamNameOf,
  teamProviderNamespaces,
  teamZoneError,
  tenantClusterRefOf,
  TenantClusterSpec,
} from "../../lib/api/mod.ts";

/**
 * The TenantCluster customize hook: its Team, its ProviderConfig, the NetworkPools in the ProviderConfig's
 * namespace, and its LoadBalancerInventory; a Team or ProviderConfig out of the cluster's trust zone is not asked for. Without its own `providerConfigRef` the cluster may use its Team's,
 * which this hook cannot read (related objects depend only on the parent): it then asks for the ProviderConfigs
 * and NetworkPools of the namespaces where the Team's provider is looked up.
 */
export function customizeTenantCluster(request: CustomizeRequest): CustomizeResponse {
  const tc = request.parent;
  const ns = tc.metadata.namespace ?? "";
  const named = teamNameOf(ns, tc.spec);
  // What is out of the cluster's trust zone is never read (lib/api/references.ts): the sync reports it.
  const team = named && !teamZoneError(ns, named) ? named : undefined;
  const pc = providerRefOf(tc.spec);
  const rules: RelatedResourceRule[] = [
    ...(team ? [{ apiVersion: API_VERSION, resource: "teams", names: [team] }] : []),
    ...(pc
      ? providerZoneError(ns, pc.namespace) ? [] : [
        { apiVersion: API_VERSION, resource: "providerconfigs", namespace: pc.namespace, names: [pc.name] },
        { apiVersion: API_VERSION, resource: "networkpools", namespace: pc.namespace },
      ]
      : team
      ? teamProviderNamespaces(ns).flatMap((namespace) => [
        { apiVersion: API_VERSION, resource: "providerconfigs", namespace },
        { apiVersion: API_VERSION, resource: "networkpools", namespace },
      ])
      : []),
    {
      apiVersion: API_VERSION,
      resource: "loadbalancerinventories",
      namespace: ns,
      names: [tc.metadata.name],
    },
    // Hand-made allocations that name this cluster (the seed's pinned range), before it has adopted them.
    {
      apiVersion: API_VERSION,
      resource: "ipallocations",
      namespace: ns,
      labelSelector: { matchLabels: { [LABELS.tenant]: tc.metadata.name } },
    },
  ];
  return { relatedResources: rules };
}

/**
 * Hand-made IPAllocations that name this cluster in `spec.tenantClusterRef` and are not its children yet: the
 * IPAllocation hook labels them for adoption, and Metacontroller adopts them at a coming sync. Until then they
 * stand in for the allocation of their role, so the cluster does not make its own beside a pinned range.
 */
function adoptingAllocations(request: CompositeRequest, ns: string, name: string): ObservedChild[] {
  const children = request.children[groupKey(KINDS.IPAllocation)] ?? {};
  return readGroup(request.related, KINDS.IPAllocation, ChildAllocation).flatMap((e) => {
    if (!e.ok || e.key in children || e.value.metadata.deletionTimestamp) return [];
    const ref = tenantClusterRefOf(e.value.spec, ns);
    return ref?.name === name && ref.namespace === ns && e.key.startsWith(`${ns}/`)
      ? [
        withPoolsWord(
          { name: e.value.metadata.name, value: e.value, keep: asDesired(e.raw as KubeObject) },
          e.raw,
          request.related,
        ),
      ]
      : [];
  });
}

/** What the network part of a sync decided: the children, its conditions and status, and when to look again. */
interface Network {
  readonly children: KubeObject[];
  readonly ready: boolean;
  readonly conditions: readonly ConditionInput[];
  readonly status: Record<string, unknown>;
  readonly dueAt: readonly Date[];
}

/**
 * The TenantCluster sync and finalize hook (CompositeController). It resolves the cluster's effective shape,
 * checks provider access, and in IPAM mode owns the cluster's IPAllocations (initial LB, nodes, elastic growth)
 * and the MetalLB ConfigMap. Missing or invalid inputs keep every existing child and create none. Finalize
 * returns no children and finishes once every IPAllocation child is gone (each releases through its own
 * finalizer).
 */
export function syncTenantCluster(request: CompositeRequest, context: HookContext): CompositeResponse {
  const tc = request.parent;
  requireDelivered(request, customizeTenantCluster(request).relatedResources, [
    KINDS.IPAllocation,
    CONFIGMAP,
  ]);
  const now = context.now;
  const previous = PreviousConditions.parse(((tc.status ?? {}) as Record<string, unknown>).conditions);
  if (request.finalizing) return finalizeTenantCluster(request, previous, now);

  const inputs = readInputs(request);
  const { invalid, missing, access, provider } = inputs;
  const inputsOk = !invalid.length && !missing.length && access?.status === "True";
  const hold = quotaHold(request, inputs, inputsOk);
  const gate = hold.gate;
  // Started is recorded only by the sync that lets the cluster start: a True reached while an input is missing
  // (its provider's limits unknown) would let it past a limit it has not been counted against.
  const starts = inputsOk && gate.admitted;
  const recorded = starts || !gate.admitted ? [gate.condition, ...(gate.change ? [gate.change] : [])] : [];
  // A ProviderConfig being deleted waits for its clusters; it must not gain new addresses meanwhile.
  const providerDeleting = Boolean(provider?.metadata.deletionTimestamp);
  const network = hold.providerHeld
    ? heldNetwork(request, tc.status)
    : reconcileNetwork(request, context, inputs, starts && !providerDeleting);
  const ready = starts && network.ready;
  const pcRef = inputs.chosen?.ref;
  const previousRef = (tc.status as { effective?: { providerConfigRef?: unknown } } | undefined)?.effective
    ?.providerConfigRef;
  const created = parseTime(tc.metadata.creationTimestamp ?? undefined);
  return {
    status: {
      phase: invalid.length ? "Failed" : ready ? "Ready" : "Pending",
      observedGeneration: tc.metadata.generation,
      effective: {
        ...hold.shape,
        ...(hold.providerHeld && previousRef
          ? { providerConfigRef: previousRef }
          : pcRef
          ? { providerConfigRef: { value: pcRef, source: inputs.chosen!.source } }
          : {}),
      },
      ...network.status,
      conditions: conditions(
        [
          ...inputConditions(inputs),
          ...recorded,
          ...network.conditions,
          readyCondition(inputs, ready, providerDeleting, gate.condition),
        ],
        previous,
        now,
        tc.metadata.generation,
      ),
    },
    children: [...network.children, ...(hold.child ? [hold.child] : [])],
    resyncAfterSeconds: resyncAfter(stateInterval(ready, created, now), network.dueAt, now),
  };
}

/** The MetalLB ConfigMaps observed: every ConfigMap child but the quota record. */
function networkConfigMaps(request: CompositeRequest): KubeObject[] {
  const record = recordName(request.parent.metadata.name);
  return Object.values(request.children[groupKey(CONFIGMAP)] ?? {}).filter((c) => c.metadata.name !== record);
}

/**
 * The network while a move to another ProviderConfig waits for the Team: every child kept as it is, none made, and
 * what the last sync said of the network said again.
 */
function heldNetwork(request: CompositeRequest, status: unknown): Network {
  const was = (status ?? {}) as Record<string, unknown>;
  const kept = ["lbAllocationRef", "ipAllocationRef", "loadBalancer", "ipam"].filter((k) => k in was);
  const said = (type: string) =>
    (Array.isArray(was.conditions) ? was.conditions : []).find((c) =>
      c?.type === type && ["True", "False", "Unknown"].includes(c.status)
    );
  const networkReady = said("NetworkReady");
  const text = (v: unknown, fallback: string) => typeof v === "string" && v ? v : fallback;
  return {
    children: [
      ...readGroup(request.children, KINDS.IPAllocation, ChildAllocation).map((e) => asDesired(e.raw)),
      ...networkConfigMaps(request).map(asDesired),
    ],
    ready: said("Ready")?.status === "True",
    conditions: networkReady
      ? [{
        type: "NetworkReady",
        status: networkReady.status,
        reason: text(networkReady.reason, "Held"),
        message: text(networkReady.message, "kept while a move to another ProviderConfig waits"),
      }]
      : [],
    status: Object.fromEntries(kept.map((k) => [k, was[k]])),
    dueAt: [],
  };
}

/** Finalize: no children; finished once every IPAllocation child is gone. */
function finalizeTenantCluster(
  request: CompositeRequest,
  previous: ReturnType<typeof PreviousConditions.parse>,
  now: Date,
): CompositeResponse {
  const tc = request.parent;
  const remaining = readGroup(request.children, KINDS.IPAllocation, ChildAllocation)
    .map((e) => e.raw.metadata.name);
  return {
    status: {
      ...((tc.status ?? {}) as Record<string, unknown>),
      phase: "Deleting",
      observedGeneration: tc.metadata.generation,
      conditions: conditions(
        [{
          type: "Ready",
          status: "False",
          reason: "Deleting",
          message: remaining.length
            ? `waiting for ${remaining.length} IPAllocation(s) to be released: ${listNames(remaining)}`
            : "all IPAllocations released",
        }],
        previous,
        now,
        tc.metadata.generation,
      ),
    },
    children: [],
    finalized: remaining.length === 0,
  };
}

/**
 * The network children: without a ProviderConfig, everything kept as it is; in cloud mode, IPAllocations left from
 * an ipam configuration kept; in ipam mode, the IPAM plan ({@linkcode planNetwork}) and the MetalLB ConfigMap.
 */
function reconcileNetwork(
  request: CompositeRequest,
  context: HookContext,
  inputs: Inputs,
  mayCreate: boolean,
): Network {
  const allocations = readGroup(request.children, KINDS.IPAllocation, ChildAllocation);
  const configMaps = networkConfigMaps(request);
  const provider = inputs.provider;
  if (!provider) {
    return {
      children: [...allocations.map((e) => asDesired(e.raw)), ...configMaps.map(asDesired)],
      ready: false,
      conditions: [],
      status: {},
      dueAt: [],
    };
  }
  if ((provider.spec.network?.mode ?? "cloud") === "cloud") {
    const leftovers = allocations.map((e) => asDesired(e.raw));
    return {
      children: leftovers,
      ready: true,
      conditions: [{
        type: "NetworkReady",
        status: "True",
        reason: "CloudNetworking",
        message: leftovers.length
          ? `cloud networking mode (${leftovers.length} IPAllocation(s) from an earlier ipam configuration are kept; delete them to release their addresses)`
          : "cloud networking mode",
      }],
      status: {},
      dueAt: [],
    };
  }
  return ipamNetwork(request, context, inputs.spec, provider, mayCreate);
}

/** IPAM mode: the plan's allocations (an unreadable one kept in place), the MetalLB ConfigMap, the plan's status. */
function ipamNetwork(
  request: CompositeRequest,
  context: HookContext,
  spec: TenantClusterSpec,
  provider: ProviderView,
  mayCreate: boolean,
): Network {
  const tc = request.parent;
  const name = tc.metadata.name;
  const ns = tc.metadata.namespace ?? "";
  const observed: ObservedChild[] = [];
  const unreadable: KubeObject[] = [];
  for (const e of readGroup(request.children, KINDS.IPAllocation, ChildAllocation)) {
    if (e.ok) {
      const child = { name: e.raw.metadata.name, value: e.value, keep: asDesired(e.raw) };
      observed.push(withPoolsWord(child, e.raw, request.related));
    } else unreadable.push(asDesired(e.raw));
  }
  const inventoryRaw = related<{ spec?: unknown }>(request, KINDS.LoadBalancerInventory, `${ns}/${name}`);
  const inventory = inventoryRaw ? InventorySpec.safeParse(inventoryRaw.spec) : undefined;
  const pcNs = provider.metadata.namespace ?? SYSTEM_NAMESPACE;
  const pools = readGroup(request.related, KINDS.NetworkPool, PoolView)
    .filter((p) => p.ok && p.key.startsWith(`${pcNs}/`))
    .map((p) => (p as { value: PoolView }).value);
  const plan = planNetwork({
    cluster: { name, namespace: ns, spec },
    provider,
    pools,
    children: observed,
    adopting: adoptingAllocations(request, ns, name),
    inventory: inventory?.success ? inventory.data : undefined,
    memory: IpamMemory.parse(((tc.status ?? {}) as Record<string, unknown>).ipam ?? {}),
    now: context.now,
    mayCreate,
    ...(context.config.shrinkGraceSeconds ? { shrinkGraceSeconds: context.config.shrinkGraceSeconds } : {}),
  });
  // Kept while nothing is Allocated (a status lost changes nothing), but withdrawn when the reason is a record its
  // pool refuses: the ConfigMap, perhaps restored beside it, would tell MetalLB addresses another tenant holds.
  const refused = observed.some((c) => c.refused);
  const configMap = plan.addresses.length
    ? [metallbConfigMap(name, ns, plan.addresses)]
    : refused
    ? []
    : networkConfigMaps(request).map(asDesired);
  // An unreadable IPAllocation keeps its name: nothing planned may replace what is not understood.
  const kept = new Set(unreadable.map((u) => u.metadata.name));
  return {
    children: [...plan.allocations.filter((a) => !kept.has(a.metadata.name)), ...unreadable, ...configMap],
    ready: plan.ready,
    conditions: [
      ...plan.conditions,
      ...(unreadable.length
        ? [{
          type: "ChildrenReadable",
          status: "False" as const,
          reason: "UnreadableIPAllocation",
          message: `kept unchanged, not understood: ${listNames(unreadable.map((u) => u.metadata.name))}`,
        }]
        : []),
    ],
    status: {
      ...(plan.lbAllocationRef ? { lbAllocationRef: { name: plan.lbAllocationRef } } : {}),
      ...(plan.ipAllocationRef ? { ipAllocationRef: { name: plan.ipAllocationRef } } : {}),
      loadBalancer: { addresses: plan.addresses },
      ipam: plan.memory,
    },
    dueAt: plan.dueAt,
  };
}
