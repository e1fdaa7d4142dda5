/**
 * `kubectl butler env list|add|remove`: a Team's environments. `list` shows each with its limits, clusters and
 * usage (the Team controller's own measures); `add` and `remove` edit the Team with one update under its
 * resourceVersion. A removal is first put to the Team webhook's own decision (`admitTeam`) with the team's
 * clusters, so one still in use is refused before anything is sent, in the webhook's words; the API server (its
 * policies: who may change environments) has the last word.
 *
 * @module
 */
import { admitTeam } from "../hooks/team/admission.ts";
import type { Usage } from "../hooks/team/usage.ts";
import type { EnvironmentSpec, TeamSpec } from "../lib/api/mod.ts";
import { type Colour, type Paint, plain } from "./colour.ts";

/** A Team as read from the API (what this command edits: its spec, under its resourceVersion). */
export interface TeamObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; resourceVersion?: string; [key: string]: unknown };
  spec: TeamSpec & Record<string, unknown>;
  [key: string]: unknown;
}

/** What `env add` sets on the new environment. */
export interface NewEnvironment {
  readonly name: string;
  readonly description?: string;
  readonly maxClusters?: number;
  readonly maxClustersPerMember?: number;
}

/**
 * The Team with environment `env` added at the end, or why not (it exists already).
 *
 * @example
 * ```ts
 * withEnvironment(team, { name: "staging", maxClusters: 4 });
 * ```
 */
export function withEnvironment(
  team: TeamObject,
  env: NewEnvironment,
): { ok: true; team: TeamObject } | { ok: false; message: string } {
  const envs = team.spec.environments ?? [];
  if (envs.some((e) => e.name === env.name)) {
    return { ok: false, message: `team "${team.metadata.name}" already has environment "${env.name}"` };
  }
  const limits = {
    ...(env.maxClusters !== undefined ? { maxClusters: env.maxClusters } : {}),
    ...(env.maxClustersPerMember !== undefined ? { maxClustersPerMember: env.maxClustersPerMember } : {}),
  };
  const added: EnvironmentSpec = {
    name: env.name,
    ...(env.description !== undefined ? { description: env.description } : {}),
    ...(Object.keys(limits).length ? { limits } : {}),
  };
  return { ok: true, team: { ...team, spec: { ...team.spec, environments: [...envs, added] } } };
}

/**
 * The Team without environment `env`, or why not: it has no such environment, or (the Team webhook's decision,
 * with `clusters` the TenantClusters of the team namespace) clusters still use it.
 */
export function withoutEnvironment(
  team: TeamObject,
  env: string,
  clusters: readonly unknown[],
): { ok: true; team: TeamObject } | { ok: false; message: string } {
  const envs = team.spec.environments ?? [];
  if (!envs.some((e) => e.name === env)) {
    return { ok: false, message: `team "${team.metadata.name}" has no environment "${env}"` };
  }
  const next = { ...team, spec: { ...team.spec, environments: envs.filter((e) => e.name !== env) } };
  const decision = admitTeam(
    {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      request: {
        uid: "kubectl-butler",
        kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "Team" },
        resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "teams" },
        name: team.metadata.name,
        operation: "UPDATE",
        userInfo: {},
        object: next,
        oldObject: team,
      },
    },
    undefined,
    { tenantClusters: clusters },
  );
  return decision.allowed ? { ok: true, team: next } : { ok: false, message: decision.message ?? "refused" };
}

/** One row of `env list`. */
export interface EnvironmentRow {
  readonly name: string;
  readonly clusters: number;
  readonly maxClusters?: string;
  readonly maxClustersPerMember?: string;
  readonly percent?: number;
  readonly state: string;
  readonly description?: string;
}

/** The environments of a Team with their limits and usage (from `computeUsage`). */
export function environmentRows(spec: TeamSpec, usage: Usage): EnvironmentRow[] {
  return (spec.environments ?? []).map((e) => {
    const used = usage.environments.find((u) => u.name === e.name);
    const measures = usage.measures.filter((m) =>
      m.label === `clusters in environment ${e.name}` || m.label.endsWith(` in environment ${e.name}`)
    );
    const state = measures.some((m) => m.state === "Exceeded")
      ? "Exceeded"
      : measures.some((m) => m.state === "Warning")
      ? "Warning"
      : "OK";
    return {
      name: e.name,
      clusters: used?.clusters ?? 0,
      ...(e.limits?.maxClusters !== undefined ? { maxClusters: String(e.limits.maxClusters) } : {}),
      ...(e.limits?.maxClustersPerMember !== undefined
        ? { maxClustersPerMember: String(e.limits.maxClustersPerMember) }
        : {}),
      ...(used?.clusterUtilization !== undefined ? { percent: used.clusterUtilization } : {}),
      state,
      ...(e.description ? { description: e.description } : {}),
    };
  });
}

/** `env list` as text: a table, one environment per line. */
export function renderEnvironments(
  team: string,
  rows: readonly EnvironmentRow[],
  paint: Paint = plain,
): string {
  if (!rows.length) return `team "${team}" defines no environments\n`;
  const table = [
    ["NAME", "CLUSTERS", "MAX", "PER MEMBER", "USE", "QUOTA", "DESCRIPTION"],
    ...rows.map((r) => [
      r.name,
      String(r.clusters),
      r.maxClusters ?? "-",
      r.maxClustersPerMember ?? "-",
      r.percent === undefined ? "-" : `${r.percent}%`,
      r.state,
      r.description ?? "",
    ]),
  ];
  const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => r[c]!.length)));
  const colours: Record<string, Colour> = { OK: "green", Warning: "yellow", Exceeded: "red" };
  const QUOTA = 5;
  // The verdict is painted after padding, so colour codes take no column; a row without a description would
  // otherwise end in padded spaces, which trimEnd takes off the plain text the same way.
  return table.map((r, i) =>
    r.map((v, c) => {
      const cell = c === r.length - 1 ? v : v.padEnd(widths[c]!);
      if (i === 0 || c !== QUOTA) return cell;
      return `${paint(v, colours[v] ?? "green")}${cell.slice(v.length)}`;
    }).join("  ").trimEnd()
  ).join("\n") + "\n";
}
