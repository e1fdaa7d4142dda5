/**
 * Storing a generated point on the real API server: as the team admin where RBAC and the policies let them, else
 * as the cluster admin (what was stored before a bound, or while the webhook was down, or by the platform); a
 * size the API server refuses is shrunk, and an at-bounds object loses the fields the API server names as refused
 * (a pattern, a rule across fields, a policy), until it is stored. What was stored, as whom, and why not, is the
 * point's record in the tier's results.
 *
 * @module
 */
import { adminToken, cluster } from "../api/cluster.ts";
import type { Obj, Point } from "./generate.ts";
import { toJson } from "./shapes.ts";
import { TEAM_USERS } from "./writable.ts";

/** What became of one point. */
export interface Stored {
  readonly id: string;
  readonly family: string;
  readonly kind: string;
  readonly place: string;
  readonly shape: string;
  /** Objects stored, of those asked. */
  stored: number;
  readonly copies: number;
  /** Bytes of JSON sent for each stored object (the last). */
  bytes: number;
  /** `team admin`, `admin`, or none. */
  as?: string;
  /** Why the team admin could not store it, and why nobody could, in the API server's words (cut). */
  refusedToTeam?: string;
  refused?: string;
  /** Why the API server took a smaller size than asked (its words, cut), when it did. */
  shrunk?: string;
  /** At-bounds objects: the fields left out because the API server refused them at their bound. */
  pruned?: string[];
  ms: number;
}

const GROUP = "/apis/butler.butlerlabs.dev/v1alpha1";

/** The collection path a kind is created in, or the object path a Team is patched at. */
function pathOf(kind: string, namespace: string, team: string): { method: string; path: string } {
  switch (kind) {
    case "TenantCluster":
      return { method: "POST", path: `${GROUP}/namespaces/${namespace}/tenantclusters` };
    case "ProviderConfig":
      return { method: "POST", path: `${GROUP}/namespaces/${namespace}/providerconfigs` };
    case "Secret":
      return { method: "POST", path: `/api/v1/namespaces/${namespace}/secrets` };
    case "Team":
      return { method: "PATCH", path: `${GROUP}/teams/${team}` };
    default:
      throw new Error(`the tier stores no ${kind}`);
  }
}

/** The message of a Status, and its causes' fields. */
function statusOf(body: Record<string, unknown>): { message: string; fields: string[] } {
  const b = body as { message?: string; details?: { causes?: { field?: string }[] } };
  return {
    message: String(b.message ?? JSON.stringify(body).slice(0, 300)),
    fields: (b.details?.causes ?? []).flatMap((c) => c.field ? [c.field] : []),
  };
}

const TOO_LARGE = /too large|Too long|at most \d+ bytes|max depth|nesting|exceeds|limit is/i;
/** The API server ran out of its request's time: on a slow machine, a smaller object of the shape is stored. */
const TIMED_OUT = /Timeout|deadline exceeded|timed out/i;

/**
 * One request as the admin, or impersonating `as`, with the body's JSON text; the status and the parsed answer.
 * The request may take the API server's whole `--request-timeout` (60 s), not the 34 s a write gets by default.
 */
async function request(
  method: string,
  path: string,
  text: string,
  as: string | undefined,
  contentType: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers({
    authorization: `Bearer ${adminToken()}`,
    accept: "application/json",
    "content-type": contentType,
  });
  if (as) headers.set("impersonate-user", as);
  try {
    const res = await fetch(`${cluster().server}${path}?timeout=59s`, { method, headers, body: text });
    const answer = await res.text();
    let body: Record<string, unknown>;
    try {
      body = answer ? JSON.parse(answer) : {};
    } catch {
      body = { message: answer.slice(0, 300) };
    }
    return { status: res.status, body };
  } catch (err) {
    return { status: 0, body: { message: String(err) } };
  }
}

/** Deletes the member at a field path (`spec.a[0].b`); its parent when `parent`. */
function prune(obj: Obj, field: string, parent: boolean): boolean {
  const steps = field.replace(/^\./, "").split(/\.|\[(\d+)\]/).filter((s) => s !== undefined && s !== "");
  if (parent) steps.pop();
  const last = steps.pop();
  let at: Obj | undefined = obj;
  for (const s of steps) at = at?.[s];
  if (!at || last === undefined || !(last in at)) return false;
  if (Array.isArray(at)) at.splice(Number(last), 1);
  else delete at[last];
  return true;
}

