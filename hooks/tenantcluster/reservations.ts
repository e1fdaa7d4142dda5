/**
 * The quota ledger (docs/design.md#race-free-quotas): a ConfigMap `butler-quota-ledger` in each team namespace, one
 * key per TenantCluster name admitted with a quota in force, its value the cluster's footprint and when it was
 * reserved, as one line of JSON so `kubectl get configmap butler-quota-ledger -o yaml` reads plainly. Admission
 * writes it with the resourceVersion it read as precondition, which serialises every decision of one team.
 *
 * Admission reads TenantClusters from a watch cache, which may lag. A reservation is therefore dropped only on
 * the evidence of a view that every later decision is guaranteed to share: when the stored cluster is seen
 * (settled, or past its grace), the ledger's {@linkcode SEEN_ANNOTATION} is raised to that object's
 * resourceVersion, and a decision reads the clusters at least at that version (else from the API); when the
 * cluster is not stored, only a live read may say so. Until then the reservation keeps counting.
 *
 * @module
 */
import { z } from "zod";
import { ADMITTED_STORED_WITHIN_SECONDS } from "../../lib/contract/mod.ts";
import { isRevision } from "../../lib/kube/revision.ts";
import { parseTime } from "../../lib/time/mod.ts";

/** The ledger's name in every team namespace. */
export const LEDGER_NAME = "butler-quota-ledger";

/**
 * A reservation lives this long without its TenantCluster (or beyond the stored cluster's own footprint): an
 * admitted create is stored by then ({@linkcode ADMITTED_STORED_WITHIN_SECONDS}). A create that failed after
 * admission, or a forged review that was never a create, stops counting after 45 s.
 */
export const RESERVATION_GRACE_SECONDS = ADMITTED_STORED_WITHIN_SECONDS;

/**
 * A reservation its stored cluster covers is dropped once it is this old. Dropping it raises the ledger's
 * clusters-seen version, which every other replica's cache must then have reached (or read the API): by the time a
 * reservation is two seconds old, every cache has long seen its cluster, so dropping costs no one a wait; and a
 * ledger under a sustained burst holds two seconds of creates, not more.
 */
export const SETTLE_AFTER_SECONDS = 2;

/** Whether a reservation made at `at` is at least `seconds` old at `now`. */
export function reservedBefore(r: Reservation, now: Date, seconds: number): boolean {
  let at = RESERVED_AT.get(r);
  if (at === undefined) RESERVED_AT.set(r, at = parseTime(r.at)!.getTime());
  return now.getTime() - at >= seconds * 1000;
}

/** What one TenantCluster takes from its team's quotas. */
export interface Footprint {
  /** Environment label, when set. */
  readonly env?: string;
  /** Owner (the owner annotation, else creator-email), lower-cased. */
  readonly owner?: string;
  /** `namespace/name` of its ProviderConfig. */
  readonly provider?: string;
  readonly nodes: number;
  /** Canonical quantities (totals over the workers). */
  readonly cpu: string;
  readonly memory: string;
  readonly storage: string;
}

/**
 * The most the ledger's data may hold, in bytes (keys and values). A ConfigMap holds at most 1 MiB; reservations
 * leave the ledger as soon as their clusters are seen stored, so this bounds what is in flight at once (about
 * 1,000 reservations with names of 60 characters), and a burst past it is refused with a 429 that names it, never
 * a write the API server fails.
 */
export const LEDGER_MAX_BYTES = 256 * 1024;

/** What one entry adds to the ledger's size: its key and value, as JSON quotes them. */
function entryBytes(key: string, text: string): number {
  // Reservation values are ASCII JSON (names are DNS names): a character is a byte; each quote is escaped.
  return key.length + Math.ceil(text.length * 1.2) + 6;
}

/** The size {@linkcode LEDGER_MAX_BYTES} bounds, of a ledger {@linkcode quotaLedgerObject} built. */
export function ledgerDataBytes(body: object): number {
  return BYTES.get(body) ?? 0;
}

const BYTES = new WeakMap<object, number>();

/** A footprint and when admission reserved it. */
export interface Reservation extends Footprint {
  readonly at: string;
}

/**
 * The TenantCluster resourceVersion every decision's view must have reached: the newest stored cluster whose
 * reservation a write dropped because the view showed it.
 */
export const SEEN_ANNOTATION = "butler.butlerlabs.dev/clusters-seen";

/** The ledger as read: its reservations by TenantCluster name, its resourceVersion, and unreadable entries. */
export interface QuotaLedger {
  /** {@linkcode SEEN_ANNOTATION}, when a write has set it. */
  readonly seen?: string;
  readonly reservations: ReadonlyMap<string, Reservation>;
  /** Absent when the ConfigMap does not exist yet (the first write creates it). */
  readonly resourceVersion?: string;
  /** Keys that did not parse: dropped on the next write (usage still counts every TenantCluster that exists). */
  readonly corrupt: readonly string[];
}

/** A ledger entry as read back: the ledger comes from the API and anyone with the right could have edited it. */
const ReservationEntry = z.object({
  env: z.string().optional(),
  owner: z.string().optional(),
  provider: z.string().optional(),
  nodes: z.number().int(),
  cpu: z.string(),
  memory: z.string(),
  storage: z.string(),
  at: z.string().refine((t) => parseTime(t) !== undefined, "not an RFC 3339 time"),
});

