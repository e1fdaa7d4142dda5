import { butlerPath, keyedItems, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import {
  type AdmissionDecision,
  type AdmissionReviewRequest,
  deletionInUse,
} from "../../lib/contract/mod.ts";
import type { ReadPlan, Reads } from "../../lib/http/mod.ts";
import { clustersReferencing, deletionBlockedMessage } from "./sync.ts";
import { providerKey, recordedProviderRef, resolveProviderRef, teamNameOf } from "../../lib/api/mod.ts";

/**
 * The namespace whose TenantClusters may use a ProviderConfig: its own, or (a butler-system provider) every one
 * (`undefined`). References stay in their trust zone (lib/api/references.ts).
 */
function usersNamespace(namespace: string | undefined): string | undefined {
  return namespace === SYSTEM_NAMESPACE ? undefined : namespace;
}

/**
 * A ProviderConfig delete needs every TenantCluster (any namespace may reference a butler-system provider), and
 * to resolve the clusters that name none as the controller does, every Team (their default) and every
 * ProviderConfig (where that default is found); all from the watch cache. And, read live, how many TenantClusters
 * may use it: one page of one object (`limit=1`: its `remainingItemCount`), whatever the cluster holds, so that a
 * cluster created a moment ago, which the cache has not read yet, is not missed.
 */
export function providerConfigAdmissionReads(review: AdmissionReviewRequest): ReadPlan {
  const r = review.request;
  if (r.operation === "CREATE" && r.namespace && r.namespace !== SYSTEM_NAMESPACE) {
    return { namespaceProviders: { path: butlerPath("providerconfigs", r.namespace), list: true } };
  }
  return r.operation === "DELETE"
    ? {
      tenantClusters: { path: butlerPath("tenantclusters"), list: true },
      teams: { path: butlerPath("teams"), list: true },
      providerConfigs: { path: butlerPath("providerconfigs"), list: true },
      tenantClusterPage: {
        path: `${butlerPath("tenantclusters", usersNamespace(review.request.namespace))}?limit=1`,
        live: true,
      },
    }
    : {};
}

/**
 * How many TenantClusters may use the ProviderConfig that the live page counts and the cache does not hold yet (0
 * when the page does not count them: an API server that sends no `remainingItemCount`).
 */
function unread(reads: Reads, namespace: string | undefined): number {
  const page = reads.tenantClusterPage as
    | { items?: unknown[]; metadata?: { remainingItemCount?: unknown; continue?: unknown } }
    | undefined;
  const remaining = page?.metadata?.remainingItemCount;
  const items = Array.isArray(page?.items) ? page.items.length : 0;
  // A page that is the whole list carries neither; one that is not, and does not count the rest, tells nothing.
  const live = typeof remaining === "number"
    ? items + remaining
    : page?.metadata?.continue
    ? undefined
    : items;
  if (live === undefined) return 0;
  const ns = usersNamespace(namespace);
  const cached = keyedItems(reads.tenantClusters).filter(([key]) =>
    ns === undefined || key.startsWith(`${ns}/`)
  );
  return Math.max(0, live - cached.length);
}

/**
 * The TenantClusters read, each with the provider it uses resolved exactly as the controller does (its own
 * reference, else its Team's default in the team namespace or butler-system): a cluster that relies on the
 * default holds the ProviderConfig too, before its first sync has recorded which one it uses.
 */
function resolvedClusters(reads: Reads): [string, unknown][] {
  const teams = new Map(keyedItems(reads.teams));
  const existing = new Set(keyedItems(reads.providerConfigs).map(([key]) => key));
  return keyedItems(reads.tenantClusters).map(([key, tc]) => {
    const c = tc as { metadata?: { namespace?: string }; spec?: unknown; status?: unknown };
    const namespace = c.metadata?.namespace ?? "";
    const team = teamNameOf(namespace, c.spec);
    const defaultName =
      (teams.get(team ?? "") as { spec?: { providerConfigRef?: { name?: string } } } | undefined)
        ?.spec?.providerConfigRef?.name;
    const choice = resolveProviderRef(
      namespace,
      c.spec,
      { team, defaultName },
      (ref) => existing.has(providerKey(ref)),
      recordedProviderRef(c.status),
    );
    return [key, choice ? { spec: { providerConfigRef: choice.ref } } : tc];
  });
}

/**
 * The clusters that hold a ProviderConfig, resolved once per set of lists read: the watch cache hands out the same
 * lists until one changes, and every delete review of a burst asks the same of them.
 */
function blockingClusters(pc: { name: string; namespace?: string | undefined }, reads: Reads): string[] {
  const list = reads.tenantClusters;
  if (typeof list !== "object" || list === null) return clustersReferencing(pc, resolvedClusters(reads));
  let memo = RESOLVED.get(list);
  if (!memo || memo.teams !== reads.teams || memo.providerConfigs !== reads.providerConfigs) {
    memo = {
      teams: reads.teams,
      providerConfigs: reads.providerConfigs,
      clusters: resolvedClusters(reads),
      byProvider: new Map(),
    };
    RESOLVED.set(list, memo);
  }
  const key = JSON.stringify([pc.namespace, pc.name]);
  let blocking = memo.byProvider.get(key);
  if (!blocking) {
    // Names come from reviews: a burst of made-up ones must not grow the memo without bound.
    if (memo.byProvider.size >= BY_PROVIDER_MAX) memo.byProvider.clear();
    memo.byProvider.set(key, blocking = clustersReferencing(pc, memo.clusters));
  }
  return blocking;
}

const RESOLVED = new WeakMap<object, {
  teams: unknown;
  providerConfigs: unknown;
  clusters: [string, unknown][];
  byProvider: Map<string, string[]>;
}>();
const BY_PROVIDER_MAX = 256;

/**
 * The most ProviderConfigs a namespace other than butler-system may hold: a team needs one per infrastructure it
 * runs clusters on, a handful; the bound keeps what one team stores, and what admission and the controllers read
 * of it, from growing without end (issue #55). Its absence costs little: each is read as a small projection.
 */
export const MAX_PROVIDER_CONFIGS_PER_NAMESPACE = 64;

/**
 * ProviderConfig admission: a create is refused in a namespace that holds {@linkcode MAX_PROVIDER_CONFIGS_PER_NAMESPACE}
 * already (butler-system apart); a delete is refused while a TenantCluster references it, with the message its
 * finalizer reports (the finalizer stays as the second line of defence), and refused for now while the live count
 * of the TenantClusters that may use it is more than the cache holds (a cluster created a moment ago: try again).
 * Every other rule is CRD CEL.
 *
 * @example
 * ```ts
 * admitProviderConfig(review, context, { tenantClusters: [] }); // { allowed: true }
 * ```
 */
export function admitProviderConfig(
  review: AdmissionReviewRequest,
  _context: unknown,
  reads: Reads,
): AdmissionDecision {
  const r = review.request;
  if (r.operation === "CREATE") return countAdmitted(r.namespace, reads.namespaceProviders);
  if (r.operation !== "DELETE") return { allowed: true };
  const name = r.name ?? "";
  const blocking = blockingClusters({ name, namespace: r.namespace }, reads);
  if (blocking.length) return deletionInUse(deletionBlockedMessage(name, blocking));
  const behind = unread(reads, r.namespace);
  if (!behind) return { allowed: true };
  const message =
    `cannot delete ProviderConfig "${name}" yet: ${behind} TenantCluster(s) that may use it were created a moment ago and admission has not read them yet; try again`;
  return {
    allowed: false,
    code: 409,
    reason: "Conflict",
    message,
    causes: [{ reason: "notReadYet", message }],
  };
}

/** A create in a namespace that holds the most ProviderConfigs it may already is refused. */
function countAdmitted(namespace: string | undefined, held: unknown): AdmissionDecision {
  const count = Array.isArray(held) ? held.length : 0;
  if (count < MAX_PROVIDER_CONFIGS_PER_NAMESPACE) return { allowed: true };
  return {
    allowed: false,
    code: 403,
    reason: "Forbidden",
    message:
      `namespace "${namespace}" holds ${count} ProviderConfigs already, the most a namespace may hold (${MAX_PROVIDER_CONFIGS_PER_NAMESPACE})`,
  };
}
