/**
 * The admission adapter: what the webhooks answer when they cannot read the API. A failed read is an error (the
 * API server then applies the webhook's failurePolicy), never a denial or an approval made up without the facts.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { KubeApiError } from "../../lib/kube/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const root = new URL("../fixtures", import.meta.url).pathname;
const deleteReview = Deno.readTextFileSync(
  `${root}/providerconfig/admission/delete-referenced-by-two-clusters/request.json`,
);
const updateReview = Deno.readTextFileSync(
  `${root}/providerconfig/admission/update-reads-nothing/request.json`,
);

const post = (app: ReturnType<typeof createTestApp>["app"], body: string) =>
  app.request("/webhooks/validate/providerconfig", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });

Deno.test("admission without the API", async (t) => {
  await t.step("a decision that needs a read is a 503 when no API is configured", async () => {
    const res = await post(createTestApp(HOOK_ROUTES).app, deleteReview);
    assert.equal(res.status, 503);
    assert.deepEqual((await res.json()).error, "admission needs the Kubernetes API, and none is configured");
  });
  await t.step("a decision that reads nothing needs no API", async () => {
    const res = await post(createTestApp(HOOK_ROUTES).app, updateReview);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).response.allowed, true);
  });
  await t.step("a failed read is a 503 naming the status, logged with the path", async () => {
    const failing = {
      get: () => Promise.reject(new KubeApiError(403, "Forbidden", "no", "/x")),
      list: (path: string) => Promise.reject(new KubeApiError(403, "Forbidden", "cannot list", path)),
      write: () => Promise.reject(new Error("no write expected")),
    };
    const service = createTestApp(HOOK_ROUTES, { kube: failing });
    const res = await post(service.app, deleteReview);
    assert.equal(res.status, 503);
    assert.equal((await res.json()).error, "cannot reach the API (403 Forbidden); try again");
    assert.match(String(service.logs.at(-1)?.error), /tenantclusters: 403 Forbidden: cannot list/);
  });
});
