/**
 * Why a tenant could not be read, in a fixed set of reasons with fixed words. A tenant controls its API server,
 * its certificates and the text of its errors, and a team can read what the reporter writes into status: so
 * status carries the class and, at most, an HTTP status code, never the tenant's words (a limited oracle on the
 * management network otherwise, when a kubeconfig points the reporter elsewhere).
 *
 * @module
 */
import { KubeApiError } from "../kube/mod.ts";

/**
 * The most the reporter reads of one tenant answer that is not a list page or a watch event (an apply's, a
 * Status): MetalLB's objects come back in a few kilobytes.
 */
export const TENANT_ANSWER_BYTES = 1024 * 1024;

/** The classes of a failed tenant request. */
export type TenantFailure =
  | "Unauthorized"
  | "Forbidden"
  | "Timeout"
  | "TLSError"
  | "Unreachable"
  | "TooLarge"
  | "Redirected";

/** A failed tenant request, classified: the reason, the HTTP status when there was an answer, fixed words. */
export interface Classified {
  readonly reason: TenantFailure;
  readonly status?: number;
  readonly message: string;
}

const TLS = /certificate|tls|ssl|handshake|unknownissuer|notvalidforname|invalid peer/i;

/**
 * Classifies an error of a request to a tenant. `forbidden` words a 403 for what was asked.
 *
 * @example
 * ```ts
 * classifyTenantError(new KubeApiError(0, "Unreachable", "invalid peer certificate: UnknownIssuer", "/api"), "...");
 * // { reason: "TLSError", message: "the TLS connection to the tenant's API server failed (...)" }
 * ```
 */
export function classifyTenantError(err: unknown, forbidden: string): Classified {
  if (!(err instanceof KubeApiError)) {
    return { reason: "Unreachable", message: "cannot connect to the tenant's API server" };
  }
  if (err.status === 401) {
    return {
      reason: "Unauthorized",
      status: 401,
      message: "the tenant refused the kubeconfig's credentials (HTTP 401)",
    };
  }
  if (err.status === 403) return { reason: "Forbidden", status: 403, message: `${forbidden} (HTTP 403)` };
  if (err.status === 0 && err.reason === "Timeout") {
    return { reason: "Timeout", message: "the tenant's API server did not answer in time" };
  }
  // Too costly: within the caps, but more than the heap budget can hold parsed (8 MiB of `{}`): too large as well.
  if (err.status === 0 && (err.reason === "TooLarge" || err.reason === "TooCostly")) {
    return {
      reason: "TooLarge",
      message: "the tenant's API server answered with more than the reporter reads of one answer",
    };
  }
  if (err.status === 0 && /redirect/i.test(err.message)) {
    return {
      reason: "Redirected",
      message: "the tenant's API server answered with a redirect, which the reporter does not follow",
    };
  }
  if (err.status === 0 && TLS.test(err.message)) {
    return {
      reason: "TLSError",
      message:
        "the TLS connection to the tenant's API server failed (its certificate is not trusted by the kubeconfig's CA, or it does not speak TLS)",
    };
  }
  if (err.status === 0) {
    return { reason: "Unreachable", message: "cannot connect to the tenant's API server" };
  }
  return {
    reason: "Unreachable",
    status: err.status,
    message: `the tenant's API server answered HTTP ${err.status}`,
  };
}
