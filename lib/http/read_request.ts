/**
 * Reading a request's body: its content type, its cost to the heap before it is parsed (`heap_budget.ts`), its
 * JSON and its envelope, with an answer that names the problem for each way it can fail, and never quotes it.
 *
 * @module
 */
import type { Context } from "hono";
import type { z } from "zod";
import { formatPath } from "../contract/mod.ts";
import type { AppEnv } from "./env.ts";
import { capped, jsonError } from "./errors.ts";
import { ForeignRefused, type HeapRefusal, MAX_JSON_DEPTH, parseForeignHeld } from "../foreign/mod.ts";
import { bodyTooSlow, readBodyWithin } from "./doors.ts";

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

/**
 * The request body as the schema reads it, with the heap it was charged to give back once answered; or the answer
 * to a body that is not one: 415 for another content type, 413 or 503 for a body whose parse the heap budget
 * cannot hold (never, or not now), 400 for JSON that does not parse (its offset only) or an envelope that fails
 * the schema (every field path).
 */
export async function readRequest(
  c: Context<AppEnv>,
  schema: z.ZodType,
): Promise<{ request: unknown; release: () => void } | Response> {
  if (!isJsonContentType(c.req.header("content-type"))) {
    return jsonError(
      c,
      415,
      `unsupported content type ${
        JSON.stringify(capped(c.req.header("content-type") ?? ""))
      }: expected application/json`,
    );
  }
  const received = await readBodyWithin(c);
  if (received === undefined) return bodyTooSlow(c);
  const bytes = new Uint8Array(received);
  let held: { value: unknown; release(): void };
  try {
    held = parseForeignHeld(bytes, c.get("runtime").heapBudget);
  } catch (err) {
    if (err instanceof ForeignRefused) return heapRefused(c, err.refusal, bytes.length);
    if (err instanceof SyntaxError) return jsonError(c, 400, err.message);
    throw err;
  }
  const { value: body, release } = held;
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    release();
    const problems = parsed.error.issues.slice(0, MAX_PROBLEMS).map((i) => ({
      path: formatPath(i.path),
      message: i.message,
    }));
    const first = problems[0]!;
    return jsonError(c, 400, `invalid request: ${first.path || "(body)"}: ${first.message}`, problems);
  }
  return { request: parsed.data, release };
}

/** Field problems listed in a 400 at most: an envelope can fail at every one of a million entries. */
const MAX_PROBLEMS = 100;

const MIB = 1024 * 1024;

/** A body the heap budget cannot hold: 413 when it never could, 503 (try again) when it cannot now. */
function heapRefused(c: Context<AppEnv>, refusal: HeapRefusal, length: number): Response {
  const mib = (n: number) => `${(n / MIB).toFixed(1)} MiB`;
  const need = Number.isFinite(refusal.need) ? mib(refusal.need) : `more than ${mib(refusal.limit)}`;
  if (refusal.tooDeep) {
    c.set("failure", `body of ${length} bytes refused: nested deeper than ${MAX_JSON_DEPTH} levels`);
    return jsonError(c, 413, `the body (${length} bytes) is nested deeper than ${MAX_JSON_DEPTH} levels`);
  }
  if (refusal.never) {
    c.set("failure", `body of ${length} bytes refused: its parse could need ${need} of heap`);
    return jsonError(
      c,
      413,
      `the body (${length} bytes) could need ${need} of heap to parse, more than this process may spend on ` +
        `requests (${mib(refusal.limit)})`,
    );
  }
  c.set(
    "failure",
    `body of ${length} bytes deferred: its parse could need ${need}, ${mib(refusal.available)} free`,
  );
  c.header("Retry-After", "2");
  return jsonError(
    c,
    503,
    `busy: the requests in flight hold the heap this body's parse could need; try again`,
  );
}