/**
 * Reservations by their text: every version of a ledger repeats most entries of the one before, and each new
 * version (a write, its watch event) would otherwise parse and validate all of them again. Bounded; cleared when
 * full. Parsed values are never changed, so sharing one is safe.
 */
const PARSED = new Map<string, Reservation | null>();
const PARSED_MAX = 20_000;

function parseReservation(text: string): Reservation | undefined {
  const known = PARSED.get(text);
  if (known !== undefined) return known ?? undefined;
  const r = parseReservationText(text);
  if (PARSED.size >= PARSED_MAX) PARSED.clear();
  PARSED.set(text, r ?? null);
  return r;
}

function parseReservationText(text: string): Reservation | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const r = ReservationEntry.safeParse(json);
  return r.success ? r.data as Reservation : undefined;
}

/** Each reservation's text as stored, so that writing the ledger again does not serialise it again. */
const TEXTS = new WeakMap<Reservation, string>();

/**
 * Ledgers already read, by the object read: a group of reviews decides on the same ledger, and each one on the
 * ledger the one before it wrote ({@linkcode quotaLedgerObject} registers what it builds), so a review costs no
 * parse of the whole ledger.
 */
const READ = new WeakMap<object, QuotaLedger>();

/**
 * Reads the ledger ConfigMap (or its absence). A ledger someone damaged loses only its unreadable entries: usage
 * is always the union of reservations and the TenantClusters that exist, so it is never taken as empty.
 */
export function readQuotaLedger(configMap: unknown): QuotaLedger {
  const known = typeof configMap === "object" && configMap !== null ? READ.get(configMap) : undefined;
  if (known) return known;
  const cm = configMap as
    | {
      metadata?: { resourceVersion?: string; annotations?: Record<string, unknown> };
      data?: Record<string, unknown>;
    }
    | undefined;
  const reservations = new Map<string, Reservation>();
  const corrupt: string[] = [];
  for (const [name, value] of Object.entries(cm?.data ?? {})) {
    const r = typeof value === "string" ? parseReservation(value) : undefined;
    if (r) {
      reservations.set(name, r);
      TEXTS.set(r, value as string);
    } else corrupt.push(name);
  }
  const rv = cm?.metadata?.resourceVersion;
  const seen = cm?.metadata?.annotations?.[SEEN_ANNOTATION];
  const ledger = {
    reservations,
    ...(rv ? { resourceVersion: rv } : {}),
    ...(typeof seen === "string" && isRevision(seen) ? { seen } : {}),
    corrupt,
  };
  if (cm) READ.set(cm, ledger);
  return ledger;
}

/** Whether a reservation made at `at` still holds at `now`. */
export function reservationFresh(r: Reservation, now: Date): boolean {
  return !reservedBefore(r, now, RESERVATION_GRACE_SECONDS);
}

/** When each reservation was made, in epoch milliseconds, parsed once. */
const RESERVED_AT = new WeakMap<Reservation, number>();

/**
 * The ledger ConfigMap after setting (or, with `undefined`, releasing) `name`'s reservation: the reservations
 * `drop` names are dropped (so the ledger holds what is in flight, not the team), corrupt entries too, keys
 * sorted, `seen` recorded as {@linkcode SEEN_ANNOTATION}, and the resourceVersion read kept as precondition.
 */
export function quotaLedgerObject(
  namespace: string,
  ledger: QuotaLedger,
  name: string,
  reservation: Reservation | undefined,
  drop: (name: string, r: Reservation) => boolean = () => false,
  seen: string | undefined = ledger.seen,
): Record<string, unknown> {
  const entries = new Map(ledger.reservations);
  if (reservation) entries.set(name, reservation);
  else entries.delete(name);
  for (const [key, r] of entries) if (key !== name && drop(key, r)) entries.delete(key);
  let bytes = 0;
  for (const [key, r] of entries) {
    let text = TEXTS.get(r);
    if (text === undefined) TEXTS.set(r, text = JSON.stringify(r));
    bytes += entryBytes(key, text);
  }
  // Built when the body is sent (JSON.stringify reads the getter): a group's reviews each build a ledger, and
  // only the last one is written.
  let data: Record<string, string> | undefined;
  const sorted = () =>
    data ??= Object.fromEntries(
      [...entries.keys()].sort().map((key) => [key, TEXTS.get(entries.get(key)!)!]),
    );
  const body = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: LEDGER_NAME,
      namespace,
      // In-flight admission state (entries live 45 s): never worth restoring, and its policy refuses a restore.
      labels: { "app.kubernetes.io/managed-by": "butler-admission", "velero.io/exclude-from-backup": "true" },
      annotations: {
        "butler.butlerlabs.dev/description":
          "Quota reservations written by the TenantCluster admission webhook; do not edit.",
        ...(seen ? { [SEEN_ANNOTATION]: seen } : {}),
      },
      ...(ledger.resourceVersion ? { resourceVersion: ledger.resourceVersion } : {}),
    },
    get data() {
      return sorted();
    },
  };
  BYTES.set(body, bytes);
  READ.set(body, {
    reservations: entries,
    ...(ledger.resourceVersion ? { resourceVersion: ledger.resourceVersion } : {}),
    ...(seen ? { seen } : {}),
    corrupt: [],
  });
  return body;
}
