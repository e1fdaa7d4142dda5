/**
 * Group commit for admission decisions that write one object per key (a team's quota ledger), as Kubernetes'
 * ResourceQuota admission batches the pending admissions of a namespace into one compare-and-swap write.
 *
 * The first review of a key is decided at once. Reviews that arrive while its write is in flight wait, and are
 * then decided together, in arrival order, against one view: each is decided on what was read plus the staged
 * writes of the members before it ({@linkcode GroupDecider.chain}), so each is admitted or refused individually,
 * with the message it would get alone after the earlier ones. The group's last staged write carries every
 * admission and is sent once, under the resourceVersion read. A conflict (another replica went first) re-decides
 * the whole group on a fresh view; no member is answered before the write its answer depends on has landed, so a
 * refusal is never caused by an admission that did not happen. Members decided before the group's first staged
 * write do not depend on it and are answered at once. Every review is answered within
 * {@linkcode DECISION_BUDGET_MS} of its arrival: a read or write the API server is too slow for is given up, and
 * the review refused with "try again" rather than left to the API server's webhook timeout.
 *
 * @module
 */
import { KubeApiError, type KubeClient } from "../kube/mod.ts";
import type { HookContext } from "../hook_context/mod.ts";
import {
  DECISION_BUDGET_MS,
  isStaged,
  type KubeWrite,
  MAX_DECISION_ATTEMPTS,
  memoReader,
  readAll,
  type ReadPlan,
  type Reads,
  type Staged,
} from "./decision.ts";

/** Members decided in one write at most: a ledger write stays small, and a group stays within the budget. */
export const MAX_GROUP = 256;

/** One review waiting for its group. */
export interface GroupMember<Req> {
  readonly request: Req;
  readonly plan: (reads: Reads) => ReadPlan;
  readonly context: HookContext;
  /** `performance.now()` when the review arrived: the budget runs from there. */
  readonly started: number;
}

/** A member's answer, or the error that fails its call (a failed read or write: the API server's failurePolicy). */
export type MemberResult<Res> = { readonly response: Res } | { readonly error: unknown };

/** What a group commit decides with. */
export interface GroupDecider<Req, Res> {
  readonly kube: KubeClient;
  readonly run: (request: Req, context: HookContext, reads: Reads) => Res | Staged<Res>;
  /** The reads as they will be once `write` has landed (the ledger it writes, in place of the one read). */
  readonly chain: (reads: Reads, write: KubeWrite) => Reads;
  /**
   * Whether an answer refuses. A refusal decided on cached reads is decided again on live ones before it is
   * given: a cache may lag behind a limit just raised or a cluster just deleted, and a refusal must hold on what
   * the API says.
   */
  readonly refuses?: (response: Res) => boolean;
  /**
   * The answer when the API did not answer a read in time: a refusal asking to try again, given before the
   * API server's own timeout for the webhook turns the call into an error.
   */
  readonly unavailable: (request: Req) => Res;
  /** Milliseconds, monotonic; `performance.now` by default. */
  readonly elapsed?: () => number;
}

const LATE = Symbol("late");

/** A member decided, waiting for the group's write. */
interface Held<Req, Res> {
  readonly waiting: Waiting<Req, Res>;
  readonly outcome: Res | Staged<Res>;
  readonly reads: Reads;
}

interface Waiting<Req, Res> {
  readonly member: GroupMember<Req>;
  readonly resolve: (result: MemberResult<Res>) => void;
}

