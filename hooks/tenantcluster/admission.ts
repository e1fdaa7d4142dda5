import { butlerPath, LABELS, OWNER_ANNOTATIONS } from "../../lib/butler/mod.ts";
import type { AdmissionDecision, AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { type KubeWrite, type ReadPlan, type Reads, type Staged, staged } from "../../lib/http/mod.ts";
import type { HookContext } from "../../lib/hook/mod.ts";
import { ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { checkQuota, quotaInForce } from "./quota.ts";
import { aggregate, type FieldError } from "./restrictions.ts";
import { type ClusterObject, footprintOf, footprintText, type ShapeMemo } from "./footprint.ts";
import { type ClusterIndex, type CountedCluster, covers, indexClusters, loadOf, usageOf } from "./usage.ts";
import {
  LEDGER_MAX_BYTES,
  LEDGER_NAME,
  ledgerDataBytes,
  type QuotaLedger,
  quotaLedgerObject,
  readQuotaLedger,
  type Reservation,
  reservationFresh,
  reservedBefore,
  SETTLE_AFTER_SECONDS,
} from "./reservations.ts";
import {
  type ProviderChoice,
  providerKey,
  type ProviderRef,
  providerRefOf,
  recordedProviderRef,
  resolveProviderRef,
  teamNameOf,
  teamProviderNamespaces,
} from "../../lib/api/mod.ts";
import { formatPath } from "../../lib/contract/mod.ts";
import { laterRevision } from "../../lib/kube/revision.ts";

const ledgerPath = (namespace: string, name?: string) =>
  `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps${name ? `/${name}` : ""}`;

/** What quotas, environments and restrictions read of a TenantCluster: an update that leaves it alone reads nothing. */
function quotaRelevant(o: ClusterObject | null | undefined) {
  const a = o?.metadata?.annotations ?? {};
  return JSON.stringify([
    o?.spec ?? null,
    o?.metadata?.labels?.[LABELS.environment] ?? null,
    OWNER_ANNOTATIONS.map((k) => a[k] ?? null),
  ]);
}

function checked(review: AdmissionReviewRequest): boolean {
  const r = review.request;
  if (r.operation === "CREATE") return true;
  return r.operation === "UPDATE" &&
    quotaRelevant(r.object as ClusterObject) !== quotaRelevant(r.oldObject as ClusterObject);
}

const TEAM_PROVIDER = "teamProvider:";

/** The name of the Team's default ProviderConfig, once the Team has been read. */
function teamDefaultName(team: unknown): string | undefined {
  const name = (team as { spec?: { providerConfigRef?: { name?: unknown } } } | undefined)?.spec
    ?.providerConfigRef?.name;
  return typeof name === "string" && name ? name : undefined;
}

/**
 * What a TenantCluster review reads. A create, or an update that changes what quotas count: its Team, its
 * ProviderConfig, the TenantClusters of its namespace and the quota ledger; once the Team is read, its default
 * ProviderConfig where the controller looks for it (every cluster without its own reference uses it, so the
 * default decides and counts like an explicit one). A delete: the ledger, and the cluster itself (a reservation is
 * released only for a cluster really going).
 *
 * The ledger is read first: the TenantClusters are then read at least at its {@linkcode SEEN_ANNOTATION} version,
 * and once more from the API when a reservation past its grace has no cluster in that view.
 */
export function tenantClusterAdmissionReads(
  review: AdmissionReviewRequest,
  reads: Reads = {},
  context?: Pick<HookContext, "now">,
): ReadPlan {
  const r = review.request;
  const namespace = r.namespace ?? "";
  const ledger = { ledger: { path: ledgerPath(namespace, LEDGER_NAME), cas: true } };
  if (r.operation === "DELETE") {
    // The stored cluster decides a release, never a cache: a review that lags it must not free a reservation.
    return {
      ...ledger,
      cluster: { path: butlerPath("tenantclusters", namespace, r.name ?? ""), live: true },
    };
  }
  if (!checked(review)) return {};
  const team = teamNameOf(namespace, r.object?.spec);
  const ref = providerRefOf(r.object?.spec);
  const recorded = ref ? undefined : recordedProviderRef((r.object as ClusterObject | undefined)?.status);
  const first: ReadPlan = {
    ...(ref ? { provider: { path: butlerPath("providerconfigs", ref.namespace, ref.name) } } : {}),
    ...(recorded
      ? { recordedProvider: { path: butlerPath("providerconfigs", recorded.namespace, recorded.name) } }
      : {}),
    ...(team ? { team: { path: butlerPath("teams", undefined, team) } } : {}),
    ...ledger,
  };
  if (!("ledger" in reads)) return first;
  const defaultName = team ? teamDefaultName(reads.team) : undefined;
  const seen = readQuotaLedger(reads.ledger).seen;
  const clusters = butlerPath("tenantclusters", namespace);
  return {
    ...first,
    clusters: { path: clusters, list: true, ...(seen ? { atLeast: seen } : {}) },
    ...(defaultName
      ? Object.fromEntries(
        teamProviderNamespaces(namespace).map((ns) => [
          `${TEAM_PROVIDER}${ns}`,
          { path: butlerPath("providerconfigs", ns, defaultName) },
        ]),
      )
      : {}),
    ...(context && "clusters" in reads && unseenExpired(reads, review.request.name ?? "", context.now)
      ? { clustersLive: { path: clusters, list: true, live: true } }
      : {}),
  };
}

/**
 * Each cluster's load as last computed, and what it was computed from. The watch cache keeps an object as the same
 * value until it changes, and the reviews of a team read the same objects: a review then counts a namespace of
 * clusters with one lookup each instead of resolving each one's shape again.
 */
const COUNTED = new WeakMap<object, { basis: readonly unknown[]; counted: CountedCluster }>();

/** What a cluster's load depends on besides the cluster: the Team and which Team defaults exist. */
function basisOf(reads: Reads): unknown[] {
  // A Team is the same whether it came from the cache or from the API, as long as its version is.
  const version = (o: unknown) =>
    (o as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
      ?.resourceVersion ?? o;
  return [
    version(reads.team),
    ...Object.keys(reads).filter((k) => k.startsWith(TEAM_PROVIDER)).sort().map((k) =>
      reads[k] !== undefined
    ),
  ];
}

const sameBasis = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

function counted(
  c: ClusterObject,
  basis: readonly unknown[],
  compute: () => CountedCluster,
): CountedCluster {
  const known = COUNTED.get(c);
  if (known && sameBasis(known.basis, basis)) return known.counted;
  const fresh = compute();
  COUNTED.set(c, { basis, counted: fresh });
  return fresh;
}

/**
 * Each view of the clusters as last indexed, and on what basis. A view is the same list while the namespace does
 * not change (the watch cache hands it out until then, and a group's reviews share one read), so the reviews of a
 * group count the namespace once between them.
 */
const INDEXED = new WeakMap<object, { basis: readonly unknown[]; index: ClusterIndex }>();

function indexed(
  items: ClusterObject[],
  basis: readonly unknown[],
  count: (c: ClusterObject) => CountedCluster,
) {
  const known = INDEXED.get(items);
  if (known && sameBasis(known.basis, basis)) return known.index;
  const index = indexClusters(items.map((c) => counted(c, basis, () => count(c))));
  INDEXED.set(items, { basis, index });
  return index;
}

/**
 * A spec as parsed, by the object read: a Team or ProviderConfig is the same object for every review that reads
 * it until it changes, and parsing is not free. Parsed values are never changed.
 */
function parsedOnce<T>(schema: { safeParse(v: unknown): T }, memo: WeakMap<object, T>, spec: unknown): T {
  if (typeof spec !== "object" || spec === null) return schema.safeParse(spec);
  let parsed = memo.get(spec);
  if (parsed === undefined) memo.set(spec, parsed = schema.safeParse(spec));
  return parsed;
}

const TEAM_SPECS = new WeakMap<object, ReturnType<typeof TeamSpec.safeParse>>();
const PROVIDER_SPECS = new WeakMap<object, ReturnType<typeof ProviderConfigSpec.safeParse>>();

/** Shapes resolved under one Team spec as parsed; cleared when large (each distinct cluster shape adds one). */
const SHAPES = new WeakMap<object, ShapeMemo>();
const SHAPES_MAX = 4096;

function shapeMemo(team: object): ShapeMemo {
  let memo = SHAPES.get(team);
  if (!memo || memo.size > SHAPES_MAX) SHAPES.set(team, memo = new Map());
  return memo;
}

/** The view of the namespace's TenantClusters a decision uses, and whether it is live. */
function clusterView(reads: Reads): { items: ClusterObject[]; live: boolean } {
  const items = reads.clustersLive ?? reads.clusters;
  return { items: Array.isArray(items) ? items as ClusterObject[] : [], live: "clustersLive" in reads };
}

/**
 * Whether the ledger holds a reservation past its grace whose cluster the (cached) view does not show: only a
 * live read can tell a create that failed from a cluster the cache has not seen yet.
 */
function unseenExpired(reads: Reads, self: string, now: Date): boolean {
  let names: ReadonlySet<string | undefined> | undefined;
  for (const [name, r] of readQuotaLedger(reads.ledger).reservations) {
    if (name === self || reservationFresh(r, now)) continue;
    names ??= namesIn(clusterView(reads).items);
    if (!names.has(name)) return true;
  }
  return false;
}

/** The names in a view of the clusters, once per view (every review of a group plans on the same one). */
function namesIn(items: ClusterObject[]): ReadonlySet<string | undefined> {
  let names = NAMES.get(items);
  if (!names) NAMES.set(items, names = new Set(items.map((c) => c.metadata?.name)));
  return names;
}

const NAMES = new WeakMap<object, ReadonlySet<string | undefined>>();

/** What the reads are once a staged ledger write has landed: the ledger it writes, in place of the one read. */
export function tenantClusterAdmissionChain(reads: Reads, write: KubeWrite): Reads {
  return { ...reads, ledger: write.body };
}

/**
 * Reviews that may write a namespace's quota ledger share a key: after a conflict, they retry one at a time per
 * namespace in each process (concurrent creates of one team would otherwise mostly conflict with each other
 * again). Other replicas still meet the ledger's resourceVersion precondition.
 */
export function tenantClusterAdmissionKey(review: AdmissionReviewRequest): string | undefined {
  const r = review.request;
  return r.operation === "DELETE" || checked(review) ? `quota-ledger/${r.namespace ?? ""}` : undefined;
}

/** The ProviderConfig object read for a choice: the named one, the recorded Team default, or the current default. */
function providerObject(choice: ProviderChoice | undefined, reads: Reads): unknown {
  if (!choice) return undefined;
  if (choice.source === "explicit") return reads.provider;
  return choice.recorded ? reads.recordedProvider : reads[`${TEAM_PROVIDER}${choice.ref.namespace}`];
}

/** A ProviderConfig as admission reads it. */
interface ProviderObject {
  readonly metadata?: { readonly deletionTimestamp?: string | null };
  readonly spec?: { scope?: { type?: string; teamRef?: { name?: string } } };
}

/** How a message names the provider: by name, and as the Team's default when the cluster does not name it. */
function providerLabel(choice: ProviderChoice, team: string): string {
  return choice.source === "explicit"
    ? `ProviderConfig "${choice.ref.name}"`
    : `ProviderConfig "${choice.ref.name}" (team "${team}"'s default providerConfigRef)`;
}

/**
 * Rules on the provider a create or a move picks, explicit or the Team's default: upstream's team scope (a
 * team-scoped ProviderConfig only for TenantClusters of its team), and no new cluster on a ProviderConfig being
 * deleted (it would hold the deletion on its finalizer).
 */
function providerErrors(
  choice: ProviderChoice,
  pc: ProviderObject,
  team: string | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  const path = "spec.providerConfigRef";
  if (pc.metadata?.deletionTimestamp) {
    errors.push({
      rule: "providerDeleting",
      path,
      type: "Forbidden",
      detail: `${providerLabel(choice, team ?? "")} is being deleted; new TenantClusters cannot use it`,
    });
  }
  if ((pc.spec?.scope?.type ?? "platform") !== "team") return errors;
  const owner = pc.spec?.scope?.teamRef?.name;
  const detail = !owner
    ? "provider is team-scoped but has no teamRef"
    : !team
    ? "cluster has no teamRef but provider is team-scoped"
    : owner === team
    ? undefined
    : `ProviderConfig "${choice.ref.name}" is scoped to team "${owner}", but TenantCluster references team "${team}"`;
  if (detail) errors.push({ rule: "providerScope", path, type: "Forbidden", detail });
  return errors;
}

/**
 * Whether a delete review may release the reservation of the TenantCluster it names. A review is not trusted
 * for that (anyone who reaches the webhook could forge one to free another cluster's reservation): the stored
 * object is read. Released: a cluster gone or terminating, or the very object the review deletes (its UID, which
 * only who may read that cluster knows, and who may read it may delete it). A live cluster named by a review
 * that does not carry its UID keeps its reservation.
 */
function released(stored: unknown, uid: string | undefined): boolean {
  const m = (stored as { metadata?: { deletionTimestamp?: string | null; uid?: string } } | undefined)
    ?.metadata;
  return stored === undefined || stored === null || Boolean(m?.deletionTimestamp) ||
    (uid !== undefined && uid === m?.uid);
}

const CONTENDED: AdmissionDecision = {
  allowed: false,
  code: 409,
  reason: "Conflict",
  message:
    `too many TenantClusters of this team are being admitted at once: the quota ledger (ConfigMap ${LEDGER_NAME}) kept changing; try again`,
};

/** The answer when the API server is too slow for admission to read what it decides on, in time. */
export const TENANT_CLUSTER_ADMISSION_UNAVAILABLE: AdmissionDecision = {
  allowed: false,
  code: 429,
  reason: "TooManyRequests",
  message:
    "the Kubernetes API did not answer TenantCluster admission's reads (the team, its quota ledger, its clusters) or the ledger's write in time; try again",
};

/**
 * TenantCluster admission: the ProviderConfig's team scope, environments, feature restrictions, and the team's,
 * environment's and ProviderConfig's limits against usage (the TenantClusters that exist and the ledger's fresh
 * reservations). An admitted create or growing update holds only once its reservation is written to the ledger
 * under the resourceVersion read ({@linkcode staged}); a conflict means another admission of the team went first,
 * and the adapter reads and decides again. A Team or ProviderConfig that does not exist yet is let through: the
 * controller reports it, and a GitOps sync may create them in any order. A delete releases its reservation.
 */
export function admitTenantCluster(
  review: AdmissionReviewRequest,
  context: Pick<HookContext, "now">,
  reads: Reads,
): AdmissionDecision | Staged<AdmissionDecision> {
  const r = review.request;
  const namespace = r.namespace ?? "";
  const name = r.name ?? (r.object as ClusterObject | undefined)?.metadata?.name ?? "";
  const ledger = readQuotaLedger(reads.ledger);
  const now = context.now;
  if (r.operation === "DELETE") {
    const uid = (r.oldObject as { metadata?: { uid?: string } } | undefined)?.metadata?.uid;
    if (!ledger.reservations.has(name) || !released(reads.cluster, uid)) return { allowed: true };
    const write = {
      method: "PUT" as const,
      path: ledgerPath(namespace, LEDGER_NAME),
      body: quotaLedgerObject(namespace, ledger, name, undefined),
    };
    return staged({ allowed: true }, write, { allowed: true });
  }
  if (!checked(review)) return { allowed: true };

  const errors: FieldError[] = [];
  const teamName = teamNameOf(namespace, r.object?.spec) ?? "";
  const defaults = { team: teamName || undefined, defaultName: teamDefaultName(reads.team) };
  const teamProvider = (ref: ProviderRef) => reads[`${TEAM_PROVIDER}${ref.namespace}`];
  const resolve = (c: ClusterObject | null | undefined) =>
    resolveProviderRef(
      namespace,
      c?.spec,
      defaults,
      (ref) => teamProvider(ref) !== undefined,
      recordedProviderRef(c?.status),
    );
  const choice = resolve(r.object as ClusterObject);
  const oldChoice = r.oldObject ? resolve(r.oldObject as ClusterObject) : undefined;
  const pcObject = providerObject(choice, reads) as ProviderObject | undefined;
  const key = choice && providerKey(choice.ref);
  const oldKey = oldChoice && providerKey(oldChoice.ref);
  if (choice && pcObject && (r.operation === "CREATE" || key !== oldKey)) {
    errors.push(...providerErrors(choice, pcObject, teamNameOf(namespace, r.object?.spec)));
  }
  if (!reads.team) return deny(errors);
  const team = parsedOnce(TeamSpec, TEAM_SPECS, (reads.team as { spec?: unknown }).spec);
  if (!team.success) {
    // A Team the webhook cannot read must not mean "no limits": fail closed, and say where.
    const issue = team.error.issues[0]!;
    errors.push({
      rule: "teamUnreadable",
      path: "spec",
      type: "Forbidden",
      detail: `team "${teamName}" has a spec admission cannot read (${
        formatPath(["spec", ...issue.path])
      }: ${issue.message}); its limits cannot be checked until a platform admin fixes it`,
    });
    return deny(errors);
  }

  const pcSpec = parsedOnce(ProviderConfigSpec, PROVIDER_SPECS, pcObject?.spec);
  const provider = choice && pcSpec.success
    ? { key: key!, name: choice.ref.name, spec: pcSpec.data }
    : undefined;
  const memo = shapeMemo(team.data);
  const view = clusterView(reads);
  const clusters = indexed(view.items, basisOf(reads), (c) => {
    const cref = resolve(c);
    return {
      name: c.metadata?.name ?? "",
      deleting: Boolean(c.metadata?.deletionTimestamp),
      load: footprintOf(c, team.data, cref && providerKey(cref.ref), memo),
      version: c.metadata?.resourceVersion,
    };
  });
  const { errors: quota, load } = checkQuota({
    operation: r.operation as "CREATE" | "UPDATE",
    namespace,
    teamName,
    team: team.data,
    object: r.object as ClusterObject,
    oldObject: r.oldObject as ClusterObject | undefined,
    provider,
    oldProviderKey: oldKey,
    usage: usageOf(clusters, ledger, name, now, view.live),
    memo,
  });
  errors.push(...quota);
  if (errors.length) return deny(errors);
  if (!quotaInForce(team.data, provider)) return { allowed: true };
  const { drop, seen } = spent(clusters, ledger, view.live, now);
  const body = quotaLedgerObject(
    namespace,
    ledger,
    name,
    { ...footprintText(load), at: formatTime(now) },
    drop,
    seen,
  );
  const write = ledger.resourceVersion
    ? { method: "PUT" as const, path: ledgerPath(namespace, LEDGER_NAME), body }
    : { method: "POST" as const, path: ledgerPath(namespace), body };
  const bytes = ledgerDataBytes(body);
  if (bytes > LEDGER_MAX_BYTES) return ledgerFull(namespace, ledger.reservations.size, bytes);
  return staged({ allowed: true }, write, CONTENDED);
}

/** A create refused because the ledger would pass its bound: a 429, so clients retry once clusters are stored. */
function ledgerFull(namespace: string, reservations: number, bytes: number): AdmissionDecision {
  return {
    allowed: false,
    code: 429,
    reason: "TooManyRequests",
    message:
      `too many TenantClusters of namespace "${namespace}" are being admitted at once: the quota ledger ` +
      `(ConfigMap ${LEDGER_NAME}) would hold ${
        reservations + 1
      } reservations, ${bytes} bytes, over its bound of ` +
      `${LEDGER_MAX_BYTES} bytes; try again once the clusters admitted are stored`,
  };
}

/**
 * Which reservations a write drops, and the ledger's new {@linkcode SEEN_ANNOTATION}: those whose cluster the
 * view shows stored (covering its reservation for {@linkcode SETTLE_AFTER_SECONDS}, being deleted, or past the
 * grace), recording the newest such
 * cluster's resourceVersion so that no later decision can read a view without it; and, from a live view only,
 * those past the grace whose cluster was never stored.
 */
function spent(
  clusters: ClusterIndex,
  ledger: QuotaLedger,
  live: boolean,
  now: Date,
): { drop: (name: string, r: Reservation) => boolean; seen: string | undefined } {
  const byName = clusters.byName;
  const dropped = new Set<string>();
  let seen = ledger.seen;
  for (const [key, r] of ledger.reservations) {
    const c = byName.get(key);
    const fresh = reservationFresh(r, now);
    if (!c) {
      if (live && !fresh) dropped.add(key);
      continue;
    }
    const settled = reservedBefore(r, now, SETTLE_AFTER_SECONDS) && covers(c.load, loadOf(r));
    if (!(c.deleting || !fresh || settled)) continue;
    const later = laterRevision(seen, c.version);
    // A version that is not an etcd revision cannot be ordered: the reservation stays until it expires unseen.
    if (later === undefined) continue;
    seen = later;
    dropped.add(key);
  }
  return { drop: (key) => dropped.has(key), seen };
}

function deny(errors: readonly FieldError[]): AdmissionDecision {
  return errors.length
    ? {
      allowed: false,
      code: 403,
      reason: "Forbidden",
      message: aggregate(errors),
      causes: errors.map((e) => ({ reason: e.rule, field: e.path, message: e.detail })),
    }
    : { allowed: true };
}
