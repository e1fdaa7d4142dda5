import assert from "node:assert/strict";
import type { Hono } from "hono";
import {
  bindAdmission,
  bindComposite,
  bindCustomize,
  bindDecorator,
  NOW_HEADER,
  type RouteRegistrar,
} from "../../lib/http/mod.ts";
import type { AppEnv } from "../../lib/http/mod.ts";
import { readGroup } from "../../lib/contract/mod.ts";
import { KubeObject } from "../../lib/contract/mod.ts";
import { formatTime } from "../../lib/time/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import { decodeBase64 } from "../../lib/encoding/mod.ts";

const envelope = (name: string) =>
  Deno.readTextFileSync(new URL(`./envelopes/${name}.json`, import.meta.url));

/** Test-only hooks that echo what they were given, so the tests see exactly what the binder hands a hook. */
const echoRoutes: RouteRegistrar = (app: Hono<AppEnv>) => {
  app.post(
    "/hooks/echo/sync",
    bindComposite((req, ctx) => ({
      status: {
        now: formatTime(ctx.now),
        parent: `${req.parent.kind}/${req.parent.metadata.namespace ?? ""}/${req.parent.metadata.name}`,
        groups: Object.keys(req.children).sort(),
        configMaps: readGroup(req.children, { kind: "ConfigMap", apiVersion: "v1" }, KubeObject).map((e) =>
          e.key
        ),
        related: Object.keys(req.related).sort(),
      },
      children: Object.values(req.children).flatMap((g) => Object.values(g ?? {})),
      resyncAfterSeconds: 30,
    })),
  );
  app.post(
    "/hooks/echo/decorate",
    bindDecorator((req) => ({
      labels: { decorated: "true", stale: null },
      status: { attachments: Object.keys(req.attachments["Service.v1"] ?? {}) },
      attachments: Object.values(req.attachments["Service.v1"] ?? {}),
    })),
  );
  app.post(
    "/hooks/echo/customize",
    bindCustomize((req) => ({
      relatedResources: [{
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        resource: "ipallocations",
        labelSelector: { matchLabels: { "butler.butlerlabs.dev/network-pool": req.parent.metadata.name } },
      }],
    })),
  );
  app.post(
    "/hooks/echo/throw",
    bindComposite(() => {
      throw new Error("boom at /secret/path.ts:12");
    }),
  );
  app.post(
    "/hooks/echo/extra-key",
    bindComposite(() => ({ status: {}, children: [], debug: true }) as never),
  );
  app.post(
    "/webhooks/validate/echo",
    bindAdmission(
      "echo",
      (review) =>
        review.request.operation === "CREATE"
          ? { allowed: false, message: "spec.aws.region: Required value" }
          : {
            allowed: true,
            patch: [{ op: "add", path: "/metadata/labels", value: { a: "b" } }],
          },
    ),
  );
};

function post(app: Hono<AppEnv>, path: string, body: string, headers: Record<string, string> = {}) {
  return app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
}

Deno.test("probes", async (t) => {
  const { app, lifecycle } = createTestApp([echoRoutes]);
  await t.step("/healthz is always 200", async () => {
    assert.equal((await app.request("/healthz")).status, 200);
    lifecycle.beginShutdown();
    assert.equal((await app.request("/healthz")).status, 200);
  });
  await t.step("/readyz answers 503 once shutdown has begun", async () => {
    const fresh = createTestApp([echoRoutes]);
    assert.equal((await fresh.app.request("/readyz")).status, 200);
    fresh.lifecycle.beginShutdown();
    const res = await fresh.app.request("/readyz");
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), { status: "shutting down" });
  });
});

