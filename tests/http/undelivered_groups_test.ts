/**
 * An absent or `null` group means "not delivered", never "none": Metacontroller sends every declared child type
 * and every related rule's group (empty as `{}`), so a hook that read a missing group as empty would drop a
 * pool's grants or delete children. Every sync and finalize fixture is replayed with each group its hook needs
 * removed, then set to `null`: the call must fail with a 400 naming that group.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { relatedTypes } from "../../lib/butler/mod.ts";
import { groupKey } from "../../lib/contract/mod.ts";
import { createTestApp, discoverGoldenCases, runGoldenCase } from "../../lib/testing/mod.ts";

const { app } = createTestApp(HOOK_ROUTES);
const root = new URL("../fixtures", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Json = any;

/** The groups a hook needs for one request: the related groups its customize hook asks for, and child types. */
/**
 * Related groups a hook reads as advice, not as state it could lose: a pool's sync reads the other NetworkPools
 * only to report an overlap (admission refuses overlapping pools), and Metacontroller may keep a customize answer
 * from before that rule for 20 minutes after an upgrade. Until it is delivered, no overlap is known; no grant or
 * child depends on it.
 */
const ADVISORY: Readonly<Record<string, readonly string[]>> = {
  networkpool: [groupKey({ apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "NetworkPool" })],
};

async function neededGroups(kind: string, request: Json): Promise<{ field: string; key: string }[]> {
  const parent = request.parent ?? request.object;
  const res = await app.request(`/hooks/${kind}/customize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ controller: request.controller, parent }),
  });
  assert.equal(res.status, 200);
  const { relatedResources } = await res.json();
  const asked = new Set(relatedTypes(relatedResources).map(groupKey));
  const related = Object.keys(request.related ?? {})
    .filter((key) => asked.has(key) && !ADVISORY[kind]?.includes(key))
    .map((key) => ({ field: "related", key }));
  const children = Object.keys(request.children ?? {}).map((key) => ({ field: "children", key }));
  return [...related, ...children];
}

async function post(route: string, body: Json): Promise<{ status: number; body: Json }> {
  const res = await app.request(route, {
    method: "POST",
    headers: { "content-type": "application/json", "X-Butler-Now": "2026-01-01T00:00:00Z" },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("a group that is absent or null fails the call; it never reads as empty", async (t) => {
  // An IPAllocation's finalize reads no group: it only marks the allocation released.
  const cases = discoverGoldenCases(root).filter((c) =>
    (c.hook === "sync" || c.hook === "finalize") && !(c.kind === "ipallocation" && c.hook === "finalize")
  );
  let checked = 0;
  for (const c of cases) {
    const request = JSON.parse(await Deno.readTextFile(`${c.dir}/request.json`));
    const needed = await neededGroups(c.kind, request);
    if (!needed.length) continue;
    await t.step(`${c.kind}/${c.hook}/${c.name}`, async () => {
      for (const { field, key } of needed) {
        for (const value of [undefined, null]) {
          const broken = structuredClone(request);
          if (value === undefined) delete broken[field][key];
          else broken[field][key] = null;
          const { status, body } = await post(c.route, broken);
          assert.equal(status, 400, `${field}[${key}] = ${value}: ${JSON.stringify(body).slice(0, 300)}`);
          assert.deepEqual(body.problems, [{
            path: `${field}[${JSON.stringify(key)}]`,
            message: `group ${key} not delivered`,
          }]);
          checked++;
        }
      }
    });
  }
  // Every hook with related groups or children is covered (a filter that matched nothing would pass silently).
  assert.ok(checked > 100, `only ${checked} cases checked`);
});

Deno.test("the pool ledger survives a missing IPAllocation group", async (t) => {
  const dir = `${root}/networkpool/sync/fragmentation`;
  const request = JSON.parse(await Deno.readTextFile(`${dir}/request.json`));
  const expected = JSON.parse(await Deno.readTextFile(`${dir}/response.json`));
  // The answer to the same request with its grants recorded, then the group withdrawn.
  const granted = structuredClone(request);
  granted.object.status = expected.status;
  granted.object.metadata.annotations = { ...granted.object.metadata.annotations, ...expected.annotations };
  const key = "IPAllocation.butler.butlerlabs.dev/v1alpha1";
  assert.ok(expected.status.allocationCount > 0);
  for (const [what, value] of [["absent", undefined], ["null", null], ["empty", {}]] as const) {
    await t.step(what, async () => {
      const broken = structuredClone(granted);
      if (value === undefined) delete broken.related[key];
      else broken.related[key] = value;
      const { status, body } = await post("/hooks/networkpool/sync", broken);
      if (what === "empty") {
        // Delivered and empty: every IPAllocation is gone, so releasing the grants is right.
        assert.equal(status, 200);
        assert.equal(body.status.allocationCount, 0);
      } else {
        assert.equal(status, 400);
        assert.match(body.error, /not delivered/);
        assert.equal(body.status, undefined);
      }
    });
  }
  // The same request answered normally keeps its grants (the control for the steps above).
  const { status, body } = await runGoldenCase(app, {
    kind: "networkpool",
    hook: "sync",
    name: "lab-pool-first-grants",
    dir,
    route: "/hooks/networkpool/sync",
  });
  assert.equal(status, 200);
  assert.ok(body && (body as Json).status.allocationCount > 0);
});
