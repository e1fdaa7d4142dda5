/**
 * What a plan comes to, for a CI job: refused and unreadable documents, objects admitted but not Ready, objects
 * that only wait on what the plan was not given, failing syncs and whether the controllers reach a fixed point,
 * and the exit code that says which.
 *
 * @module
 */
import type { NamedRead } from "./metacontroller.ts";
import type { PlanResult } from "./plan.ts";
import { type Obj, objectId } from "./store.ts";

/**
 * Reasons of `Ready=False` that wait on the world outside the plan (infrastructure, a network that Cluster API
 * brings): a plan cannot bring them, so they are not a failure. Every other `Ready=False`, and phase `Failed`,
 * is one.
 */
export const WAITING_REASONS: ReadonlySet<string> = new Set(["Pending"]);

/** An admitted input object that is not Ready at the fixed point, and why. */
export interface NotReady {
  readonly id: string;
  readonly name: string;
  /** `Ready=False (Reason)` or `phase Failed`. */
  readonly why: string;
}

/** An object not Ready because it reads one of a kind the plan was given none of: what it waits on. */
export interface Waiting extends NotReady {
  /** The objects it (or what it reads) names and the plan does not hold, `Kind namespace/name`. */
  readonly on: readonly string[];
}

/** The plan's verdict. */
export interface Verdict {
  readonly refused: number;
  /** Documents that could not be read (kubectl could not either). */
  readonly unreadable: number;
  /** Not Ready for a reason the plan holds (a missing object of a kind it was given, a bad spec, ...). */
  readonly notReady: readonly NotReady[];
  /** Not Ready only because they read an object of a kind the plan was given none of. */
  readonly waiting: readonly Waiting[];
  readonly failingSyncs: number;
  readonly converged: boolean;
}

/** What fails a run: a refusal only, a refusal or anything not Ready (the default), or nothing. */
export type FailOn = "refused" | "not-ready" | "none";

/** The exit codes of `plan`. */
export const EXIT = { ok: 0, refused: 1, unreadable: 2, notReady: 3 } as const;

/** The Ready condition of an object, if it has one. */
function readyOf(o: Obj): { status?: string; reason?: string; message?: string } | undefined {
  return (Array.isArray(o.status?.conditions) ? o.status.conditions : [])
    .find((c: { type?: string }) => c.type === "Ready");
}

function whyNotReady(o: Obj): string | undefined {
  const ready = readyOf(o);
  if (o.status?.phase === "Failed") return `phase Failed${ready?.reason ? ` (${ready.reason})` : ""}`;
  if (ready?.status === "False" && !WAITING_REASONS.has(ready.reason ?? "")) {
    return `Ready=False (${ready.reason ?? "no reason"})`;
  }
  return undefined;
}

/** The kind of an object id (`group/Kind/namespace/name`). */
const kindOfId = (id: string) => id.split("/")[1] ?? "";

/** Whether a controller's message names an object (`namespace/name`, or its name as a word). */
function names(message: string, key: string): boolean {
  const name = key.slice(key.indexOf("/") + 1);
  return message.includes(key) ||
    new RegExp(`(^|[\\s:,"'])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[\\s,."'])`).test(message);
}

/** What the plan knows of the objects it judges Ready or not: each one's Ready message, by id. */
type Messages = ReadonlyMap<string, string>;

/**
 * What a not-Ready object waits on that the plan was not given: the objects its controller reads by name, finds
 * absent and names in the object's Ready message, of a kind of which neither the input nor `--live` holds any; and,
 * through the not-Ready objects it reads and names, what those wait on.
 */
function waitsOn(
  id: string,
  reads: ReadonlyMap<string, readonly NamedRead[]>,
  given: ReadonlySet<string>,
  messages: Messages,
  seen: Set<string> = new Set(),
): string[] {
  if (seen.has(id)) return [];
  seen.add(id);
  const message = messages.get(id) ?? "";
  return [
    ...new Set(
      (reads.get(id) ?? []).filter((r) => names(message, r.key)).flatMap((r) => {
        if (!r.found) return given.has(r.kind) ? [] : [r.name];
        return messages.has(r.id) ? waitsOn(r.id, reads, given, messages, seen) : [];
      }),
    ),
  ];
}

