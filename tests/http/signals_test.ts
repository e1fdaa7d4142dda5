/**
 * Signals never change an answer: a signal source that throws, or a handler that throws, leaves the hook's 200
 * as it is and says so in the log. Admission denials signal their rules.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { bindComposite, createApp, type LogRecord, type RouteRegistrar } from "../../lib/http/mod.ts";
import type { KubeClient } from "../../lib/kube/mod.ts";
import type { Signal } from "../../lib/signals/mod.ts";

const parent = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "p", namespace: "n" } };
const body = JSON.stringify({ controller: {}, parent, children: {}, related: {}, finalizing: false });

const routes: RouteRegistrar = (app) => {
  app.post(
    "/hooks/throwing/sync",
    bindComposite(() => ({ status: { ok: true }, children: [] }), () => {
      throw new Error("signal source broke");
    }),
  );
  app.post(
    "/hooks/signalling/sync",
    bindComposite(
      () => ({ status: {}, children: [] }),
      () => [{ signal: "denial", webhook: "x", rules: ["r"] }],
    ),
  );
};

function app(onSignals?: (s: readonly Signal[]) => void) {
  const logs: LogRecord[] = [];
  const service = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: [routes, ...HOOK_ROUTES],
    log: (r) => logs.push(r),
    ...(onSignals ? { onSignals } : {}),
  });
  return { ...service, logs };
}

const post = (a: ReturnType<typeof app>["app"], path: string, text = body) =>
  a.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: text });

Deno.test("signals never change the answer", async (t) => {
  await t.step("a signal source that throws: 200, the failure in the log", async () => {
    const { app: a, logs } = app();
    const res = await post(a, "/hooks/throwing/sync");
    assert.equal(res.status, 200);
    assert.deepEqual((await res.json()).status, { ok: true });
    assert.equal(logs.at(-1)?.error, "signals: signal source broke");
  });
  await t.step("a handler that throws: 200, and the log says the signals were not handled", async () => {
    const { app: a, logs } = app(() => {
      throw new Error("event writer broke");
    });
    const res = await post(a, "/hooks/signalling/sync");
    assert.equal(res.status, 200);
    assert.ok(logs.some((l) => l.msg === "signals not handled" && l.error === "event writer broke"));
  });
});

Deno.test("an admission denial signals each failing rule, and /metrics counts it", async () => {
  const got: Signal[] = [];
  const cluster = {
    metadata: { name: "c1", namespace: "team-a" },
    spec: { providerConfigRef: { name: "pc", namespace: "butler-system" } },
  };
  const kube = {
    get: () => Promise.resolve(undefined),
    list: () => Promise.resolve([cluster]),
    write: () => Promise.reject(new Error("no writes here")),
  } as unknown as KubeClient;
  const service = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    kube,
    onSignals: (s) => got.push(...s),
  });
  const review = {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "u1",
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
      namespace: "butler-system",
      name: "pc",
      operation: "DELETE",
      userInfo: { username: "alice" },
      oldObject: {
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "ProviderConfig",
        metadata: { name: "pc" },
      },
    },
  };
  const res = await post(service.app, "/webhooks/validate/providerconfig", JSON.stringify(review));
  assert.equal(res.status, 200);
  const answer = await res.json();
  assert.equal(answer.response.allowed, false);
  assert.deepEqual(answer.response.status.details, {
    causes: [{
      reason: "deletionInUse",
      message: 'cannot delete ProviderConfig "pc": TenantCluster team-a/c1 still references it',
    }],
  });
  assert.deepEqual(got, [{ signal: "denial", webhook: "providerconfig", rules: ["deletionInUse"] }]);
  assert.match(
    await service.metrics.registry.metrics(),
    /butler_admission_denials_total\{webhook="providerconfig",rule="deletionInUse"\} 1/,
  );
});
