/**
 * What a plan comes to, for a CI job: refused objects, objects admitted but not Ready, failing syncs and whether
 * the controllers reach a fixed point, and the exit code that says which.
 *
 * @module
 */
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

/** The plan's verdict. */
export interface Verdict {
  readonly refused: number;
  readonly notReady: readonly NotReady[];
  readonly failingSyncs: number;
  readonly converged: boolean;
}

/** What fails a run: a refusal only, a refusal or anything not Ready (the default), or nothing. */
export type FailOn = "refused" | "not-ready" | "none";

/** The exit codes of `plan`. */
export const EXIT = { ok: 0, refused: 1, unreadable: 2, notReady: 3 } as const;

function whyNotReady(o: Obj): string | undefined {
  const ready = (Array.isArray(o.status?.conditions) ? o.status.conditions : [])
    .find((c: { type?: string }) => c.type === "Ready") as { status?: string; reason?: string } | undefined;
  if (o.status?.phase === "Failed") return `phase Failed${ready?.reason ? ` (${ready.reason})` : ""}`;
  if (ready?.status === "False" && !WAITING_REASONS.has(ready.reason ?? "")) {
    return `Ready=False (${ready.reason ?? "no reason"})`;
  }
  return undefined;
}

/**
 * The verdict of a plan: what was refused, which admitted input objects are not Ready (phase `Failed`, or
 * `Ready=False` for a reason other than {@linkcode WAITING_REASONS}), failing syncs, fixed point.
 */
export function verdictOf(result: PlanResult): Verdict {
  const byId = new Map(result.objects.map((o) => [objectId(o), o]));
  const notReady = result.outcomes.filter((o) => o.action !== "refused" && o.action !== "skipped")
    .flatMap((o) => {
      const object = byId.get(o.id);
      const why = object && whyNotReady(object);
      return why ? [{ id: o.id, name: o.name, why }] : [];
    });
  return {
    refused: result.outcomes.filter((o) => o.action === "refused").length,
    notReady,
    failingSyncs: result.failures.length,
    converged: result.converged,
  };
}

/**
 * The exit code of a verdict under `--fail-on`: 1 when something is refused (unless `none`), 3 when everything
 * is admitted but something is not Ready, a sync fails or there is no fixed point (`not-ready` only), else 0.
 *
 * @example
 * ```ts
 * exitCode({ refused: 0, notReady: [], failingSyncs: 1, converged: true }, "not-ready"); // 3
 * exitCode({ refused: 0, notReady: [], failingSyncs: 1, converged: true }, "refused"); // 0
 * ```
 */
export function exitCode(v: Verdict, failOn: FailOn): number {
  if (failOn === "none") return EXIT.ok;
  if (v.refused) return EXIT.refused;
  if (failOn === "refused") return EXIT.ok;
  return v.notReady.length || v.failingSyncs || !v.converged ? EXIT.notReady : EXIT.ok;
}

/** The last line of a text plan: what it comes to, in words. */
export function resultLine(v: Verdict): string {
  if (!v.refused && !v.notReady.length && !v.failingSyncs && v.converged) {
    return "Result: everything is admitted, the controllers converge and every object is Ready.";
  }
  const parts = [
    `${v.refused} refused`,
    `${v.notReady.length} not Ready`,
    `${v.failingSyncs} failing sync(s)`,
    ...(v.converged ? [] : ["no fixed point"]),
  ];
  return `Result: ${parts.join(", ")}.`;
}