/**
 * The verdict of a plan: what was refused or unreadable, which admitted input objects are not Ready (phase
 * `Failed`, or `Ready=False` for a reason other than {@linkcode WAITING_REASONS}) and of those which only wait on
 * objects of a kind the plan was given none of (a Secret kept out of Git, a pool a file planned alone names),
 * failing syncs, fixed point.
 */
export function verdictOf(result: PlanResult): Verdict {
  const byId = new Map(result.objects.map((o) => [objectId(o), o]));
  const why = new Map(result.objects.flatMap((o) => {
    const w = whyNotReady(o);
    return w ? [[objectId(o), w] as const] : [];
  }));
  const given = new Set([...result.live.map((o) => o.kind), ...result.outcomes.map((o) => kindOfId(o.id))]);
  const messages = new Map([...why.keys()].map((id) => [id, readyOf(byId.get(id)!)?.message ?? ""]));
  const notReady: NotReady[] = [];
  const waiting: Waiting[] = [];
  for (const o of result.outcomes) {
    if (o.action === "refused" || o.action === "skipped" || o.action === "unreadable") continue;
    const w = byId.has(o.id) ? why.get(o.id) : undefined;
    if (!w) continue;
    const on = waitsOn(o.id, result.reads, given, messages);
    if (on.length) waiting.push({ id: o.id, name: o.name, why: w, on });
    else notReady.push({ id: o.id, name: o.name, why: w });
  }
  return {
    refused: result.outcomes.filter((o) => o.action === "refused").length,
    unreadable: result.outcomes.filter((o) => o.action === "unreadable").length,
    notReady,
    waiting,
    failingSyncs: result.failures.length,
    converged: result.converged,
  };
}

/**
 * The exit code of a verdict under `--fail-on`: 2 when a document cannot be read (whatever `--fail-on`), 1 when
 * something is refused (unless `none`), 3 when everything is admitted but something is not Ready, a sync fails or
 * there is no fixed point (`not-ready` only), else 0. Objects that only wait on what the plan was not given do not
 * fail it: they are listed.
 *
 * @example
 * ```ts
 * exitCode({ refused: 0, unreadable: 0, notReady: [], waiting: [], failingSyncs: 1, converged: true }, "not-ready"); // 3
 * exitCode({ refused: 0, unreadable: 0, notReady: [], waiting: [], failingSyncs: 1, converged: true }, "refused"); // 0
 * ```
 */
export function exitCode(v: Verdict, failOn: FailOn): number {
  if (v.unreadable) return EXIT.unreadable;
  if (failOn === "none") return EXIT.ok;
  if (v.refused) return EXIT.refused;
  if (failOn === "refused") return EXIT.ok;
  return v.notReady.length || v.failingSyncs || !v.converged ? EXIT.notReady : EXIT.ok;
}

/** The last line of a text plan: what it comes to, in words. */
export function resultLine(v: Verdict): string {
  const waiting = v.waiting.length ? ` (${v.waiting.length} waiting on objects the plan was not given)` : "";
  if (!v.refused && !v.unreadable && !v.notReady.length && !v.failingSyncs && v.converged) {
    return v.waiting.length
      ? `Result: everything is admitted and the controllers converge; ${v.waiting.length} object(s) wait on objects the plan was not given.`
      : "Result: everything is admitted, the controllers converge and every object is Ready.";
  }
  const parts = [
    ...(v.unreadable ? [`${v.unreadable} unreadable`] : []),
    `${v.refused} refused`,
    `${v.notReady.length} not Ready${waiting}`,
    `${v.failingSyncs} failing sync(s)`,
    ...(v.converged ? [] : ["no fixed point"]),
  ];
  return `Result: ${parts.join(", ")}.`;
}
