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
  UndeliveredGroupsError,
} from "../contract/mod.ts";
import type { HookContext } from "../hook/mod.ts";
import { KubeApiError, type KubeReader } from "../kube/mod.ts";
import { parseTime } from "../time/mod.ts";
import type { Signal } from "../signals/mod.ts";
import { jsonError } from "./errors.ts";
import type { AppEnv, Subject } from "./env.ts";

/** The header that replaces the clock for one request when the service runs with `CLOCK_OVERRIDE=true`. */
export const NOW_HEADER = "X-Butler-Now";

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(";")[0]!.trim().toLowerCase();
  return mediaType === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
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

function subjectOf(obj: KubeObject): Subject {
  const ns = obj.metadata.namespace;
  return {
    kind: capped(obj.kind),
    namespace: ns === undefined ? ns : capped(ns),
    name: capped(obj.metadata.name),
  };
}

/**
 * A JSON parse error without the request's bytes: V8's message quotes the text around the error, which can be a
 * Secret's value, and Metacontroller copies error bodies into its logs and Events. Only the offset is kept.
 */
function parseFailure(err: unknown, length: number): string {
  const at = /position (\d+)/.exec(String((err as Error)?.message))?.[1];
  return at === undefined
    ? `malformed JSON: the body (${length} characters) is not a JSON document`
    : `malformed JSON at character ${at} of ${length}`;
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
  readonly plan?: (request: z.output<Req>, reads: Reads) => ReadPlan;
  /**
   * Requests with the same key write the same object (admission's ledger): after a first conflict, their retries
   * are decided one after the other in this process, so that they stop conflicting with each other. Other
   * processes still meet the write's precondition.
   */
  readonly serialize?: (request: z.output<Req>) => string | undefined;
}

/**
 * How long a staged decision may keep trying (queueing, reads, conflicts) before it answers `contended`: the
 * API server waits at most `timeoutSeconds: 5` for a webhook, and a late answer is a failed call.
 */
export const DECISION_BUDGET_MS = 4000;

