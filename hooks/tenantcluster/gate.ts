/**
 * The TenantCluster's side of the quota holds (hooks/tenantcluster/holds.ts): from what it asks for, its quota
 * record and its Team's judgement, what the cluster may act on now, what its record must say, and the conditions
 * that say why ({@linkcode admissionGate}).
 *
 * @module
 */
import { KINDS } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { asDesired, type CompositeRequest, groupKey, type KubeObject } from "../../lib/contract/mod.ts";
import type { EffectiveShape } from "../../lib/shape/mod.ts";
import { type ProviderConfigSpec, providerKey, TeamAdmission, type TeamSpec } from "../../lib/api/mod.ts";
import { ADMITTED, startedCondition } from "./holds.ts";
import type { Inputs } from "./inputs.ts";
import { CONFIGMAP } from "./metallb.ts";
import { lbName, nodesName } from "./plan_draft.ts";
import { quotaInForce } from "./quota.ts";
import {
  describeChange,
  type ObservedRecord,
  readRecord,
  recordName,
  recordObject,
  sameShare,
  type Share,
  shareCovers,
  shareOf,
} from "./record.ts";

/** The condition a started cluster reports while it asks for more than it was admitted. */
export const CHANGE_ADMITTED = "ChangeAdmitted";

/** What {@linkcode admissionGate} decides from: the cluster, its Team, its provider, its record. */
export interface GateInput {
  readonly uid: string;
  readonly teamName?: string | undefined;
  readonly team?: TeamSpec | undefined;
  /** The Team's `status` as read. */
  readonly teamStatus?: unknown;
  readonly provider?: { readonly spec: Pick<ProviderConfigSpec, "limits"> } | undefined;
  /** The cluster's `status.conditions` as read: an `Admitted` True there says it started. */
  readonly previous: unknown;
  /** Whether the cluster has children already (it started before `Admitted` was recorded). */
  readonly hasChildren: boolean;
  /** Its quota record as observed. */
  readonly record?: ObservedRecord | undefined;
  /** What it asks for now; absent while an input is missing (nothing is claimed or applied then). */
  readonly request?: Share | undefined;
}

/** What {@linkcode admissionGate} decides. */
export interface Gate {
  /** Whether the cluster has started. */
  readonly admitted: boolean;
  /** Its `Admitted` condition. */
  readonly condition: ConditionInput;
  /** Its `ChangeAdmitted` condition, once started with limits in force. */
  readonly change?: ConditionInput | undefined;
  /** What it acts on while a change waits (else what it asks for). */
  readonly acting?: Share | undefined;
  /** The record to write; absent: the observed one is kept as it is (none is made). */
  readonly record?: { readonly admitted?: Share | undefined; readonly claim?: Share | undefined } | undefined;
}

type Verdict = { readonly admitted: boolean; readonly condition: ConditionInput };

const yes = (reason: string, message: string): Verdict => ({
  admitted: true,
  condition: { type: ADMITTED, status: "True", reason, message },
});
const no = (reason: string, message: string): Verdict => ({
  admitted: false,
  condition: { type: ADMITTED, status: "False", reason, message },
});

/** The Team's judgement of this cluster's claim: admitted (that record version), held (why), or not yet. */
function judged(input: GateInput): { granted: boolean; held?: string } {
  const j = TeamAdmission.parse((input.teamStatus as { admission?: unknown } | undefined)?.admission);
  const version = input.record?.version;
  const granted = Boolean(version) &&
    Boolean(j.admitted?.some((c) => c.uid === input.uid && c.claim === version));
  const mine = j.held?.find((c) => c.uid === input.uid);
  const held = mine ? mine.message ?? j.message ?? "it does not fit within the team's limits" : undefined;
  return { granted, ...(held ? { held } : {}) };
}

/**
 * What a cluster of a team with limits in force may act on. It applies at once what it was admitted covers; else
 * the claim its Team admitted (that version of the record, if what it asks for is within it); else it claims what
 * it asks for (a claim that is the same is kept, so its version stays the one judged) and waits, running as
 * admitted if it started.
 */
function inForce(input: GateInput, request: Share, team: string, before?: Verdict): Gate {
  const record = input.record;
  const admitted = record?.admitted;
  const startedBy = before;
  const runsAsAsked = (v: Verdict): Gate => ({
    ...v,
    record: { admitted: request },
    ...(v.admitted ? { change: asSpecified(team) } : {}),
  });
  // Started before it had a record (or before its Team set a limit): recorded as it asks now.
  if (startedBy && !admitted) return runsAsAsked(startedBy);
  if (admitted && shareCovers(admitted, request)) return runsAsAsked(startedBy!);
  const j = judged(input);
  if (record?.claim && j.granted && shareCovers(record.claim, request)) {
    return runsAsAsked(
      startedBy ?? yes("WithinLimits", `team "${team}" counted this cluster within its limits`),
    );
  }
  const claimed = record?.claim && sameShare(record.claim, request);
  const held = claimed ? j.held : undefined;
  const write = claimed ? undefined : { admitted, claim: request };
  if (!startedBy) {
    const v = held
      ? no("QuotaExceeded", `team "${team}" holds this cluster: ${held}; it starts once it fits`)
      : no("AwaitingTeam", `waiting for team "${team}" to count this cluster against its limits`);
    return { ...v, ...(write ? { record: write } : {}) };
  }
  const change = describeChange(admitted!, request);
  return {
    ...startedBy,
    acting: admitted,
    ...(write ? { record: write } : {}),
    change: held
      ? {
        type: CHANGE_ADMITTED,
        status: "False",
        reason: "QuotaExceeded",
        message:
          `team "${team}" holds this change (${change}): ${held}; the cluster runs as admitted until it fits`,
      }
      : {
        type: CHANGE_ADMITTED,
        status: "False",
        reason: "AwaitingTeam",
        message:
          `waiting for team "${team}" to count this change against its limits (${change}); the cluster runs as admitted until then`,
      },
  };
}

