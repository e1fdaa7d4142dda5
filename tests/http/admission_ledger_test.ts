/**
 * The admission adapter's staged decisions against an in-memory API with resourceVersion preconditions: creates
 * of one team in one process are committed in groups without conflicting, two processes meet the precondition and
 * decide again, and the last slot goes to exactly one of them; for any interleaving, no limit is overshot, every
 * refusal is justified, and none is for contention.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { KubeApiError, type KubeClient } from "../../lib/kube/mod.ts";
import { createTestApp, tenantClusterCreateReview } from "../../lib/testing/mod.ts";
import { DECISION_BUDGET_MS } from "../../lib/http/mod.ts";

const NS = "team-t";
const LEDGER = `/api/v1/namespaces/${NS}/configmaps/butler-quota-ledger`;

/** One API server: a Team with `maxClusters`, no TenantClusters stored, the ledger with resourceVersions. */
function memoryApi(maxClusters: number, ticks?: () => number, initial?: Record<string, string>) {
  let ledger: Record<string, unknown> | undefined = initial &&
    { metadata: { name: "butler-quota-ledger", namespace: NS, resourceVersion: "1" }, data: initial };
  let rv = 0;
  const stats = { writes: 0, conflicts: 0 };
  // Reads interleave, as over a network: a timer, or a scripted number of turns of the event loop.
  const delay = async () => {
    if (!ticks) return await new Promise((r) => setTimeout(r, 1));
    for (let n = ticks(); n > 0; n--) await Promise.resolve();
  };
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

const review = (name: string) =>
  JSON.stringify(
    tenantClusterCreateReview({ metadata: { name, namespace: NS }, spec: { workers: { replicas: 1 } } }),
  );

async function answer(app: ReturnType<typeof createTestApp>["app"], name: string) {
  const res = await app.request("/webhooks/validate/tenantcluster", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: review(name),
  });
  assert.equal(res.status, 200);
  return (await res.json()).response as { allowed: boolean; status?: { code: number; message: string } };
}

async function create(app: ReturnType<typeof createTestApp>["app"], name: string): Promise<boolean> {
  return (await answer(app, name)).allowed;
}

Deno.test("staged admission decisions", async (t) => {
  await t.step(
    "concurrent creates of one team in one process are committed in groups, without a conflict",
    async () => {
      const api = memoryApi(100);
      const { app } = createTestApp(HOOK_ROUTES, { kube: api.client });
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => create(app, `c${i}`)));
      assert.deepEqual(answers, Array(10).fill(true));
      // The first alone, the nine that arrived while its write was in flight together: one write each.
      assert.equal(api.stats.writes, 2);
      assert.equal(api.stats.conflicts, 0);
      assert.equal(api.reserved(), 10);
    },
  );
  await t.step(
    "a group admits in arrival order up to the limit and refuses the rest with the quota's message",
    async () => {
      const api = memoryApi(4);
      const { app } = createTestApp(HOOK_ROUTES, { kube: api.client });
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => answer(app, `c${i}`)));
      assert.deepEqual(answers.map((a) => a.allowed), [true, true, true, true, false, false, false, false]);
      for (const a of answers.slice(4)) {
        assert.equal(a.status?.code, 403);
        assert.equal(
          a.status!.message,
          `spec: Forbidden: team "t" already has 4 cluster(s); team quota limits to 4`,
        );
      }
      assert.equal(api.stats.writes, 2);
    },
  );
  await t.step(
    "a burst that would take the ledger past its bound is refused with a 429 naming it",
    async () => {
      const at = new Date().toISOString();
      const entry = JSON.stringify({ nodes: 1, cpu: "0", memory: "0", storage: "0", at });
      // Reservations in flight (fresh, their clusters not stored yet), with the longest names Kubernetes allows.
      const full = Object.fromEntries(
        Array.from({ length: 740 }, (_, i) => [`${String(i).padStart(3, "0")}${"x".repeat(250)}`, entry]),
      );
      const api = memoryApi(100_000, undefined, full);
      const { app } = createTestApp(HOOK_ROUTES, { kube: api.client });
      const a = await answer(app, "one-more");
      assert.equal(a.allowed, false);
      assert.equal(a.status?.code, 429);
      assert.match(
        a.status!.message,
        /^too many TenantClusters of namespace "team-t" are being admitted at once: the quota ledger \(ConfigMap butler-quota-ledger\) would hold 741 reservations, \d+ bytes, over its bound of 262144 bytes; try again once the clusters admitted are stored$/,
      );
      assert.equal(api.stats.writes, 0);
    },
  );
  await t.step(
    "a refusal decided on a stale cache is decided again on the live Team before it is given",
    async () => {
      const api = memoryApi(5);
      const stale: KubeClient = {
        ...api.client,
        // The cache still holds the Team from before its limit was raised from 0 to 5.
        get: (path, freshness) =>
          path.endsWith("/teams/t") && !freshness?.live
            ? Promise.resolve({ spec: { access: {}, resourceLimits: { maxClusters: 0 } } })
            : api.client.get(path, freshness),
      };
      const { app } = createTestApp(HOOK_ROUTES, { kube: stale });
      assert.equal(await create(app, "raised"), true);
      assert.equal(api.reserved(), 1);
    },
  );
  await t.step(
    "a ledger write the API server takes too long for is answered 429 'try again' in time",
    async () => {
      const api = memoryApi(5);
      const slow: KubeClient = {
        ...api.client,
        write: (method, path, body) =>
          new Promise((r) => setTimeout(r, DECISION_BUDGET_MS + 500)).then(() =>
            api.client.write(method, path, body)
          ),
      };
      const { app } = createTestApp(HOOK_ROUTES, { kube: slow });
      const started = performance.now();
      const a = await answer(app, "slow");
      assert.ok(performance.now() - started < DECISION_BUDGET_MS + 400, "answered within the budget");
      assert.equal(a.allowed, false);
      assert.equal(a.status?.code, 429);
      assert.match(a.status!.message, /did not answer .* in time; try again$/);
      await new Promise((r) => setTimeout(r, 600)); // the abandoned write lands; nothing waits for it
    },
  );
  await t.step(
    "any interleaving of replicas: no overshoot, every refusal justified, none for contention",
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 0, max: 12 }), // maxClusters
          fc.integer({ min: 1, max: 20 }), // creates
          fc.integer({ min: 1, max: 3 }), // replicas
          fc.array(fc.nat({ max: 6 }), { minLength: 1, maxLength: 64 }), // turns each API call waits
          fc.array(fc.nat(), { minLength: 1, maxLength: 20 }), // which replica each create goes to
          async (limit, n, replicas, turns, route) => {
            let i = 0;
            const api = memoryApi(limit, () => turns[i++ % turns.length]!);
            const apps = Array.from(
              { length: replicas },
              () => createTestApp(HOOK_ROUTES, { kube: api.client }).app,
            );
            const answers = await Promise.all(
              Array.from(
                { length: n },
                (_, k) => answer(apps[route[k % route.length]! % replicas]!, `c${k}`),
              ),
            );
            const admitted = answers.filter((a) => a.allowed).length;
            const refusals = answers.filter((a) => !a.allowed);
            assert.ok(admitted <= limit, `${admitted} admitted over a limit of ${limit}`);
            assert.equal(api.reserved(), admitted, "the ledger holds exactly the admitted creates");
            assert.deepEqual(refusals.filter((a) => a.status?.code !== 403), [], "refused for contention");
            // A refusal is justified only when the quota was full: every slot was taken by an admitted create.
            if (refusals.length) assert.equal(admitted, limit);
          },
        ),
        { numRuns: 150 },
      );
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
