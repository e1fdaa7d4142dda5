/**
 * TenantCluster admission's writes to the quota ledger: a reservation for what it admits (with the reservations
 * the view shows spent dropped, under the resourceVersion read), a release for a cluster really going, and the
 * answers when the ledger is contended or full.
 *
 * @module
 */
import type { AdmissionDecision, AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { type Staged, staged } from "../../lib/http/mod.ts";
import { laterRevision } from "../../lib/kube/revision.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { footprintText } from "./footprint.ts";
import { type ClusterIndex, covers, type Load, loadOf } from "./usage.ts";
import {
  LEDGER_MAX_BYTES,
  LEDGER_NAME,
  ledgerDataBytes,
  type QuotaLedger,
  quotaLedgerObject,
  type Reservation,
  reservationFresh,
  reservedBefore,
  SETTLE_AFTER_SECONDS,
} from "./reservations.ts";

/** The path of a namespace's ConfigMaps, or of one of them. */
export function ledgerPath(namespace: string, name?: string): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps${name ? `/${name}` : ""}`;
}

/**
 * Whether a delete review may release the reservation of the TenantCluster it names. A review is not trusted
 * for that (anyone who reaches the webhook could forge one to free another cluster's reservation): the stored
 * object is read. Released: a cluster terminating, or the very object the review deletes (its UID, which only
 * who may read that cluster knows, and who may read it may delete it). A cluster not stored keeps a fresh
 * reservation: it may be admitted and on its way to being stored (a forged delete of it would let a second
 * create pass the limit); a reservation past its grace no longer counts anyway. A live cluster named by a review
 * that does not carry its UID keeps its reservation.
 */
function released(stored: unknown, uid: string | undefined, reservation: Reservation, now: Date): boolean {
  const m = (stored as { metadata?: { deletionTimestamp?: string | null; uid?: string } } | undefined)
    ?.metadata;
  if (stored === undefined || stored === null) return !reservationFresh(reservation, now);
  return Boolean(m?.deletionTimestamp) || (uid !== undefined && uid === m?.uid);
}

const CONTENDED: AdmissionDecision = {
  allowed: false,
  code: 409,
  reason: "Conflict",
  message:
    `too many TenantClusters of this team are being admitted at once: the quota ledger (ConfigMap ${LEDGER_NAME}) kept changing; try again`,
};

/**
 * A delete releases its cluster's reservation, when the stored cluster shows it really goes
 * ({@linkcode released}); anything else about a delete is allowed as it is.
 */
export function releaseOnDelete(
  review: AdmissionReviewRequest,
  ledger: QuotaLedger,
  stored: unknown,
  now: Date,
): AdmissionDecision | Staged<AdmissionDecision> {
  const r = review.request;
  const namespace = r.namespace ?? "";
  const name = r.name ?? "";
  const uid = (r.oldObject as { metadata?: { uid?: string } } | undefined)?.metadata?.uid;
  const reservation = ledger.reservations.get(name);
  if (!reservation || !released(stored, uid, reservation, now)) return { allowed: true };
  const write = {
    method: "PUT" as const,
    path: ledgerPath(namespace, LEDGER_NAME),
    body: quotaLedgerObject(namespace, ledger, name, undefined),
  };
  return staged({ allowed: true }, write, { allowed: true });
}

/**
 * An admission that holds once its reservation is written: the ledger with `name`'s load reserved at `now` and
 * the reservations the view shows spent dropped, created or replaced under the resourceVersion read; refused 429
 * when that would take the ledger past its bound.
 */
export function reserve(
  namespace: string,
  name: string,
  load: Load,
  ledger: QuotaLedger,
  view: { readonly clusters: ClusterIndex; readonly live: boolean },
  now: Date,
): AdmissionDecision | Staged<AdmissionDecision> {
  const { drop, seen } = spent(view.clusters, ledger, view.live, now);
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