/** The field a policy's message begins with (`spec.x.y: ...` or `spec.x may only ...`). */
function fieldOfMessage(message: string): string | undefined {
  return /(?:^|[\s:'"])((?:spec|data|metadata)(?:\.[A-Za-z][\w-]*|\[\d+\])+)/.exec(message)?.[1];
}

/** What the points of one kind learned: the fields the API server refuses at their bound, kept for the next. */
export type Prunes = Map<string, { field: string; parent: boolean }[]>;

/** How a point is stored: its namespace, its team, what runs first (a Team reset), what was learned. */
export interface StoreOptions {
  readonly namespace: string;
  readonly team: string;
  readonly before?: () => Promise<void>;
  readonly prunes?: Prunes;
  /** Copies stored at once. */
  readonly parallel?: number;
}

/**
 * Stores `copies` objects of a point (`<id>-<i>`, or `<id>`) in `namespace` (the Team: patched), shrinking and
 * pruning as the API server asks, as the team admin or else the admin.
 */
export async function storePoint(point: Point, options: StoreOptions): Promise<Stored> {
  const started = performance.now();
  const rec: Stored = {
    id: point.id,
    family: point.family,
    kind: point.kind,
    place: point.place,
    shape: point.shape,
    stored: 0,
    copies: point.copies,
    bytes: 0,
    ms: 0,
  };
  const { method, path } = pathOf(point.kind, options.namespace, options.team);
  const state = { bytes: point.bytes, asTeam: true };
  const learned: Prunes = options.prunes ?? new Map();
  const pruned: { field: string; parent: boolean }[] = point.family === "at-bounds"
    ? (learned.get(point.kind) ?? learned.set(point.kind, []).get(point.kind)!)
    : [];
  const one = async (name: string): Promise<boolean> => {
    for (let attempt = 0; attempt < 24; attempt++) {
      await options.before?.();
      const body = point.object(name, state.bytes);
      for (const p of pruned) prune(body, p.field, p.parent);
      const text = toJson(body);
      const r = await request(
        method,
        path,
        text,
        state.asTeam ? TEAM_USERS.admin : undefined,
        method === "PATCH" ? "application/merge-patch+json" : "application/json",
      );
      if (r.status === 200 || r.status === 201 || r.status === 409) {
        rec.bytes = new TextEncoder().encode(text).length;
        rec.as = state.asTeam ? "team admin" : "admin";
        return true;
      }
      const { message, fields } = statusOf(r.body);
      if ((TOO_LARGE.test(message) || TIMED_OUT.test(message)) && state.bytes > 1024) {
        rec.shrunk = message.slice(0, 200);
        state.bytes = Math.floor(state.bytes * (TIMED_OUT.test(message) ? 0.5 : 0.8));
        continue;
      }
      const named = fields.length ? fields : [fieldOfMessage(message)].filter((f): f is string => !!f);
      // A field refused at its bound is left out; refused again once left out (it is required), its parent.
      const fresh = named.filter((f) => !pruned.some((p) => p.field === f && p.parent));
      if (point.family === "at-bounds" && fresh.length) {
        for (const f of fresh) {
          const seen = pruned.find((p) => p.field === f);
          if (seen) seen.parent = true;
          else pruned.push({ field: f, parent: false });
        }
        continue;
      }
      if (state.asTeam && (r.status === 403 || /ValidatingAdmissionPolicy|Forbidden/.test(message))) {
        rec.refusedToTeam = message.slice(0, 300);
        state.asTeam = false;
        continue;
      }
      rec.refused = message.slice(0, 300);
      return false;
    }
    rec.refused ??= "no attempt left";
    return false;
  };
  const names = Array.from(
    { length: point.copies },
    (_, i) => point.copies === 1 ? point.id : `${point.id}-${i}`,
  );
  // The first alone (it learns the size and the writer), the rest in batches.
  if (await one(names[0]!)) rec.stored++;
  for (let i = 1; i < names.length && !rec.refused; i += options.parallel ?? 1) {
    const batch = names.slice(i, i + (options.parallel ?? 1));
    rec.stored += (await Promise.all(batch.map(one))).filter(Boolean).length;
  }
  if (pruned.length) rec.pruned = pruned.map((p) => p.parent ? `${p.field} (its parent)` : p.field);
  rec.ms = Math.round(performance.now() - started);
  console.log(
    `stored ${rec.id}: ${rec.stored}/${rec.copies} of ${rec.bytes} bytes as ${
      rec.as ?? "nobody"
    } in ${rec.ms} ms` +
      (rec.refused ? ` (refused: ${rec.refused.slice(0, 120)})` : ""),
  );
  return rec;
}