const asSpecified = (team: string): ConditionInput => ({
  type: CHANGE_ADMITTED,
  status: "True",
  reason: "AsSpecified",
  message:
    `the cluster runs as specified: team "${team}" counted its workers, environment, owner and ProviderConfig`,
});

/**
 * Whether a TenantCluster may start, what it acts on, and its record. Once started it stays started (nothing
 * stops it or takes its children); what waits is what it asks for beyond what it was admitted. A cluster outside
 * every team namespace never starts (no Team counts it); one whose Team and provider set no limit its clusters share starts at once and applies
 * every change at once; else every start and every change that adds usage (more workers or larger ones, another
 * environment, owner or ProviderConfig) waits for its Team to admit it, and anything else applies at once.
 */
export function admissionGate(input: GateInput): Gate {
  const team = input.teamName;
  const prior = startedCondition(input.previous);
  const before = prior
    ? yes(prior.reason, prior.message)
    : input.record?.admitted
    ? yes("WithinLimits", `team "${team}" counted this cluster within its limits`)
    : input.hasChildren
    ? yes("Started", "started before admission was recorded: it has children")
    : undefined;
  const request = input.request;
  if (!team) {
    return before ?? no("NoTeam", "not in a team namespace: no Team counts it, so it does not start");
  }
  if (!input.team) return before ?? no("AwaitingTeam", `waiting for team "${team}" to be read`);
  if (!quotaInForce(input.team, input.provider)) {
    const v = before ??
      yes("NoSharedLimits", `team "${team}" and its provider set no limit its clusters share`);
    return { ...v, ...(input.record && request ? { record: { admitted: request } } : {}) };
  }
  if (!request) {
    if (before) return { ...before, acting: input.record?.admitted };
    const j = judged(input);
    return j.held
      ? no("QuotaExceeded", `team "${team}" holds this cluster: ${j.held}; it starts once it fits`)
      : no("AwaitingTeam", `waiting for team "${team}" to count this cluster against its limits`);
  }
  return inForce(input, request, team, before);
}

/** The quota side of one TenantCluster sync ({@linkcode quotaHold}). */
export interface QuotaHold {
  readonly gate: Gate;
  /** The quota record to return as a child (the observed one kept when nothing is decided). */
  readonly child?: KubeObject | undefined;
  /** The shape the cluster acts on: what it was admitted while a change waits, else what it asks for. */
  readonly shape: EffectiveShape;
  /** Whether a move to another ProviderConfig waits (the network then stays as it is). */
  readonly providerHeld: boolean;
}

/**
 * Reads the cluster's quota record (its child) and what it asks for (once every input is there), and gates it
 * ({@linkcode admissionGate}). A cluster with no record started (before records were kept) if it has the
 * allocations only a started cluster makes; its record, or an allocation made by hand that it adopts, says nothing.
 */
export function quotaHold(request: CompositeRequest, inputs: Inputs, inputsOk: boolean): QuotaHold {
  const tc = request.parent;
  const ns = tc.metadata.namespace ?? "";
  const recordKey = `${ns}/${recordName(tc.metadata.name)}`;
  const raw = request.children[groupKey(CONFIGMAP)]?.[recordKey];
  const record = raw ? readRecord(raw) : undefined;
  // Only the allocations a cluster makes once started: not its record, and not a hand-made one it adopts.
  const own = new Set([lbName, nodesName].map((n) => `${ns}/${n(tc.metadata.name)}`));
  const hasChildren = Object.keys(request.children[groupKey(KINDS.IPAllocation)] ?? {}).some((k) =>
    own.has(k)
  );
  const chosen = inputs.chosen;
  const asked = inputsOk && chosen ? shareOf(tc, providerKey(chosen.ref), inputs.resolved.shape) : undefined;
  const gate = admissionGate({
    uid: tc.metadata.uid ?? "",
    teamName: inputs.teamName,
    team: inputs.teamSpec,
    teamStatus: inputs.teamStatus,
    provider: inputs.provider,
    previous: ((tc.status ?? {}) as Record<string, unknown>).conditions,
    hasChildren,
    record,
    request: asked,
  });
  const acting = gate.acting;
  const shape = inputs.resolved.shape;
  return {
    gate,
    child: gate.record ? recordObject(tc.metadata.name, ns, gate.record) : raw ? asDesired(raw) : undefined,
    shape: acting
      ? {
        ...shape,
        workerCount: acting.workerCount,
        workerCPU: acting.workerCPU,
        workerMemory: acting.workerMemory,
        workerDisk: acting.workerDisk,
      }
      : shape,
    providerHeld: Boolean(acting && asked && acting.provider !== asked.provider),
  };
}
