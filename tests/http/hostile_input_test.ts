/**
 * Hostile or broken input through the real app: error bodies never quote request content (Metacontroller copies
 * them into logs and Events), a status that is not an object is refused instead of spread, and logged names are
 * capped.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const { app, logs } = createTestApp(HOOK_ROUTES);
const fixtures = new URL("../fixtures", import.meta.url).pathname;

async function post(route: string, body: string): Promise<{ status: number; text: string }> {
  const res = await app.request(route, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** Every run of `n` characters of `source` that appears in `text`. */
function quoted(source: string, text: string, n: number): string[] {
  const found = new Set<string>();
  for (let i = 0; i + n <= source.length; i++) {
    const window = source.slice(i, i + n);
    if (text.includes(window)) found.add(window);
  }
  return [...found];
}

Deno.test("a malformed body is refused without quoting any of it", async () => {
  const request = await Deno.readTextFile(`${fixtures}/providerconfig/sync/aws-us-east/request.json`);
  const secret = "U0VDUkVULU1BUktFUi0xMjM0";
  const at = request.indexOf(secret);
  assert.ok(at > 0);
  // The case that leaked: one byte missing right next to a Secret value.
  const broken = request.slice(0, at - 1) + request.slice(at);
  const first = await post("/hooks/providerconfig/sync", broken);
  assert.equal(first.status, 400);
  assert.deepEqual(quoted(broken, first.text, 6), []);
  assert.match(
    JSON.parse(first.text).error,
    /^malformed JSON( at character \d+ of \d+|: the body \(\d+ characters\) is not a JSON document)$/,
  );

  // Any one byte removed or truncation: whatever the parser says, no 6 characters of the body come back.
  await fc.assert(
    fc.asyncProperty(fc.nat({ max: request.length - 1 }), fc.boolean(), async (i, truncate) => {
      const body = truncate ? request.slice(0, i) : request.slice(0, i) + request.slice(i + 1);
      const { status, text } = await post("/hooks/providerconfig/sync", body);
      const error = JSON.parse(text).error as string;
      if (status === 400 && error.startsWith("malformed JSON")) {
        assert.deepEqual(quoted(body, error, 6), [], error);
      }
    }),
    { numRuns: 300, seed: 19 },
  );
});

Deno.test("a previous status that is not an object is refused, not spread", async (t) => {
  const cases = [
    {
      route: "/hooks/ipallocation/finalize",
      file: "ipallocation/finalize/first-pass-released",
      field: "object",
    },
    {
      route: "/hooks/tenantcluster/finalize",
      file: "tenantcluster/finalize/waiting-for-allocations",
      field: "parent",
    },
    { route: "/hooks/networkpool/sync", file: "networkpool/sync/lab-pool-first-grants", field: "object" },
    { route: "/hooks/providerconfig/sync", file: "providerconfig/sync/aws-us-east", field: "object" },
    { route: "/hooks/team/sync", file: "team/sync/platform-team", field: "parent" },
  ];
  for (const c of cases) {
    await t.step(c.file, async () => {
      const request = JSON.parse(await Deno.readTextFile(`${fixtures}/${c.file}/request.json`));
      for (const status of ["Ready", "x".repeat(1 << 20), 7, ["Ready"]]) {
        request[c.field].status = status;
        const res = await post(c.route, JSON.stringify(request));
        assert.equal(res.status, 400);
        const body = JSON.parse(res.text);
        assert.equal(body.problems[0].path, `${c.field}.status`);
        assert.ok(res.text.length < 1000, `answer of ${res.text.length} characters`);
      }
    });
  }
});

Deno.test("logged kind, namespace and name are capped", async () => {
  const request = JSON.parse(await Deno.readTextFile(`${fixtures}/team/sync/platform-team/request.json`));
  request.parent.metadata.name = "n".repeat(100_000);
  logs.length = 0;
  await post("/hooks/team/sync", JSON.stringify(request));
  const line = JSON.stringify(logs.at(-1));
  assert.ok(line.length < 1000, `log line of ${line.length} characters`);
  assert.match(line, /n…\(\+99747\)/);
});

Deno.test("related objects are checked as JSON objects only, and a malformed one never breaks a hook", async (t) => {
  const cases = [
    { route: "/hooks/networkpool/sync", file: "networkpool/sync/released-grant-dropped" },
    { route: "/hooks/ipallocation/sync", file: "ipallocation/sync/allocated" },
    { route: "/hooks/tenantcluster/sync", file: "tenantcluster/sync/elastic-growth-3-pending-1-in-flight" },
    { route: "/hooks/providerconfig/sync", file: "providerconfig/sync/aws-us-east" },
    { route: "/hooks/team/sync", file: "team/sync/platform-team" },
  ];
  for (const c of cases) {
    await t.step(c.file, async () => {
      const text = await Deno.readTextFile(`${fixtures}/${c.file}/request.json`);
      const groups = Object.keys(JSON.parse(text).related);
      assert.ok(groups.length, "the fixture relates something");
      for (const group of groups) {
        for (const bad of ["an object", 7, null, ["x"]]) {
          const request = JSON.parse(text);
          request.related[group]["team-x/bad"] = bad;
          const res = await post(c.route, JSON.stringify(request));
          assert.equal(res.status, 400, `${group}: ${JSON.stringify(bad)}`);
          assert.equal(
            JSON.parse(res.text).problems[0].path,
            `related[${JSON.stringify(group)}]["team-x/bad"]`,
          );
        }
        for (const odd of [{}, { metadata: 7 }, { metadata: { uid: 7, name: [] }, spec: "x", status: "y" }]) {
          const request = JSON.parse(text);
          request.related[group]["team-x/odd"] = odd;
          const res = await post(c.route, JSON.stringify(request));
          assert.equal(res.status, 200, `${group}: ${JSON.stringify(odd)}: ${res.text.slice(0, 300)}`);
        }
      }
    });
  }
});