/** A queue per key: `run` starts once every earlier holder of `key` has finished. */
function keyedQueue() {
  const tails = new Map<string, Promise<unknown>>();
  return async function <T>(key: string | undefined, run: () => Promise<T>): Promise<T> {
    if (key === undefined) return run();
    const before = tails.get(key) ?? Promise.resolve();
    const mine = before.then(run, run);
    const tail = mine.catch(() => {});
    tails.set(key, tail);
    try {
      return await mine;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}

/**
 * What an admission decision needs read, by name: one object (`undefined` when absent) or a list's items.
 * Derived from the request by a pure function, executed by the adapter, handed to the decision as {@linkcode Reads}.
 */
export type ReadPlan = Readonly<
  Record<string, { readonly path: string; readonly list?: boolean; readonly labelSelector?: string }>
>;

/** The results of a {@linkcode ReadPlan}, by the same names. */
export type Reads = Readonly<Record<string, unknown>>;

/** One write an admission decision depends on: a create (POST) or a replace under a resourceVersion (PUT). */
export interface KubeWrite {
  readonly method: "POST" | "PUT";
  readonly path: string;
  readonly body: unknown;
}

const STAGED = Symbol("staged");

/**
 * A response that holds only once `write` lands. On a conflict (409) the adapter reads again and runs the function
 * again, at most {@linkcode MAX_DECISION_ATTEMPTS} times, then answers `contended`.
 */
export interface Staged<T> {
  readonly [STAGED]: true;
  readonly response: T;
  readonly write: KubeWrite;
  readonly contended: T;
}

/** Builds a {@linkcode Staged} response. */
export function staged<T>(response: T, write: KubeWrite, contended: T): Staged<T> {
  return { [STAGED]: true, response, write, contended };
}

function isStaged<T>(v: T | Staged<T>): v is Staged<T> {
  return typeof v === "object" && v !== null && STAGED in v;
}

const NO_API = "admission needs the Kubernetes API, and none is configured";

/** Decisions made and written again after conflicts, before the answer is "try again". */
export const MAX_DECISION_ATTEMPTS = 8;

/** Rounds of reads a decision may make, each depending on the ones before. */
export const MAX_READ_ROUNDS = 3;

/**
 * Reads what `plan` asks for, then asks it again with what was read, until it asks for nothing new. A plan that
 * still asks for more after {@linkcode MAX_READ_ROUNDS} rounds is our bug, and fails the call.
 */
async function readAll(
  plan: (reads: Reads) => ReadPlan,
  kube: KubeReader,
): Promise<Reads> {
  let reads: Reads = {};
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const wanted = Object.entries(plan(reads)).filter(([name]) => !(name in reads));
    if (!wanted.length) return reads;
    reads = { ...reads, ...(await execute(Object.fromEntries(wanted), kube)) };
  }
  if (Object.keys(plan(reads)).some((name) => !(name in reads))) {
    throw new Error(`admission read plan did not settle after ${MAX_READ_ROUNDS} rounds`);
  }
  return reads;
}

async function execute(plan: ReadPlan, kube: KubeReader): Promise<Reads> {
  const entries = await Promise.all(
    Object.entries(plan).map(async ([name, read]) =>
      [
        name,
        read.list
          ? await kube.list(read.path, read.labelSelector ? { labelSelector: read.labelSelector } : {})
          : await kube.get(read.path),
      ] as const
    ),
  );
  return Object.fromEntries(entries);
}

/**
 * Turns a pure function into a Hono handler. The handler checks the content type (415), parses JSON (400),
 * validates the envelope (400 naming every failing field path), reads the clock once, runs the function, and
 * checks the answer against the strict response schema (a violation is our bug: 500, never sent).
 */
export function bind<Req extends z.ZodType, Res extends z.ZodType>(
  binding: Binding<Req, Res>,
): Handler<AppEnv> {
  const queue = keyedQueue();
  return async (c: Context<AppEnv>) => {
    if (!isJsonContentType(c.req.header("content-type"))) {
      return jsonError(
        c,
        415,
        `unsupported content type ${
          JSON.stringify(capped(c.req.header("content-type") ?? ""))
        }: expected application/json`,
      );
    }
    const text = await c.req.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      return jsonError(c, 400, parseFailure(err, text.length));
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
            `invalid ${NOW_HEADER} header: expected an RFC 3339 time, got ${JSON.stringify(capped(header))}`,
          );
        }
        now = parsedNow;
      }
    }

    const plan = (reads: Reads) => binding.plan?.(request, reads) ?? {};
    const kube = runtime.kube;
    if (Object.keys(plan({})).length && !kube) {
      return jsonError(c, 503, NO_API);
    }
    return await decide(c, request, plan, now, binding.serialize?.(request), performance.now());
  };

  /**
   * Reads, runs the function and writes what it staged. The first attempt runs at once; after a conflict, the
   * retries of requests with the same key queue in this process, so they conflict only with other processes.
   */
  async function decide(
    c: Context<AppEnv>,
    request: z.output<Req>,
    plan: (reads: Reads) => ReadPlan,
    now: Date,
    key: string | undefined,
    started: number,
  ): Promise<Response> {
    const runtime = c.get("runtime");
    const kube = runtime.kube;
    let result: z.input<Res> | undefined;
    for (let attempt = 1; result === undefined; attempt++) {
      let outcome: z.input<Res> | Staged<z.input<Res>> | undefined;
      try {
        // A read or write that fails is an error, not a denial: the API server then applies the failurePolicy.
        const reads = Object.keys(plan({})).length ? await readAll(plan, kube!) : {};
        outcome = binding.run(request, { now, config: runtime.hookConfig }, reads);
        if (!isStaged(outcome)) {
          result = outcome;
        } else if (!kube) {
          return jsonError(c, 503, NO_API);
        } else {
          await kube.write(outcome.write.method, outcome.write.path, outcome.write.body);
          result = outcome.response;
        }
      } catch (err) {
        if (err instanceof UndeliveredGroupsError) return jsonError(c, 400, err.message, err.problems);
        if (!(err instanceof KubeApiError)) throw err;
        const contended = err.status === 409 && outcome !== undefined && isStaged(outcome);
        const inBudget = performance.now() - started < DECISION_BUDGET_MS;
        if (contended && inBudget && key !== undefined) {
          return await queue(key, () => decide(c, request, plan, now, undefined, started));
        }
        if (contended && attempt < MAX_DECISION_ATTEMPTS && inBudget) continue;
        if (contended) {
          result = (outcome as Staged<z.input<Res>>).contended;
          break;
        }
        c.set("failure", err.message);
        return jsonError(c, 503, `cannot reach the API (${err.status} ${err.reason}); try again`);
      }
    }
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
          binding.signals(request, checked.data as z.output<Res>, { now, config: runtime.hookConfig }),
        );
      } catch (err) {
        // A signal is a side note: the answer stands, and the log says what went wrong.
        c.set("failure", `signals: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return c.json(checked.data as Record<string, unknown>, 200);
  }
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
  });
}

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

/**
 * Binds an admission decision function; the AdmissionReview envelope (uid echoed) is built here. With `plan`,
 * the objects it names are read from the API first and handed to `decide`, which stays pure. A decision that
 * holds only once something is written (a quota reservation) returns {@linkcode staged}: the adapter writes it,
 * and on a conflict reads and decides again; retries of reviews with the same `serialize` key run one at a time
 * in this process, so they stop conflicting with each other.
 */
export function bindAdmission(
  webhook: string,
  decide: (
    review: AdmissionReviewRequest,
    context: HookContext,
    reads: Reads,
  ) => AdmissionDecision | Staged<AdmissionDecision>,
  plan?: (review: AdmissionReviewRequest, reads: Reads) => ReadPlan,
  serialize?: (review: AdmissionReviewRequest) => string | undefined,
): Handler<AppEnv> {
  return bind({
    request: AdmissionReviewRequest,
    response: AdmissionReviewResponse,
    ...(plan ? { plan } : {}),
    ...(serialize ? { serialize } : {}),
    run: (review, context, reads) => {
      const uid = review.request.uid;
      const d = decide(review, context, reads);
      // A dry run writes nothing: the webhook is sideEffects NoneOnDryRun.
      if (!isStaged(d)) return admissionResponse(uid, d);
      if (review.request.dryRun) return admissionResponse(uid, d.response);
      return staged(admissionResponse(uid, d.response), d.write, admissionResponse(uid, d.contended));
    },
    signals: (_, response) => denialSignals(webhook, response),
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
