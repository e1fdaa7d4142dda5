import { z } from "zod";
import { encodeBase64 } from "../encoding/base64.ts";

const GroupVersionKind = z.looseObject({ group: z.string(), version: z.string(), kind: z.string() });

/**
 * An object admitted is stored within this many seconds, or never. The API server stores it once every validating
 * webhook has answered; they are called in parallel, and none may take longer than 30 s (the API's maximum
 * `timeoutSeconds`), so 45 s covers the slowest admission chain with a margin. What admission records of an
 * admitted object (a quota reservation, a pool's space) counts this long without the stored object.
 */
export const ADMITTED_STORED_WITHIN_SECONDS = 45;

/** `admission.k8s.io/v1` AdmissionReview request envelope. */
export const AdmissionReviewRequest = z.looseObject({
  apiVersion: z.literal("admission.k8s.io/v1"),
  kind: z.literal("AdmissionReview"),
  request: z.looseObject({
    uid: z.string().min(1),
    kind: GroupVersionKind,
    resource: z.looseObject({ group: z.string(), version: z.string(), resource: z.string() }),
    subResource: z.string().optional(),
    name: z.string().optional(),
    namespace: z.string().optional(),
    operation: z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]),
    userInfo: z.looseObject({
      username: z.string().optional(),
      uid: z.string().optional(),
      groups: z.array(z.string()).optional(),
    }),
    object: z.record(z.string(), z.unknown()).nullable().optional(),
    oldObject: z.record(z.string(), z.unknown()).nullable().optional(),
    dryRun: z.boolean().optional(),
  }),
});

/** An AdmissionReview request. */
export type AdmissionReviewRequest = z.infer<typeof AdmissionReviewRequest>;

/** One RFC 6902 JSON Patch operation. */
export type JsonPatchOp =
  | { op: "add" | "replace" | "test"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "move" | "copy"; from: string; path: string };

/** `admission.k8s.io/v1` AdmissionReview response envelope. */
export const AdmissionReviewResponse = z.strictObject({
  apiVersion: z.literal("admission.k8s.io/v1"),
  kind: z.literal("AdmissionReview"),
  response: z.strictObject({
    uid: z.string().min(1),
    allowed: z.boolean(),
    status: z.strictObject({
      code: z.number().int().optional(),
      message: z.string().optional(),
      reason: z.string().optional(),
      details: z.strictObject({
        causes: z.array(
          z.strictObject({ reason: z.string(), message: z.string(), field: z.string().optional() }),
        ),
      }).optional(),
    }).optional(),
    patch: z.string().optional(),
    patchType: z.literal("JSONPatch").optional(),
    warnings: z.array(z.string()).optional(),
  }),
});

/** An AdmissionReview response. */
export type AdmissionReviewResponse = z.infer<typeof AdmissionReviewResponse>;

/**
 * One reason a request was refused (`metav1.StatusCause`): `reason` names the rule that failed (a limit's field
 * name such as `maxClusters`), `field` the path it is about. The API server hands causes to the client with the
 * message; the service counts denials by them.
 */
export interface StatusCause {
  readonly reason: string;
  readonly message: string;
  readonly field?: string;
}

/** What an admission decision function returns; the envelope is built by {@linkcode admissionResponse}. */
export type AdmissionDecision =
  | { allowed: true; patch?: JsonPatchOp[]; warnings?: string[] }
  | {
    allowed: false;
    message: string;
    code?: number;
    reason?: string;
    causes?: readonly StatusCause[];
    warnings?: string[];
  };

/**
 * The refusal of a DELETE while other objects still use the object: 409 Conflict, the message also as the
 * `deletionInUse` cause (the ProviderConfig and NetworkPool webhooks).
 */
export function deletionInUse(message: string): AdmissionDecision {
  return {
    allowed: false,
    code: 409,
    reason: "Conflict",
    message,
    causes: [{ reason: "deletionInUse", message }],
  };
}

/**
 * The most causes a refusal carries, and the longest message (characters): a review the API server did not send
 * can name thousands of fields, and what is refused is counted, not copied, past these.
 */
export const REFUSAL_BOUNDS = { causes: 16, message: 4096 } as const;

/** Cuts a refusal message to {@linkcode REFUSAL_BOUNDS}, marking the cut. */
function boundedMessage(message: string): string {
  const max = REFUSAL_BOUNDS.message;
  return message.length <= max ? message : `${message.slice(0, max - 3)}...`;
}

/**
 * Builds the AdmissionReview response for a decision, echoing the request uid. A denial is still an HTTP 200
 * with `allowed: false`; a patch is base64 JSONPatch. A refusal keeps at most {@linkcode REFUSAL_BOUNDS}.causes
 * causes and a message cut at {@linkcode REFUSAL_BOUNDS}.message characters.
 *
 * @example
 * ```ts
 * admissionResponse("uid-1", { allowed: false, message: "nope" });
 * // { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview",
 * //   response: { uid: "uid-1", allowed: false, status: { code: 403, message: "nope", reason: "Forbidden" } } }
 * ```
 */
export function admissionResponse(uid: string, decision: AdmissionDecision): AdmissionReviewResponse {
  const warnings = decision.warnings?.length ? { warnings: decision.warnings } : {};
  if (!decision.allowed) {
    return {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: {
        uid,
        allowed: false,
        status: {
          code: decision.code ?? 403,
          message: boundedMessage(decision.message),
          reason: decision.reason ?? "Forbidden",
          ...(decision.causes?.length
            ? { details: { causes: decision.causes.slice(0, REFUSAL_BOUNDS.causes).map((c) => ({ ...c })) } }
            : {}),
        },
        ...warnings,
      },
    };
  }
  const patch = decision.patch?.length
    ? {
      patch: encodeBase64(new TextEncoder().encode(JSON.stringify(decision.patch))),
      patchType: "JSONPatch" as const,
    }
    : {};
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { uid, allowed: true, ...patch, ...warnings },
  };
}
