import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/** One problem with a request, located by field path. */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

/**
 * The JSON error body every non-200 answer carries: `{ "error": "...", "problems": [...] }`. Never a stack.
 */
export function jsonError(
  c: Context,
  status: ContentfulStatusCode,
  error: string,
  problems?: readonly Problem[],
): Response {
  return c.json(problems?.length ? { error, problems } : { error }, status);
}

/** Longest kind, namespace and name a log line carries (Kubernetes allows at most 253 for a name). */
const LOG_FIELD_MAX = 253;

/**
 * Caps a logged value: a hostile name must not make a log line megabytes long.
 *
 * @example
 * ```ts
 * capped("x".repeat(300)).length; // 253 + "…(+47)"
 * ```
 */
export function capped(value: string): string {
  return value.length <= LOG_FIELD_MAX
    ? value
    : `${value.slice(0, LOG_FIELD_MAX)}…(+${value.length - LOG_FIELD_MAX})`;
}
