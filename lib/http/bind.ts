import type { Context, Handler } from "hono";
import type { z } from "zod";
import {
  type AdmissionDecision,
  admissionResponse,
  AdmissionReviewRequest,
  AdmissionReviewResponse,
  CompositeRequest,
  CompositeResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorRequest,
  DecoratorResponse,
  formatPath,
  type KubeObject,
} from "../contract/mod.ts";
import type { HookContext } from "../hook/mod.ts";
import { parseTime } from "../time/mod.ts";
import { jsonError } from "./errors.ts";
import type { AppEnv, Subject } from "./env.ts";

/** The header that replaces the clock for one request when the service runs with `CLOCK_OVERRIDE=true`. */
export const NOW_HEADER = "X-Butler-Now";

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function subjectOf(obj: KubeObject): Subject {
  return { kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

/** A generic binding: a request schema, a response schema, a pure function between them. */
export interface Binding<Req extends z.ZodType, Res extends z.ZodType> {
  readonly request: Req;
  readonly response: Res;
  readonly run: (request: z.output<Req>, context: HookContext) => z.input<Res>;
  readonly subject: (request: z.output<Req>) => Subject | undefined;
}

/**
 * Turns a pure function into a Hono handler. The handler checks the content type (415), parses JSON (400),
 * validates the envelope (400 naming every failing field path), reads the clock once, runs the function, and
 * checks the answer against the strict response schema (a violation is our bug: 500, never sent).
 */
export function bind<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
): Handler<AppEnv> {
  return async (c: Context<AppEnv>) => {
    if (!isJsonContentType(c.req.header("content-type"))) {
      return jsonError(
        c,
        415,
        `unsupported content type ${
          JSON.stringify(c.req.header("content-type") ?? "")
        }: expected application/json`,
      );
    }
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return jsonError(c, 400, `malformed JSON: ${(err as Error).message}`);
    }
    const parsed = binding.request.safeParse(body);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => ({ path: formatPath(i.path), message: i.message }));
      const first = problems[0]!;
      return jsonError(c, 400, `invalid request: ${first.path || "(body)"}: ${first.message}`, problems);
    }
    const request = parsed.data as z.output<Req>;
    const subject = binding.subject(request);
    if (subject) c.set("subject", subject);

    const runtime = c.get("runtime");
    let now = runtime.clock();
    if (runtime.clockOverride) {
      const header = c.req.header(NOW_HEADER);
      if (header !== undefined) {
        const parsedNow = parseTime(header);
        if (!parsedNow) {
          return jsonError(
            c,
            400,
            `invalid ${NOW_HEADER} header: expected an RFC 3339 time, got ${JSON.stringify(header)}`,
          );
        }
        now = parsedNow;
      }
    }

    const result = binding.run(request, { now, config: runtime.hookConfig });
    const checked = binding.response.safeParse(result);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      c.set(
        "failure",
        `hook produced an invalid response at ${formatPath(issue?.path ?? [])}: ${issue?.message}`,
      );
      return jsonError(c, 500, "internal error: the hook produced an invalid response");
    }
    return c.json(checked.data as Record<string, unknown>, 200);
  };
}

/** Binds a CompositeController sync or finalize hook. */
export function bindComposite(
  run: (request: CompositeRequest, context: HookContext) => z.input<typeof CompositeResponse>,
): Handler<AppEnv> {
  return bind({
    request: CompositeRequest,
    response: CompositeResponse,
    run,
    subject: (r) => subjectOf(r.parent),
  });
}

/** Binds a DecoratorController sync or finalize hook. */
export function bindDecorator(
  run: (request: DecoratorRequest, context: HookContext) => z.input<typeof DecoratorResponse>,
): Handler<AppEnv> {
  return bind({
    request: DecoratorRequest,
    response: DecoratorResponse,
    run,
    subject: (r) => subjectOf(r.object),
  });
}

/** Binds a customize hook (both controller kinds). */
export function bindCustomize(
  run: (request: CustomizeRequest, context: HookContext) => z.input<typeof CustomizeResponse>,
): Handler<AppEnv> {
  return bind({
    request: CustomizeRequest,
    response: CustomizeResponse,
    run,
    subject: (r) => subjectOf(r.parent),
  });
}

/** Binds an admission decision function; the AdmissionReview envelope (uid echoed) is built here. */
export function bindAdmission(
  decide: (review: AdmissionReviewRequest, context: HookContext) => AdmissionDecision,
): Handler<AppEnv> {
  return bind({
    request: AdmissionReviewRequest,
    response: AdmissionReviewResponse,
    run: (review, context) => admissionResponse(review.request.uid, decide(review, context)),
    subject: (r) => {
      const obj = (r.request.object ?? r.request.oldObject) as { kind?: unknown } | null | undefined;
      return {
        kind: typeof obj?.kind === "string" ? obj.kind : r.request.kind.kind,
        namespace: r.request.namespace,
        name: r.request.name ?? "",
      };
    },
  });
}
