import { API_VERSION, KINDS, LABELS, requireDelivered } from "../../lib/butler/mod.ts";
import {
  type ConditionInput,
  conditions,
  listNames,
  listProblems,
  PreviousConditions,
} from "../../lib/conditions/mod.ts";
import {
  type CompositeRequest,
  type CompositeResponse,
  type CustomizeRequest,
  type CustomizeResponse,
  formatPath,
  groupKey,
  keepObserved,
  type KubeObject,
  objectKey,
  readGroup,
} from "../../lib/contract/mod.ts";
import type { HookContext } from "../../lib/hook_context/mod.ts";
import { effectiveAccess, type SubjectAccess } from "./access.ts";
import { CHILD_TYPES, desiredChildren } from "./rbac.ts";
import {
  limitProblems,
  ObservedCluster,
  ProviderLimitsView,
  teamNamespace,
  teamProviderNamespaces,
  TeamSpec,
} from "../../lib/api/mod.ts";
import { computeUsage, type TeamProvider, teamProvider } from "./usage.ts";
import { claimsAdmission } from "./waiting.ts";

/**
 * Whether every TenantCluster of the team names an environment the team defines. Until admission refuses removing
 * an environment still in use, a Team can drop one its clusters name; those clusters then go Failed (keeping every
 * child), and this condition names them so the Team shows why.
 */
export function environmentsCondition(spec: TeamSpec, clusters: readonly ObservedCluster[]): ConditionInput {
  const defined = new Set((spec.environments ?? []).map((e) => e.name));
  const stray = clusters.flatMap((c) => {
    const env = c.metadata.labels?.[LABELS.environment];
    return env !== undefined && !defined.has(env)
      ? [`${c.metadata.namespace}/${c.metadata.name} (${env})`]
      : [];
  }).sort();
  return stray.length
    ? {
      type: "EnvironmentsResolved",
      status: "False",
      reason: "EnvironmentMissing",
      message: `${stray.length} TenantCluster(s) name an environment the team does not define: ${
        listNames(stray)
      }`,
    }
    : {
      type: "EnvironmentsResolved",
      status: "True",
      reason: "AllDefined",
      message: "every TenantCluster names a defined environment or none",
    };
}

/**
 * The Team customize hook: the TenantClusters in the team namespace and their quota records (what each was
 * admitted, and claims), and the ProviderConfigs its clusters may resolve to through its default (the team
 * namespace and butler-system), for their per-team limits.
 */
export function customizeTeam(request: CustomizeRequest): CustomizeResponse {
  const ns = teamNamespace(request.parent.metadata.name);
  return {
    relatedResources: [
      { apiVersion: API_VERSION, resource: "tenantclusters", namespace: ns },
      {
        apiVersion: "v1",
        resource: "configmaps",
        namespace: ns,
        labelSelector: { matchLabels: { [LABELS.quotaRecord]: "true" } },
      },
      ...teamProviderNamespaces(ns).map((namespace) => ({
        apiVersion: API_VERSION,
        resource: "providerconfigs",
        namespace,
      })),
    ],
  };
}

/** The ProviderConfigs the Team was given, with their per-team limits. */
function teamProviders(request: CompositeRequest): TeamProvider[] {
  return readGroup(request.related, KINDS.ProviderConfig, ProviderLimitsView).flatMap((e) =>
    e.ok ? [teamProvider(e.key, e.value)] : []
  );
}

const ALL_CHILD_TYPES = Object.values(CHILD_TYPES);

function observedKeys(children: CompositeRequest["children"], objects: readonly KubeObject[]): string[] {
  return objects.filter((o) => {
    return !children[groupKey(o)]?.[objectKey(o)];
  }).map((o) => `${o.kind} ${o.metadata.name}`);
}

function accessTable(subjects: readonly SubjectAccess[]) {
  return subjects.map((s) => ({
    kind: s.kind,
    name: s.name,
    role: s.teamRole,
    ...(Object.keys(s.elevations).length ? { environments: s.elevations } : {}),
  }));
}

