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
