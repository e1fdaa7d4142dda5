import type { EventSignal } from "../signals/mod.ts";
import { formatTime } from "../time/mod.ts";
import type { KubeClient } from "./client.ts";

/** `source.component` of the Events the service writes. */
export const EVENT_COMPONENT = "butler-hooks";

/** Event writes that may be under way at once; more are dropped (and counted), never queued without bound. */
export const MAX_EVENT_WRITES = 16;

/**
 * The core/v1 Event that records `signal` at `now` (pure). Named like client-go's recorder (`<object>.<unix nanos
 * in hex>`), plus `index` so that several Events of one moment do not collide.
 *
 * @example
 * ```ts
 * eventObject(signal, new Date("2026-11-23T01:00:00Z"), "butler-hooks-7d9f", 0).metadata.name;
 * // "pool-a.187a6b0f4e6c0000"
 * ```
 */
export function eventObject(
  signal: EventSignal,
  now: Date,
  instance: string,
  index = 0,
): Record<string, unknown> {
  const { regarding } = signal;
  const nanos = BigInt(now.getTime()) * 1_000_000n + BigInt(index);
  const time = formatTime(now);
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: {
      name: `${regarding.name}.${nanos.toString(16)}`,
      ...(regarding.namespace ? { namespace: regarding.namespace } : {}),
    },
    involvedObject: {
      apiVersion: regarding.apiVersion,
      kind: regarding.kind,
      name: regarding.name,
      ...(regarding.namespace ? { namespace: regarding.namespace } : {}),
      ...(regarding.uid ? { uid: regarding.uid } : {}),
    },
    type: signal.type,
    reason: signal.reason,
    message: signal.message,
    source: { component: EVENT_COMPONENT, ...(instance ? { host: instance } : {}) },
    firstTimestamp: time,
    lastTimestamp: time,
    count: 1,
  };
}

/** The path an Event is created at (cluster-scoped objects' Events go to `default`, as kubectl looks for them). */
export function eventPath(signal: EventSignal): string {
  return `/api/v1/namespaces/${encodeURIComponent(signal.regarding.namespace || "default")}/events`;
}

/** The resource (plural) of each kind Events are written about; an Event about another kind is not written. */
const RESOURCE_OF_KIND: Readonly<Record<string, string>> = { NetworkPool: "networkpools" };

/** Where the object an Event is about is read (`undefined`: not a kind Events are written about). */
export function subjectPath(regarding: EventSignal["regarding"]): string | undefined {
  const resource = Object.hasOwn(RESOURCE_OF_KIND, regarding.kind)
    ? RESOURCE_OF_KIND[regarding.kind]
    : undefined;
  if (!resource) return undefined;
  const ns = regarding.namespace ? `/namespaces/${encodeURIComponent(regarding.namespace)}` : "";
  return `/apis/${regarding.apiVersion}${ns}/${resource}/${encodeURIComponent(regarding.name)}`;
}

/**
 * Why an Event about `regarding` is not written, given the object read at its path (`undefined`: it is): the
 * object must exist with the UID the Event names. A hook call is an answer to Metacontroller, not proof that the
 * object exists: an Event goes only to an object the service has read from the API.
 */
export function unverifiedSubject(regarding: EventSignal["regarding"], stored: unknown): string | undefined {
  const uid = (stored as { metadata?: { uid?: unknown } } | undefined)?.metadata?.uid;
  if (uid === undefined) return `${regarding.kind} ${regarding.namespace ?? ""}/${regarding.name} not found`;
  return uid === regarding.uid
    ? undefined
    : `${regarding.kind} ${regarding.namespace ?? ""}/${regarding.name} has another UID`;
}

/** Writes Events in the background; see {@linkcode createEventWriter}. */
export interface EventWriter {
  /** Starts writing the Events among `signals`; returns at once. */
  write(signals: readonly EventSignal[]): void;
  /** Resolves when every write started so far has finished (tests, shutdown). */
  idle(): Promise<void>;
}

/**
 * Writes Events with `kube`, after the hook answered: a failure is reported through `done` and never reaches the
 * hook call. At most {@linkcode MAX_EVENT_WRITES} writes run at once; beyond that an Event is dropped (`failed`).
 * Each Event's object is read first ({@linkcode unverifiedSubject}): one that does not exist with its UID gets no
 * Event (`done` with `unverified` set), so no hook call can make the service write Events about made-up objects
 * or into namespaces of its choosing.
 */
export function createEventWriter(options: {
  readonly kube: KubeClient;
  readonly instance: string;
  readonly clock?: () => Date;
  readonly done?: (signal: EventSignal, error?: string, unverified?: boolean) => void;
}): EventWriter {
  const clock = options.clock ?? (() => new Date());
  const running = new Set<Promise<void>>();
  return {
    write(signals) {
      const now = clock();
      signals.forEach((signal, index) => {
        if (running.size >= MAX_EVENT_WRITES) {
          options.done?.(signal, `more than ${MAX_EVENT_WRITES} Event writes under way`);
          return;
        }
        const body = eventObject(signal, now, options.instance, index);
        const p: Promise<void> = verified(options.kube, signal).then(async (why) => {
          if (why) return options.done?.(signal, why, true);
          await options.kube.write("POST", eventPath(signal), body);
          options.done?.(signal);
        }).catch((err) => options.done?.(signal, err instanceof Error ? err.message : String(err)))
          .finally(() => running.delete(p));
        running.add(p);
      });
    },
    async idle() {
      while (running.size) await Promise.all([...running]);
    },
  };
}

/** Reads the Event's object: why no Event may be written about it, or `undefined`. */
async function verified(kube: KubeClient, signal: EventSignal): Promise<string | undefined> {
  const path = subjectPath(signal.regarding);
  if (!path) return `no Events are written about ${signal.regarding.kind} objects`;
  return unverifiedSubject(signal.regarding, await kube.get(path));
}
