import type { Context, Handler } from "hono";
import type { z } from "zod";
import {
  CompositeRequest,
  CompositeResponse,
  CustomizeRequest,
  CustomizeResponse,
  DecoratorRequest,
  DecoratorResponse,
  formatPath,
  type KubeObject,
  UndeliveredGroupsError,
} from "../contract/mod.ts";
import type { HookContext } from "../hook_context/mod.ts";
import { KubeApiError, type KubeClient } from "../kube/mod.ts";
import { parseTime } from "../time/mod.ts";
import type { Signal } from "../signals/mod.ts";
import { capped, jsonError } from "./errors.ts";
import { readRequest } from "./read_request.ts";
import { answerPoisoned } from "./bind_poison.ts";
import type { Binding } from "./binding.ts";
import { poisonedComposite, poisonedDecorator } from "../isolation/mod.ts";
import {
  DECISION_BUDGET_MS,
  isStaged,
  MAX_DECISION_ATTEMPTS,
  readAll,
  type ReadPlan,
  type Reads,
  type Staged,
  unauthenticatedReader,
} from "./decision.ts";
import { createGroupCommit, type MemberResult } from "./group_commit.ts";
import type { AppEnv, Subject } from "./env.ts";

/** The header that replaces the clock for one request when the service runs with `CLOCK_OVERRIDE=true`. */
export const NOW_HEADER = "X-Butler-Now";

function subjectOf(obj: KubeObject): Subject {
  const ns = obj.metadata.namespace;
  return {
    kind: capped(obj.kind),
    namespace: ns === undefined ? ns : capped(ns),
    name: capped(obj.metadata.name),
  };
}

export type { Binding };

const NO_API = "admission needs the Kubernetes API, and none is configured";

/** A staged decision where no API is configured. */
class NoApi extends Error {}

/**
 * Turns a pure function into a Hono handler. The handler checks the content type (415), parses JSON (400),
 * validates the envelope (400 naming every failing field path), reads the clock once, runs the function, and
 * checks the answer against the strict response schema (a violation is our bug: 500, never sent).
 */
export function bind<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
): Handler<AppEnv> {
  const groups = new WeakMap<KubeClient, ReturnType<typeof createGroupCommit<z.output<Req>, z.input<Res>>>>();
  const groupOf = (kube: KubeClient) => {
    let submit = groups.get(kube);
    if (!submit) {
      groups.set(
        kube,
        submit = createGroupCommit({
          kube,
          run: binding.run,
          chain: binding.group!.chain,
          unavailable: binding.group!.unavailable,
          ...(binding.refuses ? { refuses: binding.refuses } : {}),
        }),
      );
    }
    return submit;
  };
  return async (c: Context<AppEnv>) => {
    const stopped = binding.poisoning
      ? await answerPoisoned(binding, c, { clockOf, answer, hookName })
      : undefined;
    if (stopped) return stopped;
    const read = await readRequest(c, binding.request);
    if (read instanceof Response) return read;
    try {
      return await handle(binding, c, read.request as z.output<Req>, groupOf);
    } finally {
      read.release();
    }
  };
}

/** A request read and checked: the decision it asks for (reads, writes, a group), and the answer. */
async function handle<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  c: Context<AppEnv>,
  request: z.output<Req>,
  groupOf: (kube: KubeClient) => ReturnType<typeof createGroupCommit<z.output<Req>, z.input<Res>>>,
): Promise<Response> {
  const subject = binding.subject(request);
  if (subject) c.set("subject", subject);
  const runtime = c.get("runtime");
  const now = clockOf(c);
  if (now instanceof Response) return now;

  const context = { now, config: runtime.hookConfig };
  const plan = (reads: Reads) => binding.plan?.(request, reads, context) ?? {};
  const kube = runtime.kube;
  if (Object.keys(plan({})).length && !kube) {
    return jsonError(c, 503, NO_API);
  }
  // Unauthenticated callers write nothing: a decision that holds once written holds now, unwritten. Nor do they
  // make the service list anything from the API.
  if (runtime.admissionWrites === false) {
    const unwritten = { ...binding, run: answerUnwritten(binding.run) };
    const reader = kube && unauthenticatedReader(kube);
    const outcome = await decideAlone(unwritten, request, plan, context, reader, performance.now());
    return settle(binding, c, request, outcome, context);
  }
  const key = kube && binding.group?.key(request);
  const outcome = key !== undefined && kube
    ? await groupOf(kube)(key, { request, plan, context, started: performance.now() })
    : await decideAlone(binding, request, plan, context, kube, performance.now());
  return settle(binding, c, request, outcome, context);
}

/** A decision function whose staged writes are dropped: the answer it would give once written, now. */
function answerUnwritten<Req, Res>(
  run: (request: Req, context: HookContext, reads: Reads) => Res | Staged<Res>,
): (request: Req, context: HookContext, reads: Reads) => Res {
  return (request, context, reads) => {
    const d = run(request, context, reads);
    return isStaged(d) ? d.response : d;
  };
}

