/**
 * Hook work off the event loop: a fixed set of workers, each running the same app on one request at a time, and
 * a bounded queue in front of them. Beyond the queue the service answers 429 at once, so probes, metrics and
 * admission stay fast whatever the hooks are doing, and memory is bounded by (workers + queue) requests.
 *
 * @module
 */
import type { Signal } from "../signals/mod.ts";
import { type HookFailure, type PoisonNote, PoisonRegistry } from "./poison.ts";

/**
 * A hook request handed to a worker: the route, its body as received, and the headers the app reads. The body's
 * bytes are transferred to the worker, not copied: the main thread never decodes or clones megabytes.
 */
export interface OffloadRequest {
  readonly route: string;
  readonly body: ArrayBuffer;
  readonly headers: Readonly<Record<string, string>>;
  /** The clock, read once by the main thread (RFC 3339). */
  readonly now: string;
}

/** The object a request concerned, as its log line names it. */
export interface Subject {
  readonly kind: string;
  readonly namespace?: string | undefined;
  readonly name: string;
}

/** A worker's answer: what the app answered, and what the main thread logs. */
export interface OffloadReply {
  readonly status: number;
  /** The answer's bytes as the worker made them (transferred, not copied), or its text. */
  readonly body: string | Uint8Array;
  readonly subject?: Subject;
  readonly failure?: string;
  /** What the answer signals (metrics, Events), handled on the main thread. */
  readonly signals?: readonly Signal[];
}

/** Where hook requests go when they are not run on the main thread. */
export interface Offload {
  /** Runs a request, or answers `"busy"` when every worker is taken and the queue is full. */
  submit(request: OffloadRequest): Promise<OffloadReply | "busy">;
  /**
   * Workers, those busy, requests queued, the queue's limit; requests stopped at their deadline so far, and
   * workers that could not be replaced (optional: a pool without deadlines has neither).
   */
  stats(): {
    workers: number;
    busy: number;
    queued: number;
    queueLimit: number;
    timedOut?: number;
    unavailable?: number;
    /** Parents answered without running their hook now ({@linkcode PoisonRegistry}). */
    poisoned?: number;
  };
}

/** Messages between the pool and a worker. */
export type ToWorker =
  | { readonly type: "init"; readonly options: unknown; readonly poisoned?: readonly [string, PoisonNote][] }
  | { readonly type: "run"; readonly id: number; readonly request: OffloadRequest }
  | { readonly type: "poison"; readonly key: string; readonly note: PoisonNote };
/**
 * A worker's message: ready after init, the key of the parent a run is about once it is read (so that a run
 * that ends its worker is charged to that parent), or the reply to one run.
 */
export type FromWorker =
  | { readonly type: "ready" }
  | { readonly type: "started"; readonly id: number; readonly key: string }
  | { readonly type: "reply"; readonly id: number; readonly reply: OffloadReply };

