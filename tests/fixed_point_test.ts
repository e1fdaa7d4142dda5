import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../hooks/mod.ts";
import { NOW_HEADER } from "../lib/http/mod.ts";
import { createTestApp, discoverGoldenCases } from "../lib/testing/mod.ts";

const { app } = createTestApp(HOOK_ROUTES);
const root = new URL("./fixtures", import.meta.url).pathname;
const cases = discoverGoldenCases(root).filter((c) =>
  ["networkpool", "ipallocation", "providerconfig", "team", "tenantcluster"].includes(c.kind) &&
  c.hook === "sync"
);

async function post(route: string, body: unknown, now: string) {
  const res = await app.request(route, {
    method: "POST",
    headers: { "content-type": "application/json", [NOW_HEADER]: now },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200);
  return await res.json();
}

Deno.test("hooks are fixed points: their status (labels, annotations) fed back give the same answer, an hour later", async (t) => {
  assert.ok(cases.length >= 30);
  for (const c of cases) {
    await t.step(`${c.kind}/${c.name}`, async () => {
      const request = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
      const first = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
      const parent = request.object ?? request.parent;
      const feed = (answer: typeof first) => {
        parent.status = answer.status;
        if (answer.labels) parent.metadata.labels = { ...parent.metadata.labels, ...answer.labels };
        if (answer.annotations) {
          parent.metadata.annotations = { ...parent.metadata.annotations, ...answer.annotations };
        }
      };
      feed(first);
      // TenantCluster decisions are time-based (30 s, 10 min), and so are a pool's release cooldown and a
      // ProviderConfig's held capacity change (30 s): their fixed point is at the same instant.
      const timed = c.kind === "tenantcluster" || (parent.spec?.releaseCooldownSeconds ?? 0) > 0 ||
        (c.kind === "providerconfig" && first.resyncAfterSeconds !== undefined);
      const now = timed ? Deno.readTextFileSync(`${c.dir}/now`).trim() : "2026-11-21T10:00:00Z";
      let settled = first;
      // An IPAllocation records its grant first and reports it once the record is on it: two answers to settle.
      if (first.annotations?.["butler.butlerlabs.dev/grant"]) {
        settled = await post(c.route, request, now);
        feed(settled);
      }
      const second = await post(c.route, request, now);
      assert.deepStrictEqual(second, settled);
    });
  }
});
