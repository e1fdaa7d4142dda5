import assert from "node:assert/strict";
import {
  type ControllerSpec,
  type HookCall,
  matchesSelector,
  type Obj,
  reconcile,
  Resources,
  Store,
} from "../../lib/plan/mod.ts";
import { BUILTIN_RESOURCES } from "../../lib/plan/resources.ts";

const WIDGET = { apiVersion: "example.com/v1", kind: "Widget", resource: "widgets", namespaced: true };
const resources = new Resources([...BUILTIN_RESOURCES, WIDGET]);

const spec = (method: "OnDelete" | "InPlace"): ControllerSpec => ({
  object: {
    apiVersion: "metacontroller.k8s.io/v1alpha1",
    kind: "CompositeController",
    metadata: { name: "widgets" },
  },
  name: "widgets",
  type: "composite",
  parents: [{ apiVersion: "example.com/v1", resource: "widgets" }],
  children: [{ apiVersion: "v1", resource: "configmaps", method }],
  generateSelector: true,
  hooks: { sync: "/sync", finalize: "/finalize" },
});

const configMap = (name: string, value: string): Obj => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name },
  data: { value },
});

/** A hook that answers `children` and records each request. */
function hook(children: () => Obj[], status = 200) {
  const requests: Record<string, unknown>[] = [];
  const call: HookCall = (_path, body) => {
    requests.push(body as Record<string, unknown>);
    return Promise.resolve({
      status,
      body: status === 200 ? { status: { ok: true }, children: children() } : { error: "down" },
    });
  };
  return { call, requests };
}

function setUp(): { store: Store; parent: Obj } {
  const store = new Store(resources, "2026-11-23T10:00:00Z");
  store.load({ apiVersion: "v1", kind: "Namespace", metadata: { name: "ns" } });
  const parent = store.create({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w", namespace: "ns" },
  });
  return { store, parent };
}

Deno.test("reconcile applies a composite answer the way Metacontroller does", async (t) => {
  const { store, parent } = setUp();
  let desired = [configMap("a", "1"), configMap("b", "1")];
  const { call, requests } = hook(() => desired);

  await t.step(
    "first sync: finalizer, status with observedGeneration, children owned and labelled",
    async () => {
      assert.deepEqual(await reconcile(store, spec("InPlace"), parent, call), { reads: [] });
      const w = store.find(parent)!;
      assert.deepEqual(w.metadata.finalizers, ["metacontroller.io/compositecontroller-widgets"]);
      assert.deepEqual(w.status, { ok: true, observedGeneration: 1 });
      const a = store.get(resources.ofKind("v1", "ConfigMap")!, "ns", "a")!;
      assert.equal(a.metadata.labels["controller-uid"], parent.metadata.uid);
      assert.deepEqual(a.metadata.ownerReferences, [{
        apiVersion: "example.com/v1",
        kind: "Widget",
        name: "w",
        uid: parent.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      }]);
      assert.deepEqual(
        requests[0]!.children,
        { "ConfigMap.v1": {} },
        "every declared group is sent, empty too",
      );
    },
  );

  await t.step("second sync sees its children keyed namespace/name, and changes nothing", async () => {
    const before = store.changes;
    await reconcile(store, spec("InPlace"), parent, call);
    assert.deepEqual(Object.keys((requests[1]!.children as Record<string, object>)["ConfigMap.v1"]!), [
      "ns/a",
      "ns/b",
    ]);
    assert.equal(store.changes, before);
  });

  await t.step("InPlace updates a child, OnDelete never does", async () => {
    desired = [configMap("a", "2"), configMap("b", "1")];
    await reconcile(store, spec("OnDelete"), parent, call);
    assert.equal(store.get(resources.ofKind("v1", "ConfigMap")!, "ns", "a")!.data.value, "1");
    await reconcile(store, spec("InPlace"), parent, call);
    assert.equal(store.get(resources.ofKind("v1", "ConfigMap")!, "ns", "a")!.data.value, "2");
  });

  await t.step(
    "a child left out is deleted; one with a finalizer only gets a deletionTimestamp",
    async () => {
      const cm = resources.ofKind("v1", "ConfigMap")!;
      const b = store.get(cm, "ns", "b")!;
      store.replace({ ...b, metadata: { ...b.metadata, finalizers: ["example.com/keep"] } });
      desired = [];
      await reconcile(store, spec("InPlace"), parent, call);
      assert.equal(store.get(cm, "ns", "a"), undefined);
      assert.equal(store.get(cm, "ns", "b")?.metadata.deletionTimestamp, "2026-11-23T10:00:00Z");
    },
  );

  await t.step("a child another controller owns is left alone, and the sync reports it", async () => {
    const cm = resources.ofKind("v1", "ConfigMap")!;
    store.create({
      ...configMap("theirs", "x"),
      metadata: {
        name: "theirs",
        namespace: "ns",
        ownerReferences: [{ kind: "Other", name: "o", uid: "u-1", controller: true }],
      },
    });
    desired = [configMap("theirs", "mine")];
    const r = await reconcile(store, spec("InPlace"), parent, call);
    assert.equal(r.error, "ConfigMap ns/theirs already exists and is controlled by Other o");
    assert.equal(store.get(cm, "ns", "theirs")!.data.value, "x");
  });
});

