/**
 * Who may call what, through the real app (`app.request()` with the listener's findings as the request's env):
 * hooks only with a client certificate the listener verified; admission webhooks only on their own listener when
 * the service runs one, and, with the API server's client names configured, only with its certificate.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createApp, type Peer } from "../../lib/http/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { fetchOnce, served } from "./listener_helpers.ts";

const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "u1",
    kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
    resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
    name: "p",
    namespace: "butler-system",
    operation: "CREATE",
    userInfo: { username: "alice" },
    object: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "ProviderConfig", metadata: { name: "p" } },
    oldObject: null,
  },
});

function service(options: { separate?: boolean; names?: string[] }) {
  const logs: Record<string, unknown>[] = [];
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    requireClientCert: true,
    log: (r) => logs.push(r),
    ...(options.separate ? { separateWebhookListener: true } : {}),
    ...(options.names ? { webhookClientNames: options.names } : {}),
  });
  const post = (env: { peer?: Peer; listener?: "hooks" | "webhooks" }) =>
    app.request(
      "/webhooks/validate/providerconfig",
      { method: "POST", headers: { "content-type": "application/json" }, body: review },
      env,
    );
  return { post, logs };
}

const apiserver: Peer = { authorized: true, subject: "kube-apiserver-webhook-client" };

Deno.test("admission webhooks: their own listener, and only the API server's client certificate", async (t) => {
  await t.step("without configuration, any caller is answered (today's default)", async () => {
    const { post } = service({});
    assert.equal((await post({})).status, 200);
  });
  await t.step("a separate webhook listener: the hooks' listener does not serve them", async () => {
    const { post } = service({ separate: true });
    const r = await post({ listener: "hooks" });
    assert.equal(r.status, 404);
    assert.match((await r.json()).error, /served on the webhook listener only/);
    assert.equal((await post({ listener: "webhooks" })).status, 200);
  });
  await t.step(
    "with the API server's names: no certificate, a foreign one or another name is 403",
    async () => {
      const { post, logs } = service({ separate: true, names: ["kube-apiserver-webhook-client"] });
      const refused = [
        { listener: "webhooks" as const },
        { listener: "webhooks" as const, peer: { authorized: false, reason: "no client certificate" } },
        {
          listener: "webhooks" as const,
          peer: {
            authorized: false,
            reason: "client certificate not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)",
          },
        },
        { listener: "webhooks" as const, peer: { authorized: true, subject: "metacontroller" } },
      ];
      for (const env of refused) {
        const r = await post(env);
        assert.equal(r.status, 403, JSON.stringify(env));
        assert.match(
          (await r.json()).error,
          /admission webhooks answer only the API server's client certificate/,
        );
      }
      // Every refusal is logged with why.
      const failures = logs.filter((l) => l.status === 403).map((l) => String(l.error));
      assert.equal(failures.length, refused.length);
      assert.ok(failures.every((f) => f.startsWith("admission review refused: ")), failures.join("\n"));
      assert.ok(failures.some((f) => f.includes(`"metacontroller" is not the API server's`)));
      const ok = await post({ listener: "webhooks", peer: apiserver });
      assert.equal(ok.status, 200);
      assert.equal((await ok.json()).response.allowed, true);
      // The API server's certificate opens the webhooks, not the hooks' listener.
      assert.equal((await post({ listener: "hooks", peer: apiserver })).status, 404);
    },
  );
  await t.step("a hostile common name is capped in the answer and the log", async () => {
    const { post, logs } = service({ separate: true, names: ["kube-apiserver-webhook-client"] });
    const r = await post({ listener: "webhooks", peer: { authorized: true, subject: "x".repeat(5000) } });
    assert.equal(r.status, 403);
    assert.ok((await r.text()).length < 1000);
    assert.ok(String(logs.at(-1)?.error).length < 600);
  });
});

Deno.test("hooks: only Metacontroller's certificate when its names are configured", async (t) => {
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    requireClientCert: true,
    hookClientNames: ["metacontroller"],
  });
  const customize = JSON.stringify({
    controller: {},
    parent: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", metadata: { name: "t" } },
  });
  const call = (peer: Peer | undefined) =>
    app.request(
      "/hooks/team/customize",
      { method: "POST", headers: { "content-type": "application/json" }, body: customize },
      { peer, listener: "hooks" },
    );
  await t.step("Metacontroller's certificate: answered", async () => {
    assert.equal((await call({ authorized: true, subject: "metacontroller" })).status, 200);
  });
  await t.step("the API server's certificate, signed by the same CA: 403, naming whose it is", async () => {
    const r = await call(apiserver);
    assert.equal(r.status, 403);
    assert.equal(
      (await r.json()).error,
      'hook calls answer only Metacontroller\'s client certificate (metacontroller), not "kube-apiserver-webhook-client"',
    );
  });
  await t.step("a long common name is capped in the answer", async () => {
    const r = await call({ authorized: true, subject: "m".repeat(5000) });
    assert.equal(r.status, 403);
    assert.ok((await r.json()).error.length < 400);
  });
  await t.step("no certificate: 403 as before", async () => {
    assert.equal((await call(undefined)).status, 403);
  });
});

Deno.test("/metrics: only who the API server says may get it, when metricsAuth is set; probes stay open", async () => {
  const asked: (string | undefined)[] = [];
  const sources: (string | undefined)[] = [];
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    metricsAuth: {
      check: (authorization, path, source) => {
        asked.push(authorization);
        sources.push(source);
        assert.equal(path, "/metrics");
        return Promise.resolve(
          authorization === "Bearer prometheus"
            ? { status: 200 as const, user: "prometheus" }
            : authorization
            ? { status: 403 as const, reason: 'user "x" may not get /metrics' }
            : { status: 401 as const, reason: "no bearer token" },
        );
      },
    },
  });
  const anonymous = await app.request("/metrics");
  assert.equal(anonymous.status, 401);
  assert.equal(
    (await anonymous.json()).error,
    "reading /metrics needs a token whose user may get it: no bearer token",
  );
  assert.equal((await app.request("/metrics", { headers: { authorization: "Bearer other" } })).status, 403);
  const ok = await app.request("/metrics", { headers: { authorization: "Bearer prometheus" } });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /butler_http_requests_total/);
  assert.equal((await app.request("/readyz")).status, 200);
  assert.equal((await app.request("/healthz")).status, 200);
  assert.deepEqual(asked, [undefined, "Bearer other", "Bearer prometheus"]);
  // The caller's address, as the listener hands it, reaches the check (its per-address bound).
  await app.request("/metrics", { headers: { authorization: "Bearer prometheus" } }, { source: "10.1.2.3" });
  assert.deepEqual(sources, [undefined, undefined, undefined, "10.1.2.3"]);
});

Deno.test("/metrics through the listener: the check learns the caller's address", async () => {
  const sources: (string | undefined)[] = [];
  const s = await served({
    plain: true,
    app: {
      metricsAuth: {
        check: (_authorization, _path, source) => {
          sources.push(source);
          return Promise.resolve({ status: 401 as const, reason: "no bearer token" });
        },
      },
    },
  });
  try {
    assert.equal((await fetchOnce(s.port, "/metrics", undefined, { plain: true })).status, 401);
    assert.deepEqual(sources, ["127.0.0.1"]);
  } finally {
    await s.stop();
  }
});
