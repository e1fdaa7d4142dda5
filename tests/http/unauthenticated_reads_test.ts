/**
 * No review the service cannot authenticate makes it list anything from the API (issue #55, item 5: a 626-byte
 * forged NetworkPool DELETE made it LIST every IPAllocation, unpaginated). Every admission fixture, and generated
 * variations of each (another operation, an old object or none, a dry run), is replayed unauthenticated through
 * a reader that records every read: each list must be of a collection the admission watch cache keeps, and none
 * may be read live (a list a decision would read live is read from the cache as it is).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { ADMISSION_CACHE } from "../../lib/api/mod.ts";
import type { KubeClient, ReadOptions } from "../../lib/kube/mod.ts";
import { createTestApp, discoverGoldenCases, fixtureReader } from "../../lib/testing/mod.ts";

const root = new URL("../fixtures", import.meta.url).pathname;
const cases = discoverGoldenCases(root).filter((c) => c.hook === "admission");

/** Whether a collection path is one the admission cache keeps (`/apis/g/v/[namespaces/ns/]resource`). */
function cached(path: string): boolean {
  const m = /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)(?:\/namespaces\/[^/]+)?\/([^/?]+)$/.exec(path);
  return !!m && ADMISSION_CACHE.some((c) => c.prefix === m[1] && c.resource === m[2]);
}

/** The fixture's reader, recording every list read and how. */
function recording(dir: string): { kube: KubeClient; lists: { path: string; options: ReadOptions }[] } {
  const inner = fixtureReader(dir);
  const lists: { path: string; options: ReadOptions }[] = [];
  return {
    lists,
    kube: {
      get: (path, options) => inner.get(path, options),
      list: (path, options = {}) => {
        lists.push({ path, options });
        // A list the fixture does not hold is an empty one here: the test is about how it is read.
        return inner.list(path, options).catch(() => []);
      },
      write: (method, path, body) => inner.write(method, path, body),
    },
  };
}

async function replay(dir: string, request: Record<string, unknown>) {
  const { kube, lists } = recording(dir);
  const { app } = createTestApp(HOOK_ROUTES, { kube, admissionWrites: false });
  const kind = dir.split("/").at(-3)!;
  const res = await app.request(`/webhooks/validate/${kind}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  await res.body?.cancel();
  return lists;
}

function assertBounded(lists: { path: string; options: ReadOptions }[], what: string): void {
  for (const { path, options } of lists) {
    assert.ok(cached(path), `${what}: lists ${path}, which the admission cache does not keep`);
    assert.ok(!options.live, `${what}: lists ${path} live`);
  }
}

Deno.test("an unauthenticated review lists nothing from the API: every fixture", async (t) => {
  assert.ok(cases.length >= 40, `${cases.length} admission fixtures`);
  for (const c of cases) {
    await t.step(`${c.kind}/${c.name}`, async () => {
      const review = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
      assertBounded(await replay(c.dir, review), c.name);
    });
  }
});

Deno.test("an unauthenticated review lists nothing from the API: generated variations", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...cases),
      fc.constantFrom("CREATE", "UPDATE", "DELETE"),
      fc.boolean(),
      fc.boolean(),
      async (c, operation, keepOld, dryRun) => {
        const review = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
        const r = review.request;
        r.operation = operation;
        r.dryRun = dryRun;
        if (operation === "DELETE") {
          r.oldObject = r.oldObject ?? r.object;
          r.object = null;
        } else if (operation === "UPDATE") r.oldObject = keepOld ? (r.oldObject ?? r.object) : r.object;
        else r.oldObject = null;
        r.object ??= r.oldObject;
        if (operation === "DELETE") r.object = null;
        assertBounded(await replay(c.dir, review), `${c.name} as ${operation}`);
      },
    ),
    { numRuns: 300 },
  );
});
