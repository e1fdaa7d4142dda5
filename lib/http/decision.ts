/**
 * The protocol of admission decisions that read the API and hold only once a write lands (a quota
 * reservation): what a decision asks to read ({@linkcode ReadPlan}), how it is read ({@linkcode readAll}), and the
 * staged answer ({@linkcode Staged}) the adapter writes under a resourceVersion precondition.
 *
 * @module
 */
import type { KubeClient, KubeReader, ReadFreshness } from "../kube/mod.ts";

/**
 * How long a staged decision may keep trying (queueing, reads, conflicts) before it answers `contended`: the
 * API server waits at most `timeoutSeconds: 5` for a webhook, and a late answer is a failed call.
 */
export const DECISION_BUDGET_MS = 4000;

/** Decisions made and written again after conflicts, before the answer is "try again". */
export const MAX_DECISION_ATTEMPTS = 8;

/** Rounds of reads a decision may make, each depending on the ones before. */
export const MAX_READ_ROUNDS = 3;

/** One read of a {@linkcode ReadPlan}. */
export interface PlannedRead extends ReadFreshness {
  readonly path: string;
  readonly list?: boolean;
  readonly labelSelector?: string;
  /** A staged write is conditioned on this object's resourceVersion: after a conflict it is read live. */
  readonly cas?: boolean;
}

/**
 * What an admission decision needs read, by name: one object (`undefined` when absent) or a list's items.
 * Derived from the request by a pure function, executed by the adapter, handed to the decision as {@linkcode Reads}.
 */
export type ReadPlan = Readonly<Record<string, PlannedRead>>;

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

/** Whether an answer is {@linkcode Staged}. */
export function isStaged<T>(v: T | Staged<T>): v is Staged<T> {
  return typeof v === "object" && v !== null && STAGED in v;
}

/**
 * How a decision reads: from the cache where it may (`cached`), with the object a staged write is conditioned on
 * read from the API after a conflict (`fresh`), or the limits from the API (`confirm`: before a refusal is given,
 * the single objects it rests on, a Team or a ProviderConfig, are read live; lists and the ledger stay as read,
 * since what they hold late can only be a cluster deleted a moment ago, and reading them costs far more).
 */
export type ReadMode = "cached" | "fresh" | "confirm";

/**
 * Reads what `plan` asks for, then asks it again with what was read, until it asks for nothing new. A plan that
 * still asks for more after {@linkcode MAX_READ_ROUNDS} rounds is our bug, and fails the call. In `confirm` mode,
 * what `prior` read of lists and of the ledger is kept, and every other object is read again from the API.
 */
export async function readAll(
  plan: (reads: Reads) => ReadPlan,
  kube: KubeReader,
  mode: ReadMode = "cached",
  prior: Reads = {},
): Promise<Reads> {
  // Confirming a refusal re-reads the single objects only: the lists and the ledger stay as `prior` read them
  // (the ledger as this attempt read it, which a staged write is conditioned on).
  const planned = plan(prior);
  let reads: Reads = mode === "confirm"
    ? Object.fromEntries(
      Object.entries(prior).filter(([name]) =>
        planned[name]?.list || planned[name]?.cas || planned[name]?.live
      ),
    )
    : {};
  for (let round = 0; round < MAX_READ_ROUNDS; round++) {
    const wanted = Object.entries(plan(reads)).filter(([name]) => !(name in reads));
    if (!wanted.length) return reads;
    const got = await Promise.all(wanted.map(async ([name, read]) => {
      const live = read.live || (mode === "confirm" && !read.list && !read.cas) ||
        (mode === "fresh" && read.cas);
      const freshness = {
        ...(live ? { live: true } : {}),
        // After a conflict another decision is racing this one: no waiting for a cache to catch up.
        ...(read.atLeast ? { atLeast: read.atLeast, ...(mode === "fresh" ? { hurry: true } : {}) } : {}),
      };
      const value = read.list
        ? await kube.list(read.path, {
          ...freshness,
          ...(read.labelSelector ? { labelSelector: read.labelSelector } : {}),
        })
        : await kube.get(read.path, freshness);
      return [name, value] as const;
    }));
    reads = { ...reads, ...Object.fromEntries(got) };
  }
  if (Object.keys(plan(reads)).some((name) => !(name in reads))) {
    throw new Error(`admission read plan did not settle after ${MAX_READ_ROUNDS} rounds`);
  }
  return reads;
}

/**
 * A reader that answers each distinct read once: the members of one group read their team's objects through it,
 * so the group costs one read of each, not one per member.
 */
export function memoReader(kube: KubeReader): KubeReader {
  const seen = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let p = seen.get(key) as Promise<T> | undefined;
    if (!p) seen.set(key, p = read());
    return p;
  };
  return {
    get: (path, options) =>
      once(`get ${path} ${JSON.stringify(options ?? {})}`, () => kube.get(path, options)),
    list: (path, options) =>
      once(`list ${path} ${JSON.stringify(options ?? {})}`, () => kube.list(path, options)),
  };
}

/**
 * What a review nobody authenticated may make the service read: single objects (one object's worth each), and
 * lists from the watch cache only, as it holds them, even where a decision would read them live: a flood of forged
 * reviews costs the API server nothing that grows with the cluster (issue #55). Such a decision writes nothing,
 * and the controllers hold what admission cannot serialise without writing (docs/security.md), so a cache a moment
 * behind costs no more than admission racing itself does. It writes nothing.
 */
export function unauthenticatedReader(kube: KubeClient): KubeClient {
  return {
    get: (path, options) => kube.get(path, options),
    list: (path, options = {}) => {
      const { live: _live, ...cached } = options;
      return kube.list(path, cached);
    },
    write: () => Promise.reject(new Error("an unauthenticated review writes nothing")),
  };
}