Deno.test("errors are JSON with precise messages", async (t) => {
  const { app } = createTestApp([echoRoutes], { bodyLimitBytes: 4096 });

  await t.step("unknown route is 404", async () => {
    const res = await post(app, "/hooks/unknown/sync", "{}");
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: "no route for POST /hooks/unknown/sync" });
  });

  await t.step("GET on a hook route is 404", async () => {
    assert.equal((await app.request("/hooks/echo/sync")).status, 404);
  });

  await t.step("body over the limit is 413 (Content-Length)", async () => {
    const res = await post(app, "/hooks/echo/sync", JSON.stringify({ pad: "x".repeat(5000) }));
    assert.equal(res.status, 413);
    assert.deepEqual(await res.json(), { error: "request body exceeds the limit of 4096 bytes" });
  });

  await t.step("body over the limit is 413 (streamed, no Content-Length)", async () => {
    const chunk = new TextEncoder().encode("x".repeat(1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent++ < 8) ctrl.enqueue(chunk);
        else ctrl.close();
      },
    });
    const res = await app.request("/hooks/echo/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: stream,
    });
    assert.equal(res.status, 413);
    assert.match((await res.json()).error, /exceeds the limit of 4096 bytes/);
  });

  await t.step("non-JSON content type is 415", async () => {
    const res = await post(app, "/hooks/echo/sync", "{}", { "content-type": "text/plain" });
    assert.equal(res.status, 415);
    assert.deepEqual(await res.json(), {
      error: 'unsupported content type "text/plain": expected application/json',
    });
  });

  await t.step("missing content type is 415", async () => {
    const res = await app.request("/hooks/echo/sync", { method: "POST", body: "{}" });
    assert.equal(res.status, 415);
  });

  await t.step("content type with charset is accepted", async () => {
    const res = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"), {
      "content-type": "application/json; charset=utf-8",
    });
    assert.equal(res.status, 200);
  });

  await t.step("malformed JSON is 400 naming the problem", async () => {
    const res = await post(app, "/hooks/echo/sync", '{"parent": ');
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, "malformed JSON: the body (11 characters) is not a JSON document");
  });

  await t.step("an invalid envelope is 400 with every failing field path", async () => {
    const body = JSON.parse(envelope("composite_namespaced"));
    delete body.parent.metadata.name;
    body.finalizing = "no";
    const res = await post(app, "/hooks/echo/sync", JSON.stringify(body));
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.equal(
      json.error,
      "invalid request: parent.metadata.name: Invalid input: expected string, received undefined",
    );
    assert.deepEqual(json.problems.map((p: { path: string }) => p.path), [
      "parent.metadata.name",
      "finalizing",
    ]);
  });

  await t.step("a child without kind is named by its map path", async () => {
    const body = JSON.parse(envelope("composite_namespaced"));
    delete body.children["ConfigMap.v1"]["team-a/w1-config"].kind;
    const res = await post(app, "/hooks/echo/sync", JSON.stringify(body));
    assert.equal(res.status, 400);
    assert.equal((await res.json()).problems[0].path, 'children["ConfigMap.v1"]["team-a/w1-config"].kind');
  });

  await t.step("a thrown error is a JSON 500 without stack", async () => {
    const res = await post(app, "/hooks/echo/throw", envelope("composite_namespaced"));
    assert.equal(res.status, 500);
    const text = await res.text();
    assert.deepEqual(JSON.parse(text), { error: "internal error" });
    assert.doesNotMatch(text, /boom|secret|\.ts/);
  });

  await t.step("a response with an unknown top-level key is never sent", async () => {
    const res = await post(app, "/hooks/echo/extra-key", envelope("composite_namespaced"));
    assert.equal(res.status, 500);
    assert.deepEqual(await res.json(), { error: "internal error: the hook produced an invalid response" });
  });
});

Deno.test("envelopes from the contract reference", async (t) => {
  const { app } = createTestApp([echoRoutes]);

  await t.step("composite, namespaced parent, v2 keys", async () => {
    const res = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"));
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.deepEqual(Object.keys(body).sort(), ["children", "resyncAfterSeconds", "status"]);
    assert.equal(body.status.parent, "Widget/team-a/w1");
    assert.deepEqual(body.status.groups, ["ConfigMap.v1", "Deployment.apps/v1"]);
    assert.deepEqual(body.status.configMaps, ["team-a/w1-config"]);
    assert.equal(body.children[0].metadata.ownerReferences[0].uid, "1111-aaaa");
  });

  await t.step("composite, cluster-scoped parent with related objects", async () => {
    const res = await post(app, "/hooks/echo/sync", envelope("composite_cluster"));
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.status.parent, "Tenant//acme");
    assert.deepEqual(body.status.related, ["Secret.v1"]);
    assert.deepEqual(body.children.map((c: { metadata: { name: string } }) => c.metadata.name), [
      "acme-dev",
      "quota",
    ]);
  });

  await t.step("decorator with attachments", async () => {
    const res = await post(app, "/hooks/echo/decorate", envelope("decorator_attachments"));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      labels: { decorated: "true", stale: null },
      status: { attachments: ["team-a/web-0"] },
      attachments: [{
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web-0", namespace: "team-a" },
        spec: { ports: [{ port: 80 }] },
      }],
    });
  });

  await t.step("decorator request needs `object`, not `parent`", async () => {
    const res = await post(app, "/hooks/echo/decorate", envelope("composite_namespaced"));
    assert.equal(res.status, 400);
    assert.match((await res.json()).error, /^invalid request: object: /);
  });

  await t.step("customize", async () => {
    const res = await post(app, "/hooks/echo/customize", envelope("customize"));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      relatedResources: [{
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        resource: "ipallocations",
        labelSelector: { matchLabels: { "butler.butlerlabs.dev/network-pool": "lab-pool" } },
      }],
    });
  });

  await t.step("admission denial is HTTP 200 with allowed false and the uid echoed", async () => {
    const res = await post(app, "/webhooks/validate/echo", envelope("admission"));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), {
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: {
        uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
        allowed: false,
        status: { code: 403, message: "spec.aws.region: Required value", reason: "Forbidden" },
      },
    });
  });

  await t.step("admission patch is base64 JSONPatch", async () => {
    const review = JSON.parse(envelope("admission"));
    review.request.operation = "UPDATE";
    const res = await post(app, "/webhooks/validate/echo", JSON.stringify(review));
    const body = await res.json();
    assert.equal(body.response.allowed, true);
    assert.equal(body.response.patchType, "JSONPatch");
    assert.deepEqual(JSON.parse(new TextDecoder().decode(decodeBase64(body.response.patch))), [
      { op: "add", path: "/metadata/labels", value: { a: "b" } },
    ]);
  });
});