/** A worker as the pool uses it (a `Worker`, or a fake in tests). */
export interface WorkerLike {
  postMessage(message: ToWorker, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null;
  onerror: ((event: ErrorEvent) => void) | null;
  terminate(): void;
}

/** How to build the pool. */
export interface PoolOptions {
  /** Number of workers; each runs one request at a time. */
  readonly workers: number;
  /** Requests that may wait for a worker; one more is answered `"busy"`. */
  readonly queueLimit: number;
  /** Starts one worker. */
  readonly spawn: () => WorkerLike;
  /** Sent to every worker once, before its first request. */
  readonly init: unknown;
  /** Told when a worker died and was replaced. */
  readonly onCrash?: (message: string) => void;
  /**
   * How long a request may run in a worker (ms; unset or 0: no limit). Past it the worker is terminated and
   * replaced, and the request answered 503: one slow hook input cannot hold the service.
   */
  readonly deadlineMs?: number;
  /** Milliseconds since the epoch, for how long a poisoned parent stays so; `Date.now` by default. */
  readonly clock?: () => number;
  /**
   * Requests with a body larger than this (bytes) never run on the first worker when there are several: it keeps
   * to small ones. Default {@linkcode DEFAULT_LARGE_BYTES}.
   */
  readonly largeBytes?: number;
}

/** A request larger than this is large for the pool: 1 MiB (a Team or TenantCluster sync is tens of kilobytes). */
export const DEFAULT_LARGE_BYTES = 1024 * 1024;

interface Task {
  readonly id: number;
  readonly request: OffloadRequest;
  readonly resolve: (reply: OffloadReply) => void;
  /** The parent's poison key, once the worker has read the request. */
  key?: string;
}

interface Slot {
  worker: WorkerLike;
  task?: Task;
  ready: boolean;
  /** Set when the task's deadline is running. */
  timer?: ReturnType<typeof setTimeout>;
  /** A replacement worker that could not start: the slot takes no more work (`/healthz` says so). */
  broken?: boolean;
}

/** The answer to a request stopped at its deadline: 503, so Metacontroller retries it with backoff. */
function deadlineReply(ms: number): OffloadReply {
  const seconds = Number((ms / 1000).toFixed(3));
  return {
    status: 503,
    body: JSON.stringify({
      error: `the hook ran longer than ${seconds}s and was stopped (its worker replaced); try again`,
    }),
    failure: `hook stopped at its ${seconds}s deadline; worker replaced`,
  };
}

const CRASHED: OffloadReply = {
  status: 500,
  body: JSON.stringify({ error: "internal error: the hook worker stopped" }),
};

/**
 * Creates a worker pool. `ready` resolves once every worker has started, and rejects if one cannot. A worker
 * that dies later fails its request with a 500 (Metacontroller retries) and is replaced.
 *
 * @example
 * ```ts
 * const pool = createWorkerPool({
 *   workers: 2,
 *   queueLimit: 4,
 *   init: options,
 *   spawn: () => new Worker(new URL("./worker.ts", import.meta.url), { type: "module" }),
 * });
 * const reply = await pool.submit({ route: "/hooks/team/sync", body, headers: {}, now: new Date().toISOString() });
 * ```
 */
export function createWorkerPool(
  options: PoolOptions,
): Offload & { readonly ready: Promise<void>; terminate(): void } {
  const pool = new WorkerPool(options);
  return {
    ready: pool.ready,
    submit: (request) => pool.submit(request),
    stats: () => pool.stats(),
    terminate: () => pool.terminate(),
  };
}

/** The pool's slots and queue, and the steps that move a request through them. */
class WorkerPool {
  readonly #options: PoolOptions;
  readonly #queue: Task[] = [];
  readonly #slots: Slot[] = [];
  readonly #deadlineMs: number;
  readonly #largeBytes: number;
  readonly #poison: PoisonRegistry;
  #timedOut = 0;
  #nextId = 0;
  #started = 0;
  #settle!: { resolve: () => void; reject: (err: Error) => void };
  readonly ready: Promise<void>;