Deno.test("reconcile: a failed hook changes nothing (no status, no child)", async () => {
  const { store, parent } = setUp();
  const { call } = hook(() => [configMap("a", "1")], 500);
  const r = await reconcile(store, spec("InPlace"), parent, call);
  assert.equal(r.error, "sync hook failed (HTTP 500): down");
  assert.equal(store.find(parent)!.status, undefined);
  assert.equal(store.list(resources.ofKind("v1", "ConfigMap")!).length, 0);
});

Deno.test("reconcile: a deleted parent is finalized, then removed", async () => {
  const { store, parent } = setUp();
  const { call } = hook(() => []);
  await reconcile(store, spec("InPlace"), parent, call);
  store.delete(parent);
  assert.ok(store.find(parent)?.metadata.deletionTimestamp);
  const finalizing: HookCall = (path, body) =>
    Promise.resolve({
      status: 200,
      body: {
        status: {},
        children: [],
        finalized: path === "/finalize" && (body as { finalizing: boolean }).finalizing,
      },
    });
  await reconcile(store, spec("InPlace"), parent, finalizing);
  assert.equal(store.find(parent), undefined);
});

Deno.test("matchesSelector follows the API server's label selector rules", () => {
  const labels = { tier: "prod", team: "a" };
  assert.ok(matchesSelector(labels, undefined));
  assert.ok(matchesSelector(labels, {}));
  assert.ok(matchesSelector(labels, { matchLabels: { tier: "prod" } }));
  assert.ok(!matchesSelector(labels, { matchLabels: { tier: "dev" } }));
  assert.ok(
    matchesSelector(labels, { matchExpressions: [{ key: "tier", operator: "In", values: ["dev", "prod"] }] }),
  );
  assert.ok(
    !matchesSelector(labels, { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["prod"] }] }),
  );
  assert.ok(
    matchesSelector(labels, { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["x"] }] }),
  );
  assert.ok(matchesSelector(labels, { matchExpressions: [{ key: "team", operator: "Exists" }] }));
  assert.ok(!matchesSelector(labels, { matchExpressions: [{ key: "team", operator: "DoesNotExist" }] }));
  assert.ok(!matchesSelector(null, { matchExpressions: [{ key: "team", operator: "In", values: ["a"] }] }));
});

Deno.test("Store: server defaults, deterministic identity, generation only on spec changes", () => {
  const store = new Store(resources, "2026-11-23T10:00:00Z");
  const secret = store.create({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "s", namespace: "ns" },
    stringData: { user: "amy" },
  });
  assert.deepEqual(secret.data, { user: "YW15" });
  assert.equal(secret.stringData, undefined);
  assert.equal(secret.type, "Opaque");
  const again = new Store(resources, "2026-11-23T10:00:00Z").create(secret);
  assert.equal(again.metadata.uid, secret.metadata.uid);
  const w = store.create({
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "w", namespace: "ns" },
    spec: { a: 1 },
  });
  assert.equal(store.replace({ ...w, status: { s: 1 } }), true);
  assert.equal(store.find(w)!.metadata.generation, 1);
  assert.equal(store.replace({ ...store.find(w)!, spec: { a: 2 } }), true);
  assert.equal(store.find(w)!.metadata.generation, 2);
  assert.equal(
    store.replace({ ...store.find(w)!, metadata: { ...store.find(w)!.metadata, resourceVersion: "999" } }),
    false,
  );
});