Deno.test("clock override", async (t) => {
  const clock = () => new Date("2030-05-05T05:05:05Z");
  await t.step("without CLOCK_OVERRIDE the header is ignored", async () => {
    const { app } = createTestApp([echoRoutes], { clockOverride: false, clock });
    const res = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"), {
      [NOW_HEADER]: "2026-11-21T09:00:00Z",
    });
    assert.equal((await res.json()).status.now, "2030-05-05T05:05:05Z");
  });
  await t.step("with CLOCK_OVERRIDE the header replaces the clock", async () => {
    const { app } = createTestApp([echoRoutes], { clockOverride: true, clock });
    const res = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"), {
      [NOW_HEADER]: "2026-11-21T10:00:00+01:00",
    });
    assert.equal((await res.json()).status.now, "2026-11-21T09:00:00Z");
    const plain = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"));
    assert.equal((await plain.json()).status.now, "2030-05-05T05:05:05Z");
  });
  await t.step("a malformed header is 400", async () => {
    const { app } = createTestApp([echoRoutes], { clockOverride: true, clock });
    const res = await post(app, "/hooks/echo/sync", envelope("composite_namespaced"), {
      [NOW_HEADER]: "tomorrow",
    });
    assert.equal(res.status, 400);
    assert.equal(
      (await res.json()).error,
      'invalid X-Butler-Now header: expected an RFC 3339 time, got "tomorrow"',
    );
  });
});

Deno.test("metrics and logs", async (t) => {
  const { app, logs } = createTestApp([echoRoutes]);
  await post(app, "/hooks/echo/sync", envelope("composite_cluster"));
  await post(app, "/hooks/echo/sync", envelope("composite_namespaced"));
  await post(app, "/hooks/echo/sync", "{");
  await post(app, "/nowhere", "{}");
  await post(app, "/hooks/echo/throw", envelope("composite_namespaced"));

  await t.step("Prometheus exposition counts requests by route and status", async () => {
    const res = await app.request("/metrics");
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    assert.match(text, /^# TYPE butler_http_requests_total counter$/m);
    assert.match(
      text,
      /^butler_http_requests_total\{route="\/hooks\/echo\/sync",method="POST",status="200"\} 2$/m,
    );
    assert.match(
      text,
      /^butler_http_requests_total\{route="\/hooks\/echo\/sync",method="POST",status="400"\} 1$/m,
    );
    assert.match(text, /^butler_http_requests_total\{route="unmatched",method="POST",status="404"\} 1$/m);
    assert.match(
      text,
      /^butler_http_requests_total\{route="\/hooks\/echo\/throw",method="POST",status="500"\} 1$/m,
    );
    assert.match(text, /^# TYPE butler_http_request_duration_seconds histogram$/m);
    assert.match(text, /^butler_http_request_duration_seconds_count\{route="\/hooks\/echo\/sync"\} 3$/m);
    assert.match(
      text,
      /^butler_http_request_duration_seconds_bucket\{le="\+Inf",route="\/hooks\/echo\/sync"\} 3$/m,
    );
  });

  await t.step("one JSON log line per request, with the parent and never a body", () => {
    assert.equal(logs.length, 6);
    assert.equal(logs[5]!.route, "/metrics");
    assert.deepEqual(logs[0]!.parent, { kind: "Tenant", namespace: undefined, name: "acme" });
    assert.deepEqual(logs[1]!.parent, { kind: "Widget", namespace: "team-a", name: "w1" });
    assert.equal(logs[2]!.status, 400);
    assert.equal(logs[3]!.route, "unmatched");
    assert.equal(logs[4]!.status, 500);
    assert.match(String(logs[4]!.error), /boom/);
    const all = JSON.stringify(logs);
    assert.doesNotMatch(all, /U0VDUkVULU1BUktFUg|registry|w1-config/);
    for (const l of logs) assert.equal(typeof l.durationMs, "number");
  });
});