  constructor(options: PoolOptions) {
    this.#options = options;
    this.#deadlineMs = options.deadlineMs ?? 0;
    this.#largeBytes = options.largeBytes ?? DEFAULT_LARGE_BYTES;
    this.#poison = new PoisonRegistry(options.clock);
    this.ready = new Promise<void>((resolve, reject) => (this.#settle = { resolve, reject }));
    for (let i = 0; i < options.workers; i++) {
      const slot = { ready: false } as Slot;
      this.#slots.push(slot);
      this.#start(slot);
    }
  }

  submit(request: OffloadRequest): Promise<OffloadReply | "busy"> {
    const usable = this.#slots.filter((s) => !s.broken);
    // Every worker gone for good: nothing would ever run a queued request.
    if (!usable.length) return Promise.resolve("busy");
    const idle = usable.some((s) => !s.task);
    if (!idle && this.#queue.length >= this.#options.queueLimit) return Promise.resolve("busy");
    return new Promise<OffloadReply>((resolve) => {
      this.#queue.push({ id: this.#nextId++, request, resolve });
      this.#pump();
    });
  }

  stats(): ReturnType<Offload["stats"]> {
    return {
      workers: this.#slots.length,
      busy: this.#slots.filter((s) => s.task).length,
      queued: this.#queue.length,
      queueLimit: this.#options.queueLimit,
      timedOut: this.#timedOut,
      unavailable: this.#slots.filter((s) => s.broken).length,
      poisoned: this.#poison.poisoned,
    };
  }

  terminate(): void {
    for (const s of this.#slots) {
      clearTimeout(s.timer);
      s.worker.terminate();
    }
  }

  /** Starts (or restarts) the worker of a slot. */
  #start(slot: Slot): void {
    const worker = this.#options.spawn();
    slot.worker = worker;
    slot.ready = false;
    worker.onmessage = (event) => this.#onMessage(slot, event.data);
    worker.onerror = (event) => {
      event.preventDefault();
      this.#onCrash(slot, worker, event.message);
    };
    worker.postMessage({ type: "init", options: this.#options.init, poisoned: this.#poison.active() });
  }

  /** A worker's message: ready, or the reply to the request it runs. */
  // deno-lint-ignore no-explicit-any
  #onMessage(slot: Slot, msg: any): void {
    if (msg.type === "ready") {
      slot.ready = true;
      if (++this.#started === this.#options.workers) this.#settle.resolve();
      return;
    }
    if (!slot.task || slot.task.id !== msg.id) return;
    if (msg.type === "started") {
      slot.task.key = msg.key;
      return;
    }
    if (msg.type !== "reply") return;
    const task = slot.task;
    slot.task = undefined;
    clearTimeout(slot.timer);
    if (task.key !== undefined) {
      if (msg.reply.status === 500) this.#failed(task, "error")();
      else this.#poison.succeed(task.key);
    }
    task.resolve(msg.reply);
    this.#pump();
  }

  /**
   * A run that failed its parent, recorded; the workers running (not one starting, which is told in its init) are
   * told once it poisons the parent.
   */
  #failed(task: Task | undefined, failure: HookFailure): () => void {
    const key = task?.key;
    const note = key === undefined ? undefined : this.#poison.fail(key, failure);
    return () => {
      if (!note) return;
      for (const s of this.#slots) {
        if (s.ready && !s.broken) s.worker.postMessage({ type: "poison", key: key!, note });
      }
    };
  }

  /** A worker that crashed: replaced (its request answered as crashed), unless it never started. */
  #onCrash(slot: Slot, worker: Slot["worker"], message: string): void {
    if (!slot.ready && this.#started < this.#options.workers) {
      // A worker that cannot even start (a missing permission, a broken module) will not start next time
      // either: fail the service instead of respawning in a loop.
      worker.terminate();
      return this.#settle.reject(new Error(`a hook worker failed to start: ${message}`));
    }
    this.#options.onCrash?.(message);
    const task = slot.task;
    slot.task = undefined;
    clearTimeout(slot.timer);
    worker.terminate();
    const tell = this.#failed(task, /memory/i.test(message) ? "out-of-memory" : "crashed");
    if (slot.ready) this.#start(slot);
    else slot.broken = true; // a replacement that cannot start would not start the next time either
    tell();
    task?.resolve(CRASHED);
    this.#pump();
  }

  /** Gives queued requests to idle workers, each with its deadline. */
  #pump(): void {
    for (const [index, slot] of this.#slots.entries()) {
      if (slot.task || slot.broken) continue;
      // The first worker of several keeps to small requests, so a large one (a pool sync of megabytes, or what a
      // hostile parent makes of a hook) never holds every small one behind it.
      const smallOnly = index === 0 && this.#slots.length > 1;
      const at = this.#queue.findIndex((t) => !smallOnly || t.request.body.byteLength <= this.#largeBytes);
      if (at < 0) continue;
      const [task] = this.#queue.splice(at, 1) as [Task];
      slot.task = task;
      if (this.#deadlineMs > 0) slot.timer = setTimeout(() => this.#expire(slot, task), this.#deadlineMs);
      slot.worker.postMessage({ type: "run", id: task.id, request: task.request }, [task.request.body]);
    }
  }

  /** A request past its deadline: its worker is terminated and replaced, and the request answered 503. */
  #expire(slot: Slot, task: Task): void {
    if (slot.task !== task) return;
    slot.task = undefined;
    this.#timedOut++;
    slot.worker.terminate();
    const tell = this.#failed(task, "deadline");
    this.#start(slot);
    tell();
    task.resolve(deadlineReply(this.#deadlineMs));
    this.#pump();
  }
}
