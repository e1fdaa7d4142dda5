/**
 * Parents whose hook cannot finish. A hook call that ends its worker (out of memory), runs past its deadline or
 * fails with a 500 is recorded under its parent's key (the hook, the object's UID, its generation); the second
 * such failure in a row marks the parent poisoned for ten minutes. A poisoned parent's next calls are answered at
 * once, without running the hook: every child and attachment kept as observed (fewer would delete them), and a
 * condition saying why in fixed words. Metacontroller writes that, stops retrying into the ground, and the other
 * parents keep converging; a new generation (the spec changed) is a new key, tried afresh.
 *
 * @module
 */
import { conditions, PreviousConditions } from "../conditions/mod.ts";
import {
  asDesired,
  type CompositeRequest,
  type CompositeResponse,
  type DecoratorRequest,
  type DecoratorResponse,
  type KubeObject,
  type ObjectMap,
} from "../contract/mod.ts";

/** How a hook call failed. */
export type HookFailure = "out-of-memory" | "deadline" | "crashed" | "error";

/** Why a parent is poisoned: the last failure, how many in a row, and until when its calls are answered so. */
export interface PoisonNote {
  readonly failure: HookFailure;
  readonly count: number;
  /** Milliseconds since the epoch. */
  readonly until: number;
}

/** A hook call's parent, as a key of {@linkcode PoisonRegistry}: `route uid-or-name generation`. */
export function poisonKey(
  route: string,
  metadata: {
    uid?: string | undefined;
    namespace?: string | undefined;
    name: string;
    generation?: number | undefined;
  },
): string {
  const id = metadata.uid || `${metadata.namespace ?? ""}/${metadata.name}`;
  return `${route} ${id} ${metadata.generation ?? 0}`;
}

/** Failures in a row that poison a parent. */
export const POISON_AFTER = 2;
/** How long a poisoned parent is answered without running its hook. */
export const POISON_MILLISECONDS = 10 * 60 * 1000;
/** Parents remembered at most (the oldest are forgotten first). */
export const POISON_KEYS = 1000;

/** The failures seen per parent key, and the parents they poisoned. */
export class PoisonRegistry {
  readonly #failures = new Map<string, { count: number; failure: HookFailure; until?: number }>();
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** Records a failure; returns the note when it poisons the parent (or keeps it poisoned). */
  fail(key: string, failure: HookFailure): PoisonNote | undefined {
    const prev = this.#failures.get(key);
    const count = (prev?.count ?? 0) + 1;
    this.#failures.delete(key);
    if (this.#failures.size >= POISON_KEYS) this.#failures.delete(this.#failures.keys().next().value!);
    const until = count >= POISON_AFTER ? this.#clock() + POISON_MILLISECONDS : undefined;
    this.#failures.set(key, { count, failure, ...(until ? { until } : {}) });
    return until ? { failure, count, until } : undefined;
  }

  /** A call that answered: the parent's failures are forgotten. */
  succeed(key: string): void {
    this.#failures.delete(key);
  }

  /** The parents poisoned now, for a worker that starts. */
  active(): [string, PoisonNote][] {
    const now = this.#clock();
    return [...this.#failures].flatMap(([key, f]) =>
      f.until !== undefined && f.until > now
        ? [[key, { failure: f.failure, count: f.count, until: f.until }]]
        : []
    );
  }

  /** Parents poisoned now. */
  get poisoned(): number {
    return this.active().length;
  }
}

const WHY: Record<HookFailure, string> = {
  "out-of-memory": "ran out of memory",
  deadline: "ran past its deadline",
  crashed: "crashed",
  error: "failed with an internal error",
};

/** The condition a poisoned parent carries (fixed words: nothing of the object is quoted). */
function stoppedCondition(hook: string, generation: number | undefined, note: PoisonNote) {
  return {
    type: "Ready",
    status: "False" as const,
    reason: "HookStopped",
    message: `the ${hook} hook ${WHY[note.failure]} ${note.count} times in a row on generation ${
      generation ?? 0
    }; every child is kept as it is, and the hook runs again when the object changes or after ${
      new Date(note.until).toISOString()
    }`,
  };
}

/** The previous status with the stopped condition in place of `Ready`. */
function stoppedStatus(
  object: KubeObject,
  hook: string,
  note: PoisonNote,
  now: Date,
): Record<string, unknown> {
  const status = (object.status ?? {}) as Record<string, unknown>;
  const previous = PreviousConditions.parse(status.conditions);
  const kept = (Array.isArray(status.conditions) ? status.conditions : []).filter((c) =>
    (c as { type?: unknown })?.type !== "Ready"
  );
  const [ready] = conditions([stoppedCondition(hook, object.metadata.generation, note)], previous, now);
  return { ...status, conditions: [ready, ...kept] };
}

/** Every object of every group of a map, as desired: what keeps them all as they are. */
function keepAll(map: ObjectMap): KubeObject[] {
  return Object.keys(map).sort().flatMap((group) =>
    Object.keys(map[group] ?? {}).sort().map((key) => asDesired(map[group]![key]!))
  );
}

/**
 * A poisoned CompositeController parent's answer: every child kept, the status as it was with `Ready` False
 * (`HookStopped`); a finalize is not finished.
 */
export function poisonedComposite(
  request: CompositeRequest,
  hook: string,
  note: PoisonNote,
  now: Date,
): CompositeResponse {
  return {
    status: stoppedStatus(request.parent, hook, note, now),
    children: keepAll(request.children),
    ...(request.finalizing ? { finalized: false } : {}),
  };
}

/** A poisoned DecoratorController object's answer: every attachment kept, the status as it was, `Ready` False. */
export function poisonedDecorator(
  request: DecoratorRequest,
  hook: string,
  note: PoisonNote,
  now: Date,
): DecoratorResponse {
  return {
    status: stoppedStatus(request.object, hook, note, now),
    attachments: keepAll(request.attachments),
    ...(request.finalizing ? { finalized: false } : {}),
  };
}
