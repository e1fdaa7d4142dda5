import { API_VERSION, KINDS, LABELS, requireDelivered, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { type ConditionInput, conditions, listNames, PreviousConditions } from "../../lib/conditions/mod.ts";
import {
  asDesired,
  type CompositeRequest,
  type CompositeResponse,
  type CustomizeRequest,
  type CustomizeResponse,
  formatPath,
  groupKey,
  type KubeObject,
  readGroup,
  type RelatedResourceRule,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import { recordedShape, resolveShape } from "../../lib/shape/mod.ts";
import { parseTime } from "../../lib/time/mod.ts";
import {
  providerKey,
  providerRefOf,
  recordedProviderRef,
  resolveProviderRef,
  teamNameOf,
  teamProviderNamespaces,
  TeamSpec,
  tenantClusterRefOf,
} from "../../lib/api/mod.ts";
import { CONFIGMAP, metallbConfigMap } from "./metallb.ts";
import { planNetwork } from "./network.ts";
import type { ObservedChild } from "./plan_draft.ts";
import { resyncAfter, stateInterval } from "./resync.ts";
import { clusterPolicyConditions } from "./quota.ts";
import {
  ChildAllocation,
  InventorySpec,
  IpamMemory,
  PoolView,
  ProviderView,
  TenantClusterSpec,
} from "../../lib/api/mod.ts";

/**
 * The TenantCluster customize hook: its Team, its ProviderConfig, the NetworkPools in the ProviderConfig's
 * namespace, and its LoadBalancerInventory. Without its own `providerConfigRef` the cluster may use its Team's,
 * which this hook cannot read (related objects depend only on the parent): it then asks for the ProviderConfigs
 * and NetworkPools of the namespaces where the Team's provider is looked up.
 */
export function customizeTenantCluster(request: CustomizeRequest): CustomizeResponse {
  const tc = request.parent;
  const ns = tc.metadata.namespace ?? "";
  const team = teamNameOf(ns, tc.spec);
  const pc = providerRefOf(tc.spec);
  const rules: RelatedResourceRule[] = [
    ...(team ? [{ apiVersion: API_VERSION, resource: "teams", names: [team] }] : []),
    ...(pc
      ? [
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

function related<T>(request: CompositeRequest, type: { apiVersion: string; kind: string }, key: string) {
  return request.related[groupKey(type)]?.[key] as T | undefined;
}

/** Provider access per upstream: a team-scoped ProviderConfig of another team is refused. */
function providerAccess(provider: ProviderView, team: string | undefined): ConditionInput {
  const scope = provider.spec.scope;
  const pcName = provider.metadata.name;
  if ((scope?.type ?? "platform") === "platform") {
    return {
      type: "ProviderAccessGranted",
      status: "True",
      reason: "PlatformScoped",
      message: "platform-scoped provider",
    };
  }
  const owner = scope?.teamRef?.name;
  if (!owner) {
    return {
      type: "ProviderAccessGranted",
      status: "False",
      reason: "AccessDenied",
      message: "provider is team-scoped but has no teamRef",
    };
  }
  if (!team) {
    return {
      type: "ProviderAccessGranted",
      status: "False",
      reason: "AccessDenied",
      message: "cluster has no teamRef but provider is team-scoped",
    };
  }
  return owner === team
    ? {
      type: "ProviderAccessGranted",
      status: "True",
      reason: "TeamScoped",
      message: `team-scoped provider of team ${team}`,
    }
    : {
      type: "ProviderAccessGranted",
      status: "False",
      reason: "AccessDenied",
      message: `team ${team} does not have access to provider ${pcName} (scoped to ${owner})`,
    };
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
      ? [{ name: e.value.metadata.name, value: e.value, keep: asDesired(e.raw as KubeObject) }]
      : [];
  });
}

/** Whether new resources may come from the provider: not once it is being deleted. */
function providerAvailable(provider: ProviderView, deleting: boolean): ConditionInput {
  const key = `${provider.metadata.namespace ?? SYSTEM_NAMESPACE}/${provider.metadata.name}`;
  return deleting
    ? {
      type: "ProviderAvailable",
      status: "False",
      reason: "ProviderDeleting",
      message:
        `ProviderConfig ${key} is being deleted: no new IP allocation is made from it; existing ones are kept until this cluster is deleted or moved`,
    }
    : { type: "ProviderAvailable", status: "True", reason: "Available", message: `ProviderConfig ${key}` };
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
  const name = tc.metadata.name;
  const ns = tc.metadata.namespace ?? "";
  const now = context.now;
  const prevStatus = (tc.status ?? {}) as Record<string, unknown>;
  const previous = PreviousConditions.parse(prevStatus.conditions);
  const allocationEntries = readGroup(request.children, KINDS.IPAllocation, ChildAllocation);
  const configMaps = Object.values(request.children[groupKey(CONFIGMAP)] ?? {});

  if (request.finalizing) {
    const remaining = allocationEntries.map((e) => e.raw.metadata.name);
    return {
      status: {
        ...prevStatus,
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

  const keepAll =
    (): KubeObject[] => [...allocationEntries.map((e) => asDesired(e.raw)), ...configMaps.map(asDesired)];
  const invalid: string[] = [];
  const missing: string[] = [];

  const parsed = TenantClusterSpec.safeParse(tc.spec ?? {});
  if (!parsed.success) {
    invalid.push(...parsed.error.issues.map((i) => `${formatPath(["spec", ...i.path])}: ${i.message}`));
  }
  const spec = parsed.success ? parsed.data : {};

  const teamName = teamNameOf(ns, spec);
  const teamObj = teamName ? related<{ spec?: unknown }>(request, KINDS.Team, teamName) : undefined;
  const team = teamObj ? TeamSpec.safeParse(teamObj.spec) : undefined;
  if (teamName && !teamObj) missing.push(`team "${teamName}" not found`);
  if (team && !team.success) missing.push(`team "${teamName}" has an invalid spec`);
  if (teamName && teamObj && ns !== `team-${teamName}`) {
    invalid.push(`TenantCluster must be in team namespace "team-${teamName}", got "${ns}"`);
  }
  const teamSpec = team?.success ? team.data : undefined;
  const envName = tc.metadata.labels?.[LABELS.environment];
  const env = envName ? teamSpec?.environments?.find((e) => e.name === envName) : undefined;
  if (envName && teamSpec && !env) {
    const names = (teamSpec.environments ?? []).map((e) => JSON.stringify(e.name)).join(", ");
    invalid.push(
      `metadata.labels[${LABELS.environment}]: Unsupported value: "${envName}": supported values: ${names}`,
    );
  }
  const resolved = resolveShape({
    cluster: spec,
    recorded: recordedShape(tc.status),
    environment: env?.clusterDefaults,
    team: teamSpec?.clusterDefaults,
    limits: teamSpec?.resourceLimits,
  });
  // The version may come from the Team: judge it only once the Team (if there is one) has been read.
  if (!resolved.shape.kubernetesVersion && (!teamName || teamSpec)) {
    invalid.push("spec.kubernetesVersion: not set, and neither the environment nor the team sets a default");
  }
  invalid.push(...resolved.problems.map((p) => `effective shape: ${p}`));

  const chosen = resolveProviderRef(
    ns,
    spec,
    { team: teamName, defaultName: teamSpec?.providerConfigRef?.name },
    (ref) => Boolean(related(request, KINDS.ProviderConfig, providerKey(ref))),
    recordedProviderRef(tc.status),
  );
  const pcRef = chosen?.ref;
  const pcRaw = pcRef
    ? related<KubeObject>(request, KINDS.ProviderConfig, `${pcRef.namespace}/${pcRef.name}`)
    : undefined;
  const pc = pcRaw ? ProviderView.safeParse(pcRaw) : undefined;
  if (!chosen) {
    missing.push(
      teamSpec
        ? `spec.providerConfigRef is not set, and team "${teamName}" sets no providerConfigRef`
        : "spec.providerConfigRef is not set",
    );
  } else if (!pcRaw) missing.push(`ProviderConfig ${chosen.looked} not found`);
  else if (!pc?.success) missing.push(`ProviderConfig ${pcRef!.namespace}/${pcRef!.name} cannot be read`);
  const provider = pc?.success ? pc.data : undefined;
  const access = provider ? providerAccess(provider, teamName) : undefined;

  const inputsOk = !invalid.length && !missing.length && access?.status === "True";
  // A ProviderConfig being deleted waits for its clusters; it must not gain new addresses meanwhile.
  const providerDeleting = Boolean(provider?.metadata.deletionTimestamp);
  const mode = provider?.spec.network?.mode ?? "cloud";
  const inputConditions: ConditionInput[] = access ? [access] : [];
  if (provider) inputConditions.push(providerAvailable(provider, providerDeleting));
  if (teamSpec && teamName) {
    const providerType = provider?.spec.provider;
    inputConditions.push(
      ...clusterPolicyConditions(
        teamName,
        teamSpec,
        resolved.shape,
        providerType ? { type: providerType, name: provider!.metadata.name } : undefined,
      ),
    );
  }
  let children: KubeObject[];
  let networkReady = false;
  let ipamStatus: Record<string, unknown> = {};
  let dueAt: Date[] = [];

  if (!provider) {
    children = keepAll();
  } else if (mode === "cloud") {
    const leftovers = allocationEntries.map((e) => asDesired(e.raw));
    children = leftovers;
    networkReady = true;
    inputConditions.push({
      type: "NetworkReady",
      status: "True",
      reason: "CloudNetworking",
      message: leftovers.length
        ? `cloud networking mode (${leftovers.length} IPAllocation(s) from an earlier ipam configuration are kept; delete them to release their addresses)`
        : "cloud networking mode",
    });
  } else {
    const observed: ObservedChild[] = [];
    const unreadable: KubeObject[] = [];
    for (const e of allocationEntries) {
      if (e.ok) observed.push({ name: e.raw.metadata.name, value: e.value, keep: asDesired(e.raw) });
      else unreadable.push(asDesired(e.raw));
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
      memory: IpamMemory.parse(prevStatus.ipam ?? {}),
      now,
      mayCreate: inputsOk && !providerDeleting,
      ...(context.config.shrinkGraceSeconds ? { shrinkGraceSeconds: context.config.shrinkGraceSeconds } : {}),
    });
    const configMap = plan.addresses.length
      ? [metallbConfigMap(name, ns, plan.addresses)]
      : configMaps.map(asDesired);
    // An unreadable IPAllocation keeps its name: nothing planned may replace what is not understood.
    const kept = new Set(unreadable.map((u) => u.metadata.name));
    children = [...plan.allocations.filter((a) => !kept.has(a.metadata.name)), ...unreadable, ...configMap];
    networkReady = plan.ready;
    dueAt = plan.dueAt;
    inputConditions.push(...plan.conditions);
    ipamStatus = {
      ...(plan.lbAllocationRef ? { lbAllocationRef: { name: plan.lbAllocationRef } } : {}),
      ...(plan.ipAllocationRef ? { ipAllocationRef: { name: plan.ipAllocationRef } } : {}),
      loadBalancer: { addresses: plan.addresses },
      ipam: plan.memory,
    };
    if (unreadable.length) {
      inputConditions.push({
        type: "ChildrenReadable",
        status: "False",
        reason: "UnreadableIPAllocation",
        message: `kept unchanged, not understood: ${listNames(unreadable.map((u) => u.metadata.name))}`,
      });
    }
  }

  const ready = inputsOk && networkReady;
  const phase = invalid.length ? "Failed" : ready ? "Ready" : "Pending";
  const readyCondition: ConditionInput = invalid.length
    ? {
      type: "Ready",
      status: "False",
      reason: "InvalidSpec",
      message: `${invalid.join("; ")}; existing children are kept, none is created`,
    }
    : missing.length
    ? {
      type: "Ready",
      status: "False",
      reason: "MissingInput",
      message: `${missing.join("; ")}; existing children are kept, none is created`,
    }
    : access?.status !== "True"
    ? {
      type: "Ready",
      status: "False",
      reason: "AccessDenied",
      message: access?.message ?? "provider access unknown",
    }
    : ready
    ? { type: "Ready", status: "True", reason: "Ready", message: "shape resolved and network ready" }
    : providerDeleting
    ? {
      type: "Ready",
      status: "False",
      reason: "ProviderDeleting",
      message: `ProviderConfig ${pcRef!.namespace}/${
        pcRef!.name
      } is being deleted; no new IP allocation is made`,
    }
    : { type: "Ready", status: "False", reason: "Pending", message: "waiting for the network" };

  const created = parseTime(tc.metadata.creationTimestamp ?? undefined);
  return {
    status: {
      phase,
      observedGeneration: tc.metadata.generation,
      effective: {
        ...resolved.shape,
        ...(pcRef ? { providerConfigRef: { value: pcRef, source: chosen!.source } } : {}),
      },
      ...ipamStatus,
      conditions: conditions([...inputConditions, readyCondition], previous, now, tc.metadata.generation),
    },
    children,
    resyncAfterSeconds: resyncAfter(stateInterval(ready, created, now), dueAt, now),
  };
}