/**
 * The Team sync and finalize hook (CompositeController). Children: the `team-{name}` Namespace, a RoleBinding per
 * user and group bound to its team role, a Role and RoleBindings per environment that elevates a viewer (its
 * TenantClusters only, narrowed by the admission policy), the per-team ClusterRoles and
 * ClusterRoleBindings for reading and (admins) updating the Team, and the `namespaceQuota` ResourceQuotas and
 * LimitRanges. Status: phase, conditions, usage and quota. A spec it cannot honour keeps every child as it is.
 * Finalize returns no children, so the namespace goes (taking its TenantClusters with it), and finishes once the
 * namespace is gone.
 */
export function syncTeam(request: CompositeRequest, context: HookContext): CompositeResponse {
  const team = request.parent;
  requireDelivered(request, customizeTeam(request).relatedResources, ALL_CHILD_TYPES);
  const name = team.metadata.name;
  const ns = teamNamespace(name);
  const previous = PreviousConditions.parse(
    (team.status as { conditions?: unknown } | undefined)?.conditions,
  );
  const namespaceObserved = Boolean(request.children[groupKey(CHILD_TYPES.Namespace)]?.[ns]);
  const clusters = readGroup(request.related, KINDS.TenantCluster, ObservedCluster)
    .filter((e) => e.ok && e.key.startsWith(`${ns}/`))
    .map((e) => (e as { value: ObservedCluster }).value);
  const condition = (c: ConditionInput[]) => conditions(c, previous, context.now, team.metadata.generation);
  if (request.finalizing) return finalizeTeam(request, ns, namespaceObserved, condition);

  const parsed = TeamSpec.safeParse(team.spec);
  const access = parsed.success ? effectiveAccess(parsed.data) : undefined;
  const problems = !parsed.success
    ? parsed.error.issues.map((i) => `${formatPath(["spec", ...i.path])}: ${i.message}`)
    : access && !access.ok
    ? access.problems
    : ns.length > 63
    ? [`namespace name ${ns} is longer than 63 characters; Team names must be at most 58 characters`]
    : [];
  if (problems.length || !parsed.success || !access?.ok) {
    return invalidTeam(request, ns, problems, parsed.success ? parsed.data : undefined, clusters, condition);
  }

  const spec = parsed.data;
  const subjects = access.subjects;
  const children = childrenToAsk(
    request,
    desiredChildren({ name, spec }, subjects, context.config),
    namespaceObserved,
  );
  const missingRbac = observedKeys(request.children, children.filter((c) => RBAC_KINDS.has(c.kind)));
  const users = subjects.filter((s) => s.kind === "User").length;
  const usage = computeUsage(spec, clusters, teamProviders(request));
  const admission = claimsAdmission(request, name, ns, spec);
  const unreadable = limitProblems(spec);
  const ready = namespaceObserved && missingRbac.length === 0;
  return {
    status: {
      phase: unreadable.length ? "Failed" : ready ? "Ready" : "Pending",
      observedGeneration: team.metadata.generation,
      namespace: ns,
      clusterCount: usage.clusterCount,
      memberCount: users,
      groupCount: subjects.length - users,
      resourceUsage: usage.resourceUsage,
      quotaStatus: usage.quotaStatus,
      quotaMessage: usage.quotaMessage,
      environments: usage.environments,
      ...(Object.keys(admission).length ? { admission } : {}),
      access: accessTable(subjects),
      conditions: condition([
        namespaceReady(ns, namespaceObserved),
        rbacReady(missingRbac.length, users, subjects.length - users),
        readyCondition(unreadable, ready),
        quotaExceeded(unreadable, usage),
        environmentsCondition(spec, clusters),
      ]),
    },
    children,
  };
}

