/**
 * A binding: what turns a pure function into a route (its schemas, its reads, its group, how it is poisoned).
 *
 * @module
 */
import type { z } from "zod";
import type { KubeObject } from "../contract/mod.ts";
import type { HookContext } from "../hook_context/mod.ts";
import type { Signal } from "../signals/mod.ts";
import type { PoisonNote } from "../isolation/mod.ts";
import type { KubeWrite, ReadPlan, Reads, Staged } from "./decision.ts";
import type { Subject } from "./env.ts";

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
