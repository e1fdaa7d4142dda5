/**
 * Admission webhooks as bindings: the AdmissionReview envelope around a pure decision (uid echoed, a dry run
 * writing nothing), its reads and staged writes through {@linkcode bind}, and the denials it signals.
 *
 * @module
 */
import type { Handler } from "hono";
import {
  type AdmissionDecision,
  admissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
} from "../contract/mod.ts";
import type { HookContext } from "../hook_context/mod.ts";
import type { Signal } from "../signals/mod.ts";
import { isStaged, type KubeWrite, type ReadPlan, type Reads, type Staged, staged } from "./decision.ts";
import { bind } from "./bind.ts";
import { capped } from "./errors.ts";
import type { AppEnv } from "./env.ts";

/**
 * A denial's signal: one count per failing rule (the causes' reasons, else the status reason), by webhook.
 *
 * @example
 * ```ts
 * denialSignals("tenantcluster", response); // [{ signal: "denial", webhook: "tenantcluster", rules: ["maxClusters"] }]
 * ```
 */
export function denialSignals(webhook: string, review: AdmissionReviewResponse): Signal[] {
  const r = review.response;
  if (r.allowed) return [];
  const causes = r.status?.details?.causes.map((c) => c.reason) ?? [];
  const rules = causes.length ? [...new Set(causes)] : [r.status?.reason ?? "Forbidden"];
  return [{ signal: "denial", webhook, rules }];
}

/**
 * Binds an admission decision function; the AdmissionReview envelope (uid echoed) is built here. With `plan`,
 * the objects it names are read from the API first and handed to `decide`, which stays pure. A decision that
 * holds only once something is written (a quota reservation) returns {@linkcode staged}: the adapter writes it,
 * and on a conflict reads and decides again. Reviews with the same `group` key are decided in groups and
 * committed in one write ({@linkcode createGroupCommit}).
 */
export function bindAdmission(
  webhook: string,
  decide: (
    review: AdmissionReviewRequest,
    context: HookContext,
    reads: Reads,
  ) => AdmissionDecision | Staged<AdmissionDecision>,
  plan?: (review: AdmissionReviewRequest, reads: Reads, context: HookContext) => ReadPlan,
  group?: {
    readonly key: (review: AdmissionReviewRequest) => string | undefined;
    readonly chain: (reads: Reads, write: KubeWrite) => Reads;
    /** The decision when the API is too slow to decide in time. */
    readonly unavailable: AdmissionDecision;
  },
): Handler<AppEnv> {
  return bind({
    request: AdmissionReviewRequest,
    response: AdmissionReviewResponse,
    ...(plan ? { plan } : {}),
    ...(group
      ? {
        group: {
          key: group.key,
          chain: group.chain,
          unavailable: (review: AdmissionReviewRequest) =>
            admissionResponse(review.request.uid, group.unavailable),
        },
      }
      : {}),
    run: (review, context, reads) => {
      const uid = review.request.uid;
      const d = decide(review, context, reads);
      // A dry run writes nothing: the webhook is sideEffects NoneOnDryRun.
      if (!isStaged(d)) return admissionResponse(uid, d);
      if (review.request.dryRun) return admissionResponse(uid, d.response);
      return staged(admissionResponse(uid, d.response), d.write, admissionResponse(uid, d.contended));
    },
    signals: (_, response) => denialSignals(webhook, response),
    refuses: (review) => (review as { response?: { allowed?: boolean } }).response?.allowed === false,
    // The review's names are the requester's: capped in the log like a hook's parent.
    subject: (r) => {
      const obj = (r.request.object ?? r.request.oldObject) as { kind?: unknown } | null | undefined;
      return {
        kind: capped(typeof obj?.kind === "string" ? obj.kind : r.request.kind.kind),
        namespace: r.request.namespace === undefined ? undefined : capped(r.request.namespace),
        name: capped(r.request.name ?? ""),
      };
    },
  });
}