const RBAC_KINDS = new Set(["Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]);

/** Finalize: no children, so the namespace goes (with its TenantClusters); finished once it is gone. */
function finalizeTeam(
  request: CompositeRequest,
  ns: string,
  namespaceObserved: boolean,
  condition: (c: ConditionInput[]) => unknown,
): CompositeResponse {
  return {
    status: {
      phase: "Terminating",
      observedGeneration: request.parent.metadata.generation,
      namespace: ns,
      conditions: condition([{
        type: "Ready",
        status: "False",
        reason: "Terminating",
        message: namespaceObserved
          ? `deleting namespace ${ns} and the TenantClusters in it`
          : `namespace ${ns} is gone`,
      }]),
    },
    children: [],
    finalized: !namespaceObserved,
  };
}

/** A spec the sync cannot honour: `Failed`, why, and every child kept as it is. */
function invalidTeam(
  request: CompositeRequest,
  ns: string,
  problems: readonly string[],
  spec: TeamSpec | undefined,
  clusters: readonly ObservedCluster[],
  condition: (c: ConditionInput[]) => unknown,
): CompositeResponse {
  // Status carries usage's figures, not its per-dimension measures (those are for people, not stored).
  const { measures: _, ...usage } = spec
    ? computeUsage(spec, clusters, teamProviders(request))
    : { measures: undefined };
  return {
    status: {
      phase: "Failed",
      observedGeneration: request.parent.metadata.generation,
      namespace: ns,
      ...usage,
      conditions: condition([{
        type: "Ready",
        status: "False",
        reason: "InvalidSpec",
        message: `${listProblems(problems)}; existing namespace, RBAC and quotas are kept unchanged`,
      }]),
    },
    children: keepObserved(request.children, ALL_CHILD_TYPES),
  };
}

/**
 * The children to ask for. Metacontroller creates children in group/version/kind order, not ours: a RoleBinding
 * or LimitRange asked for before its Namespace exists fails once with a SyncError. So namespaced children are
 * asked for once the Namespace is observed (those already observed are always kept).
 */
function childrenToAsk(
  request: CompositeRequest,
  desired: readonly KubeObject[],
  namespaceObserved: boolean,
): KubeObject[] {
  return desired.filter((c) =>
    namespaceObserved || !c.metadata.namespace ||
    Boolean(request.children[groupKey(c)]?.[`${c.metadata.namespace}/${c.metadata.name}`])
  );
}

function namespaceReady(ns: string, observed: boolean): ConditionInput {
  return observed
    ? {
      type: "NamespaceReady",
      status: "True",
      reason: "NamespaceCreated",
      message: `namespace ${ns} exists`,
    }
    : { type: "NamespaceReady", status: "False", reason: "Pending", message: `waiting for namespace ${ns}` };
}

function rbacReady(missing: number, users: number, groups: number): ConditionInput {
  return missing === 0
    ? {
      type: "RBACReady",
      status: "True",
      reason: "RBACConfigured",
      message: `RBAC configured: ${users} user(s), ${groups} group(s)`,
    }
    : {
      type: "RBACReady",
      status: "False",
      reason: "Pending",
      message: `waiting for ${missing} RBAC object(s)`,
    };
}

/** `Ready`: limits that cannot be read first (admission fails closed on them), then namespace and RBAC. */
function readyCondition(unreadable: readonly string[], ready: boolean): ConditionInput {
  if (unreadable.length) {
    return {
      type: "Ready",
      status: "False",
      reason: "InvalidLimits",
      message: `${
        unreadable.join("; ")
      }; these limits cannot be enforced, so admission refuses what they guard until a platform admin fixes them`,
    };
  }
  return ready
    ? { type: "Ready", status: "True", reason: "Ready", message: "namespace and RBAC are in place" }
    : { type: "Ready", status: "False", reason: "Pending", message: "waiting for namespace and RBAC" };
}

/** `QuotaExceeded`: Unknown while a limit cannot be read, else whether usage is over a limit. */
function quotaExceeded(
  unreadable: readonly string[],
  usage: { quotaStatus: string; quotaMessage: string },
): ConditionInput {
  if (unreadable.length) {
    return {
      type: "QuotaExceeded",
      status: "Unknown",
      reason: "InvalidLimits",
      message: `cannot judge ${unreadable.join("; ")}; ${usage.quotaMessage}`,
    };
  }
  return usage.quotaStatus === "Exceeded"
    ? { type: "QuotaExceeded", status: "True", reason: "QuotaExceeded", message: usage.quotaMessage }
    : { type: "QuotaExceeded", status: "False", reason: "WithinLimits", message: usage.quotaMessage };
}
