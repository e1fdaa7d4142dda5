/**
 * The admission adapter's staged decisions against an in-memory API with resourceVersion preconditions: creates
 * of one team in one process that lose a race retry one at a time, two processes meet the precondition and
 * decide again, and the last slot goes to exactly one of them.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { KubeApiError, type KubeClient } from "../../lib/kube/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const NS = "team-t";
const LEDGER = `/api/v1/namespaces/${NS}/configmaps/butler-quota-ledger`;

/** One API server: a Team with `maxClusters`, no TenantClusters stored, the ledger with resourceVersions. */
function memoryApi(maxClusters: number) {
  let ledger: Record<string, unknown> | undefined;
  let rv = 0;
  const stats = { writes: 0, conflicts: 0 };
  const delay = () => new Promise((r) => setTimeout(r, 1)); // reads interleave, as over a network
  const client: KubeClient = {
    async get(path) {
      await delay();
      if (path.endsWith("/teams/t")) return { spec: { access: {}, resourceLimits: { maxClusters } } };
      return path === LEDGER && ledger ? structuredClone(ledger) : undefined;
    },
    async list() {
      await delay();
      return [];
    },
    async write(method, path, body) {
      await delay();
      const b = body as { metadata: { resourceVersion?: string } };
      if (
        method === "POST" ? ledger !== undefined : ledger?.metadata !== undefined &&
          (ledger.metadata as { resourceVersion: string }).resourceVersion !== b.metadata.resourceVersion
      ) {
        stats.conflicts++;
        throw new KubeApiError(409, "Conflict", "the object has been modified", path);
      }
      stats.writes++;
      ledger = { ...b, metadata: { ...b.metadata, resourceVersion: String(++rv) } };
      return ledger;
    },
  };
  return { client, stats, reserved: () => Object.keys((ledger?.data ?? {}) as object).length };
}

function review(name: string): string {
  return JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: name,
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "TenantCluster" },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "tenantclusters" },
      name,
      namespace: NS,
      operation: "CREATE",
      userInfo: { username: "u" },
      object: { metadata: { name, namespace: NS }, spec: { workers: { replicas: 1 } } },
    },
  });
}

async function create(app: ReturnType<typeof createTestApp>["app"], name: string): Promise<boolean> {
  const res = await app.request("/webhooks/validate/tenantcluster", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: review(name),
  });
  assert.equal(res.status, 200);
  return (await res.json()).response.allowed;
}

Deno.test("staged admission decisions", async (t) => {
  await t.step(
    "concurrent creates of one team in one process conflict once at most, then queue",
    async () => {
      const api = memoryApi(100);
      const { app } = createTestApp(HOOK_ROUTES, { kube: api.client });
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create(app, `c${i}`)));
      assert.deepEqual(answers, Array(10).fill(true));
      assert.equal(api.stats.writes, 10);
      // Each of the nine that lost the first race retries in the queue without conflicting again (unqueued
      // retries conflict with each other: about n²/2 in all).
      assert.ok(api.stats.conflicts <= 9, `${api.stats.conflicts} conflicts`);
      assert.equal(api.reserved(), 10);
    },
  );
  await t.step("two processes conflict, decide again, and the last slot goes to one", async () => {
    const api = memoryApi(1);
    const a = createTestApp(HOOK_ROUTES, { kube: api.client }).app;
    const b = createTestApp(HOOK_ROUTES, { kube: api.client }).app;
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b, `c${i}`)),
    );
    assert.equal(answers.filter(Boolean).length, 1);
    assert.equal(api.stats.writes, 1);
    assert.ok(api.stats.conflicts >= 1, "the second process met the precondition");
  });
});
