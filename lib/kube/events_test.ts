import assert from "node:assert/strict";
import type { EventSignal } from "../signals/mod.ts";
import type { KubeClient } from "./client.ts";
import { createEventWriter, eventObject, eventPath, MAX_EVENT_WRITES } from "./events.ts";

const signal: EventSignal = {
  signal: "event",
  regarding: {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    namespace: "butler-system",
    name: "pool-a",
    uid: "u1",
  },
  type: "Warning",
  reason: "PoolCapacityWarning",
  message: "Pool filling up",
};

Deno.test("eventObject is a core/v1 Event about the object, named to be unique per index", () => {
  const now = new Date("2026-11-23T01:00:00.123Z");
  const e = eventObject(signal, now, "pod-1", 2) as Record<string, Record<string, unknown>>;
  assert.equal(e.metadata!.name, `pool-a.${(BigInt(now.getTime()) * 1_000_000n + 2n).toString(16)}`);
  assert.equal(e.metadata!.namespace, "butler-system");
  assert.deepEqual(e.involvedObject, {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    name: "pool-a",
    namespace: "butler-system",
    uid: "u1",
  });
  assert.equal(e.firstTimestamp, "2026-11-23T01:00:00Z");
  assert.deepEqual(e.source, { component: "butler-hooks", host: "pod-1" });
  assert.equal(eventPath(signal), "/api/v1/namespaces/butler-system/events");
});

Deno.test("the Event writer reports failures instead of throwing, and bounds writes under way", async () => {
  const results: (string | undefined)[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const kube = {
    get: () => Promise.resolve({ metadata: { uid: "u1" } }),
    write: async (_m: string, _p: string, body: unknown) => {
      await gate;
      if ((body as { message: string }).message === "fail") throw new Error("403 Forbidden");
      return body;
    },
  } as unknown as KubeClient;
  const writer = createEventWriter({ kube, instance: "i", done: (_s, error) => results.push(error) });
  writer.write([{ ...signal, message: "fail" }, ...Array.from({ length: MAX_EVENT_WRITES }, () => signal)]);
  // The writer took MAX_EVENT_WRITES; the last one found no room and was given up at once.
  assert.deepEqual(results, [`more than ${MAX_EVENT_WRITES} Event writes under way`]);
  release();
  await writer.idle();
  assert.equal(results.length, MAX_EVENT_WRITES + 1);
  assert.equal(results.filter((r) => r === "403 Forbidden").length, 1);
  assert.equal(results.filter((r) => r === undefined).length, MAX_EVENT_WRITES - 1);
});

Deno.test("an Event is written only about an object read from the API with the UID it names", async (t) => {
  const stored = new Map<string, unknown>([
    ["/apis/butler.butlerlabs.dev/v1alpha1/namespaces/butler-system/networkpools/pool-a", {
      metadata: { uid: "u1" },
    }],
  ]);
  const writes: string[] = [];
  const kube = {
    get: (path: string) => Promise.resolve(stored.get(path)),
    write: (_m: string, path: string, body: unknown) => {
      writes.push(path);
      return Promise.resolve(body);
    },
  } as unknown as KubeClient;
  const outcomes: [string | undefined, boolean | undefined][] = [];
  const writer = createEventWriter({ kube, instance: "i", done: (_s, e, u) => outcomes.push([e, u]) });
  const cases: [string, EventSignal, string | undefined][] = [
    ["the pool as read: written", signal, undefined],
    [
      "a made-up pool in kube-system (a forged hook call): not written",
      { ...signal, regarding: { ...signal.regarding, namespace: "kube-system", name: "made-up" } },
      "NetworkPool kube-system/made-up not found",
    ],
    [
      "the pool under another UID (deleted and created again): not written",
      { ...signal, regarding: { ...signal.regarding, uid: "u0" } },
      "NetworkPool butler-system/pool-a has another UID",
    ],
    [
      "a kind no Event is written about: not written",
      { ...signal, regarding: { ...signal.regarding, kind: "Secret", apiVersion: "v1" } },
      "no Events are written about Secret objects",
    ],
  ];
  for (const [name, s, why] of cases) {
    await t.step(name, async () => {
      writes.length = 0;
      outcomes.length = 0;
      writer.write([s]);
      await writer.idle();
      assert.deepEqual(outcomes, [[why, why === undefined ? undefined : true]]);
      assert.deepEqual(writes, why === undefined ? ["/api/v1/namespaces/butler-system/events"] : []);
    });
  }
});