/** The answer to a decision's outcome: an error (400, 503, or thrown), or the checked response. */
function settle<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  c: Context<AppEnv>,
  request: z.output<Req>,
  outcome: MemberResult<z.input<Res>>,
  context: HookContext,
): Response {
  if ("error" in outcome) {
    const err = outcome.error;
    if (err instanceof UndeliveredGroupsError) return jsonError(c, 400, err.message, err.problems);
    if (err instanceof NoApi) return jsonError(c, 503, NO_API);
    if (!(err instanceof KubeApiError)) throw err;
    // A read or write that fails is an error, not a denial: the API server then applies the failurePolicy.
    c.set("failure", err.message);
    return jsonError(c, 503, `cannot reach the API (${err.status} ${err.reason}); try again`);
  }
  return answer(binding, c, request, outcome.response, context);
}

/** The clock, read once: the service's, or the {@linkcode NOW_HEADER} where `CLOCK_OVERRIDE` allows it. */
function clockOf(c: Context<AppEnv>): Date | Response {
  const runtime = c.get("runtime");
  const header = runtime.clockOverride ? c.req.header(NOW_HEADER) : undefined;
  if (header === undefined) return runtime.clock();
  return parseTime(header) ?? jsonError(
    c,
    400,
    `invalid ${NOW_HEADER} header: expected an RFC 3339 time, got ${JSON.stringify(capped(header))}`,
  );
}

/**
 * A decision outside any group: reads, runs the function and writes what it staged; on a conflict, reads and
 * decides again, within {@linkcode DECISION_BUDGET_MS} and {@linkcode MAX_DECISION_ATTEMPTS}.
 */
async function decideAlone<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  request: z.output<Req>,
  plan: (reads: Reads) => ReadPlan,
  context: HookContext,
  kube: KubeClient | undefined,
  started: number,
): Promise<MemberResult<z.input<Res>>> {
  for (let attempt = 1;; attempt++) {
    let outcome: z.input<Res> | Staged<z.input<Res>> | undefined;
    try {
      const planned = Object.keys(plan({})).length > 0;
      const reads = planned ? await readAll(plan, kube!, attempt > 1 ? "fresh" : "cached") : {};
      outcome = binding.run(request, context, reads);
      if (planned && !isStaged(outcome) && binding.refuses?.(outcome)) {
        outcome = binding.run(request, context, await readAll(plan, kube!, "confirm", reads));
      }
      if (!isStaged(outcome)) return { response: outcome };
      if (!kube) throw new NoApi();
      await kube.write(outcome.write.method, outcome.write.path, outcome.write.body);
      return { response: outcome.response };
    } catch (error) {
      const contended = error instanceof KubeApiError && error.status === 409 && outcome !== undefined &&
        isStaged(outcome);
      if (!contended) return { error };
      if (attempt >= MAX_DECISION_ATTEMPTS || performance.now() - started >= DECISION_BUDGET_MS) {
        return { response: (outcome as Staged<z.input<Res>>).contended };
      }
    }
  }
}

/** Checks the answer against the response schema, and notes what it signals. */
function answer<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  c: Context<AppEnv>,
  request: z.output<Req>,
  result: z.input<Res>,
  context: HookContext,
): Response {
  const checked = binding.response.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    c.set(
      "failure",
      `hook produced an invalid response at ${formatPath(issue?.path ?? [])}: ${issue?.message}`,
    );
    return jsonError(c, 500, "internal error: the hook produced an invalid response");
  }
  if (binding.signals) {
    try {
      c.set(
        "signals",
        binding.signals(request, checked.data as z.output<Res>, context),
      );
    } catch (err) {
      // A signal is a side note: the answer stands, and the log says what went wrong.
      c.set("failure", `signals: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return c.json(checked.data as Record<string, unknown>, 200);
}

/** `/hooks/team/sync` -> `team sync`. */
function hookName(path: string): string {
  return path.split("/").filter(Boolean).slice(1).join(" ");
}

/** Binds a CompositeController sync or finalize hook, with what its answers signal. */
export function bindComposite(
  run: (request: CompositeRequest, context: HookContext) => z.input<typeof CompositeResponse>,
  signals?: (
    request: CompositeRequest,
    response: CompositeResponse,
    context: HookContext,
  ) => readonly Signal[],
): Handler<AppEnv> {
  return bind({
    request: CompositeRequest,
    response: CompositeResponse,
    run,
    subject: (r) => subjectOf(r.parent),
    ...(signals ? { signals } : {}),
    poisoning: { object: (r) => r.parent, answer: poisonedComposite },
  });
}

/** Binds a DecoratorController sync or finalize hook, with what its answers signal. */
export function bindDecorator(
  run: (request: DecoratorRequest, context: HookContext) => z.input<typeof DecoratorResponse>,
  signals?: (
    request: DecoratorRequest,
    response: DecoratorResponse,
    context: HookContext,
  ) => readonly Signal[],
): Handler<AppEnv> {
  return bind({
    request: DecoratorRequest,
    response: DecoratorResponse,
    run,
    subject: (r) => subjectOf(r.object),
    ...(signals ? { signals } : {}),
    poisoning: { object: (r) => r.object, answer: poisonedDecorator },
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
