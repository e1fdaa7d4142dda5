/**
 * What a TenantCluster's sync reads before it decides anything: its spec, its Team and environment, its effective
 * shape and the ProviderConfig it uses (its own, else its Team's), with what is invalid (the cluster is `Failed`)
 * or missing (`Pending`); the conditions these inputs decide; and `Ready`.
 *
 * @module
 */
import { KINDS, LABELS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { type ConditionInput, listProblems } from "../../lib/conditions/mod.ts";
import { type CompositeRequest, formatPath, groupKey, type KubeObject } from "../../lib/contract/mod.ts";
import { recordedShape, resolveShape } from "../../lib/shape/mod.ts";
import {
  providerKey,
  ProviderView,
  providerZoneError,
  recordedProviderRef,
  resolveProviderRef,
  teamNameOf,
  teamNamespaceError,
  TeamSpec,
  teamZoneError,
  TenantClusterSpec,
} from "../../lib/api/mod.ts";
import { clusterPolicyConditions } from "./restrictions.ts";

/** A related object of one kind by its key (`namespace/name`, or `name`), when Metacontroller sent it. */
export function related<T>(
  request: CompositeRequest,
  type: { apiVersion: string; kind: string },
  key: string,
): T | undefined {
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

/** What the sync read of the cluster's inputs (spec, Team, environment, shape, ProviderConfig), and what is wrong. */
export interface Inputs {
  readonly spec: TenantClusterSpec;
  readonly teamName?: string | undefined;
  readonly teamSpec?: TeamSpec | undefined;
  /** The Team's status as read (its judgement of the clusters waiting to start). */
  readonly teamStatus?: unknown;
  readonly resolved: ReturnType<typeof resolveShape>;
  readonly chosen?: ReturnType<typeof resolveProviderRef>;
  readonly provider?: ProviderView | undefined;
  readonly access?: ConditionInput | undefined;
  /** Problems in the cluster itself (Failed), and inputs missing or unreadable (Pending). */
  readonly invalid: readonly string[];
  readonly missing: readonly string[];
}

/** The cluster's spec, its Team and environment, its effective shape and its ProviderConfig, as the seed resolves them. */
export function readInputs(request: CompositeRequest): Inputs {
  const tc = request.parent;
  const ns = tc.metadata.namespace ?? "";
  const invalid: string[] = [];
  const missing: string[] = [];
  const parsed = TenantClusterSpec.safeParse(tc.spec ?? {});
  if (!parsed.success) {
    invalid.push(...parsed.error.issues.map((i) => `${formatPath(["spec", ...i.path])}: ${i.message}`));
  }
  const spec = parsed.success ? parsed.data : {};

  const teamName = teamNameOf(ns, spec);
  // A Team out of the cluster's trust zone is never read (customize does not relate it); a cluster outside every
  // team namespace (stored before the policy refused it) belongs to no Team, and starts nothing.
  const teamOut = teamName ? teamZoneError(ns, teamName) : teamNamespaceError(ns);
  if (teamOut) invalid.push(teamOut);
  const teamObj = teamName && !teamOut
    ? related<{ spec?: unknown; status?: unknown }>(request, KINDS.Team, teamName)
    : undefined;
  const team = teamObj ? TeamSpec.safeParse(teamObj.spec) : undefined;
  if (teamName && !teamOut && !teamObj) missing.push(`team "${teamName}" not found`);
  if (team && !team.success) missing.push(`team "${teamName}" has an invalid spec`);
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
  const pcOut = pcRef ? providerZoneError(ns, pcRef.namespace) : undefined;
  if (pcOut) invalid.push(pcOut);
  const pcRaw = pcRef && !pcOut
    ? related<KubeObject>(request, KINDS.ProviderConfig, `${pcRef.namespace}/${pcRef.name}`)
    : undefined;
  const pc = pcRaw ? ProviderView.safeParse(pcRaw) : undefined;
  if (!pcOut) {
    missing.push(...providerMissing(chosen, Boolean(pcRaw), pc?.success ?? false, teamName, teamSpec));
  }
  const provider = pc?.success ? pc.data : undefined;
  const access = provider ? providerAccess(provider, teamName) : undefined;
  return {
    spec,
    teamName,
    teamSpec,
    teamStatus: teamObj?.status,
    resolved,
    chosen,
    provider,
    access,
    invalid,
    missing,
  };
}

/** What is missing of the cluster's ProviderConfig: none chosen, not found, or not readable. */
function providerMissing(
  chosen: ReturnType<typeof resolveProviderRef>,
  found: boolean,
  readable: boolean,
  teamName: string | undefined,
  teamSpec: TeamSpec | undefined,
): string[] {
  if (!chosen) {
    return [
      teamSpec
        ? `spec.providerConfigRef is not set, and team "${teamName}" sets no providerConfigRef`
        : "spec.providerConfigRef is not set",
    ];
  }
  if (!found) return [`ProviderConfig ${chosen.looked} not found`];
  return readable ? [] : [`ProviderConfig ${chosen.ref.namespace}/${chosen.ref.name} cannot be read`];
}

/** The conditions the inputs decide: provider access and availability, the Team's per-cluster rules. */
export function inputConditions(
  { access, provider, teamName, teamSpec, resolved }: Inputs,
): ConditionInput[] {
  const out: ConditionInput[] = access ? [access] : [];
  if (provider) out.push(providerAvailable(provider, Boolean(provider.metadata.deletionTimestamp)));
  if (teamSpec && teamName) {
    const providerType = provider?.spec.provider;
    out.push(
      ...clusterPolicyConditions(
        teamName,
        teamSpec,
        resolved.shape,
        providerType ? { type: providerType, name: provider!.metadata.name } : undefined,
      ),
    );
  }
  return out;
}

/**
 * `Ready`: the first thing wrong (invalid, missing, access, not admitted by its Team, the provider going), else
 * ready or waiting.
 */
export function readyCondition(
  inputs: Inputs,
  ready: boolean,
  providerDeleting: boolean,
  admitted: ConditionInput,
): ConditionInput {
  const { invalid, missing, access } = inputs;
  if (invalid.length) {
    return {
      type: "Ready",
      status: "False",
      reason: "InvalidSpec",
      message: `${listProblems(invalid)}; existing children are kept, none is created`,
    };
  }
  if (missing.length) {
    return {
      type: "Ready",
      status: "False",
      reason: "MissingInput",
      message: `${listProblems(missing)}; existing children are kept, none is created`,
    };
  }
  if (access?.status !== "True") {
    return {
      type: "Ready",
      status: "False",
      reason: "AccessDenied",
      message: access?.message ?? "provider access unknown",
    };
  }
  if (admitted.status !== "True") {
    return { type: "Ready", status: "False", reason: admitted.reason, message: admitted.message };
  }
  if (ready) {
    return { type: "Ready", status: "True", reason: "Ready", message: "shape resolved and network ready" };
  }
  if (providerDeleting) {
    const pcRef = inputs.chosen!.ref;
    return {
      type: "Ready",
      status: "False",
      reason: "ProviderDeleting",
      message:
        `ProviderConfig ${pcRef.namespace}/${pcRef.name} is being deleted; no new IP allocation is made`,
    };
  }
  return { type: "Ready", status: "False", reason: "Pending", message: "waiting for the network" };
}