/** `p`, or {@linkcode LATE} once `deadline` (on the `elapsed` clock) has passed. */
function by<T>(elapsed: () => number, p: Promise<T>, deadline: number): Promise<T | typeof LATE> {
  p.catch(() => {}); // a late failure is nobody's business any more
  const ms = deadline - elapsed();
  if (ms <= 0) return Promise.resolve(LATE);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof LATE>((resolve) => timer = setTimeout(() => resolve(LATE), ms));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * Decides one group: each member on the view read plus the staged writes before it, a refusal on cached reads
 * confirmed on live ones, then the group's last staged write sent once; a conflict decides the whole group again
 * on a fresh view.
 */
async function decideGroup<Req, Res>(
  decider: GroupDecider<Req, Res>,
  elapsed: () => number,
  group: Waiting<Req, Res>[],
): Promise<void> {
  const { kube, run, chain } = decider;
  let fresh = false;
  for (let attempt = 1;; attempt++) {
    const reader = memoReader(kube);
    let write: KubeWrite | undefined;
    const held: Held<Req, Res>[] = [];
    for (const waiting of group) {
      const { request, plan, context, started } = waiting.member;
      const deadline = started + DECISION_BUDGET_MS;
      try {
        let read = await by(elapsed, readAll(plan, reader, fresh ? "fresh" : "cached"), deadline);
        if (read === LATE) {
          waiting.resolve({ response: decider.unavailable(request) });
          continue;
        }
        let outcome = run(request, context, write ? chain(read, write) : read);
        if (!isStaged(outcome) && decider.refuses?.(outcome)) {
          const live = await by(elapsed, readAll(plan, reader, "confirm", read), deadline);
          // Not confirmed in time: the refusal stands as decided.
          if (live !== LATE) {
            outcome = run(request, context, write ? chain(read = live, write) : (read = live));
          }
        }
        if (isStaged(outcome)) write = outcome.write;
        else if (!write) {
          waiting.resolve({ response: outcome });
          continue;
        }
        held.push({ waiting, outcome, reads: read });
      } catch (error) {
        waiting.resolve({ error });
      }
    }
    if (!write) return;
    const oldest = Math.min(...held.map((h) => h.waiting.member.started));
    let failure: unknown;
    try {
      // A write the API server takes too long for is given up before the API server gives up on the webhook:
      // the reviews are answered "try again" (should it land later, its reservations expire unused).
      if (
        (await by(elapsed, kube.write(write.method, write.path, write.body), oldest + DECISION_BUDGET_MS)) !==
          LATE
      ) {
        for (const h of held) {
          h.waiting.resolve({ response: isStaged(h.outcome) ? h.outcome.response : h.outcome });
        }
        return;
      }
    } catch (error) {
      failure = error;
    }
    const conflict = failure instanceof KubeApiError && failure.status === 409;
    if (conflict && attempt < MAX_DECISION_ATTEMPTS && elapsed() - oldest < DECISION_BUDGET_MS) {
      fresh = true;
      group = held.map((h) => h.waiting);
      continue;
    }
    for (const h of held) {
      if (failure !== undefined && !conflict) h.waiting.resolve({ error: failure });
      else if (!conflict) h.waiting.resolve({ response: decider.unavailable(h.waiting.member.request) });
      else if (isStaged(h.outcome)) h.waiting.resolve({ response: h.outcome.contended });
      else {
        // Refused on top of admissions that did not land: decided again on its own view, without them.
        const alone = run(h.waiting.member.request, h.waiting.member.context, h.reads);
        h.waiting.resolve({ response: isStaged(alone) ? alone.contended : alone });
      }
    }
    return;
  }
}

/**
 * Returns `submit(key, member)`, which resolves with the member's answer once its group has been decided and
 * written.
 *
 * @example
 * ```ts
 * const submit = createGroupCommit({ kube, run: admitTenantCluster, chain: (r, w) => ({ ...r, ledger: w.body }) });
 * const result = await submit("quota-ledger/team-a", { request, plan, context, started: performance.now() });
 * ```
 */
export function createGroupCommit<Req, Res>(
  decider: GroupDecider<Req, Res>,
): (key: string, member: GroupMember<Req>) => Promise<MemberResult<Res>> {
  const elapsed = decider.elapsed ?? (() => performance.now());
  const queues = new Map<string, Waiting<Req, Res>[]>();

  async function drain(key: string, queue: Waiting<Req, Res>[]): Promise<void> {
    try {
      for (let group = queue.splice(0, MAX_GROUP); group.length; group = queue.splice(0, MAX_GROUP)) {
        await decideGroup(decider, elapsed, group);
      }
    } finally {
      queues.delete(key);
    }
  }

  return (key, member) =>
    new Promise((resolve) => {
      const queue = queues.get(key);
      if (queue) {
        queue.push({ member, resolve });
        return;
      }
      const fresh: Waiting<Req, Res>[] = [{ member, resolve }];
      queues.set(key, fresh);
      void drain(key, fresh);
    });
}
