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
import { readBodyWithin } from "./doors.ts";
import { bounded, members, merge, projectForeign, projectForeignUntil, WHOLE } from "../foreign/mod.ts";
import { poisonedComposite, poisonedDecorator, poisonKey, type PoisonNote } from "../isolation/mod.ts";
import {
  DECISION_BUDGET_MS,
  isStaged,
  type KubeWrite,
  MAX_DECISION_ATTEMPTS,
  readAll,
  type ReadPlan,
  type Reads,
  type Staged,
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

/** A generic binding: a request schema, a response schema, a pure function between them. */
export interface Binding<Req extends z.ZodType, Res extends z.ZodType> {
  readonly request: Req;
  readonly response: Res;
  readonly run: (
    request: z.output<Req>,
    context: HookContext,
    reads: Reads,
  ) => z.input<Res> | Staged<z.input<Res>>;
  readonly subject: (request: z.output<Req>) => Subject | undefined;
  /** What the answer tells the service besides (metrics, Events); pure, and never changes the answer. */
  readonly signals?: (
    request: z.output<Req>,
    response: z.output<Res>,
    context: HookContext,
  ) => readonly Signal[];
  /**
   * What the function needs read from the API first (admission only); hooks read nothing. Called again with what
   * has been read, until it asks for nothing new (at most {@linkcode MAX_READ_ROUNDS} rounds): a read may depend on
   * another (a TenantCluster's provider on its Team's default).
   */
  readonly plan?: (request: z.output<Req>, reads: Reads, context: HookContext) => ReadPlan;
  /**
   * Requests with the same key write the same object (admission's ledger): they are decided in groups and
   * committed in one write ({@linkcode createGroupCommit}); `chain` says what the reads become once a staged
   * write has landed. Other processes still meet the write's precondition.
   */
  readonly group?: {
    readonly key: (request: z.output<Req>) => string | undefined;
    readonly chain: (reads: Reads, write: KubeWrite) => Reads;
    /** The answer when the API is too slow to decide in time (a refusal asking to try again). */
    readonly unavailable: (request: z.output<Req>) => z.input<Res>;
  };
  /**
   * Whether an answer refuses: a refusal decided on reads from a cache is decided again on live reads before it
   * is given (a cache may lag behind a limit just raised or a cluster just deleted).
   */
  readonly refuses?: (response: z.input<Res>) => boolean;
  /**
   * The object a hook call is about (its identity and generation), and what to answer while it is poisoned (its
   * hook kept failing: {@linkcode PoisonRegistry}) instead of running the hook. Hooks only.
   */
  readonly poisoning?: {
    readonly object: (request: z.output<Req>) => KubeObject;
    readonly answer: (request: z.output<Req>, hook: string, note: PoisonNote, now: Date) => z.input<Res>;
  };
}

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
    const stopped = binding.poisoning ? await answerPoisoned(binding, c) : undefined;
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

/**
 * What a review nobody authenticated may make the service read: single objects (one object's worth each), and
 * lists from the watch cache only: a list it asks live is read `consistent` (the collection's revision, one
 * object's worth, shared by every review that asks at once, then the cache), so a flood of forged reviews costs
 * the API server nothing that grows with the cluster (issue #55). It writes nothing.
 */
export function unauthenticatedReader(kube: KubeClient): KubeClient {
  return {
    get: (path, options) => kube.get(path, options),
    list: (path, options = {}) => {
      const { live, ...rest } = options;
      return kube.list(path, live ? { ...rest, consistent: true } : rest);
    },
    write: () => Promise.reject(new Error("an unauthenticated review writes nothing")),
  };
}

/**
 * What a hook call's body is read for before it is parsed: whom it is about, and what a poisoned answer keeps. The
 * parent's spec (what a team wrote) and the related objects are skipped in the bytes; children, attachments and
 * the parent's status are Metacontroller's copies of what the hooks made.
 */
const IDENTITY = members({
  apiVersion: bounded(256),
  kind: bounded(256),
  metadata: members({
    uid: bounded(64),
    name: bounded(256),
    namespace: bounded(256),
    generation: bounded(32),
  }),
});
const WHOM = members({ parent: IDENTITY, object: IDENTITY });
const POISON_VIEW = (() => {
  const parent = merge(IDENTITY, members({ status: WHOLE }));
  return members({ parent, object: parent, children: WHOLE, attachments: WHOLE, finalizing: bounded(8) });
})();

/**
 * Before a hook call's body is parsed: the parent it is about, read from its bytes (a projection, which parses
 * nothing of its spec), is told to the pool, so that a call that ends its worker or runs past its deadline while
 * parsing is charged to that parent like any other failure; and a poisoned parent is answered from the same
 * projection, its hook not run and its body never parsed whole. Undefined when the call goes on to its hook.
 */
async function answerPoisoned<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
  c: Context<AppEnv>,
): Promise<Response | undefined> {
  const runtime = c.get("runtime");
  if (!binding.poisoning || !runtime.poison || !runtime.heapBudget) return undefined;
  const body = await readBodyWithin(c);
  if (body === undefined) return undefined; // the read below answers 408
  const bytes = new Uint8Array(body);
  let whom: Record<string, unknown> | undefined;
  try {
    whom = projectForeignUntil(bytes, WHOM, ["parent", "object"], runtime.heapBudget);
  } catch {
    return undefined; // not JSON, or not now: the read below answers
  }
  const parent = (whom?.parent ?? whom?.object) as { metadata?: Record<string, unknown> } | undefined;
  const m = parent?.metadata;
  if (typeof m?.name !== "string") return undefined; // not a hook call: the schema below says so
  const key = poisonKey(c.req.path, {
    name: m.name,
    ...(typeof m.uid === "string" ? { uid: m.uid } : {}),
    ...(typeof m.namespace === "string" ? { namespace: m.namespace } : {}),
    ...(typeof m.generation === "number" ? { generation: m.generation } : {}),
  });
  runtime.poison.started(key);
  const now = clockOf(c);
  if (now instanceof Response) return now;
  const note = runtime.poison.note(key, now);
  if (!note) return undefined;
  c.set("failure", `hook not run: its parent is poisoned (${note.failure}, ${note.count} times)`);
  let view: Record<string, unknown>;
  try {
    view = projectForeign(bytes, POISON_VIEW, runtime.heapBudget) as Record<string, unknown>;
  } catch {
    return undefined; // the read below answers
  }
  const request = { ...view, children: view.children ?? {}, attachments: view.attachments ?? {} } as z.output<
    Req
  >;
  const subject = binding.subject(request);
  if (subject) c.set("subject", subject);
  const context = { now, config: runtime.hookConfig };
  return answer(
    binding,
    c,
    request,
    binding.poisoning.answer(request, hookName(c.req.path), note, now),
    context,
  );
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
