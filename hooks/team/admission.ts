import { butlerPath, keyedItems, LABELS } from "../../lib/butler/mod.ts";
import { listNames, listProblems } from "../../lib/conditions/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  REFUSAL_BOUNDS,
} from "../../lib/contract/mod.ts";
import type { ReadPlan, Reads } from "../../lib/http/mod.ts";
import { teamNamespace } from "../../lib/api/mod.ts";

function environmentNames(team: unknown): string[] {
  const envs = (team as { spec?: { environments?: unknown } } | null | undefined)?.spec?.environments;
  return Array.isArray(envs) ? envs.flatMap((e) => (typeof e?.name === "string" ? [e.name] : [])) : [];
}

/** The environments an update removes. */
function removedEnvironments(review: AdmissionReviewRequest): string[] {
  if (review.request.operation !== "UPDATE") return [];
  const kept = new Set(environmentNames(review.request.object));
  return environmentNames(review.request.oldObject).filter((e) => !kept.has(e));
}

/** Only an update that removes an environment reads anything: the TenantClusters of the team namespace. */
export function teamAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  return removedEnvironments(review).length
    ? {
      tenantClusters: {
        path: butlerPath("tenantclusters", teamNamespace(review.request.name ?? "")),
        list: true,
      },
    }
    : {};
}

/**
 * The clusters (`namespace/name`, sorted) that use each environment, not being deleted: once per list read (the
 * watch cache hands out the same list until the namespace changes, and every review of it asks the same).
 */
function environmentsInUse(list: unknown): ReadonlyMap<string, readonly string[]> {
  const known = typeof list === "object" && list !== null ? IN_USE.get(list) : undefined;
  if (known) return known;
  const byEnv = new Map<string, string[]>();
  for (const [key, tc] of keyedItems(list)) {
    const m = (tc as { metadata: { labels?: Record<string, string>; deletionTimestamp?: string } }).metadata;
    const env = m.labels?.[LABELS.environment];
    if (!env || m.deletionTimestamp) continue;
    const keys = byEnv.get(env);
    if (keys) keys.push(key);
    else byEnv.set(env, [key]);
  }
  for (const keys of byEnv.values()) keys.sort();
  if (typeof list === "object" && list !== null) IN_USE.set(list, byEnv);
  return byEnv;
}

const IN_USE = new WeakMap<object, ReadonlyMap<string, readonly string[]>>();

/**
 * Team admission: removing an environment that TenantClusters still use (their environment label; clusters
 * being deleted do not count) is refused, naming them; without this they would go `Failed`. Who may change
 * what on a Team is decided by ValidatingAdmissionPolicies, not here.
 */
export function admitTeam(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const removed = removedEnvironments(review);
  if (removed.length === 0) return { allowed: true };
  const inUse = environmentsInUse(reads.tenantClusters);
  const team = review.request.name ?? "";
  const problems = removed.flatMap((env) => {
    const using = inUse.get(env) ?? [];
    return using.length
      ? [
        `cannot remove environment "${env}" from team "${team}": TenantCluster${
          using.length > 1 ? "s" : ""
        } ${listNames(using)} still use${using.length > 1 ? "" : "s"} it`,
      ]
      : [];
  });
  return problems.length
    ? {
      allowed: false,
      code: 409,
      reason: "Conflict",
      message: listProblems(problems, REFUSAL_BOUNDS.causes),
      causes: problems.map((message) => ({
        reason: "environmentInUse",
        field: "spec.environments",
        message,
      })),
    }
    : { allowed: true };
}
