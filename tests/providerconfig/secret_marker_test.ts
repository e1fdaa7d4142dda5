/**
 * No Secret value may appear in a response, a status, a condition or a log line. The ProviderConfig fixtures
 * carry Secrets whose every value is a marker; every fixture is posted through the real app and the marker,
 * encoded or decoded, must appear nowhere in what the service answers or logs.
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createTestApp, discoverGoldenCases, runGoldenCase } from "../../lib/testing/mod.ts";

const ENCODED = "U0VDUkVULU1BUktFUi0xMjM0";
const DECODED = atob(ENCODED);

Deno.test("no Secret value leaves the service", async () => {
  const { app, logs } = createTestApp(HOOK_ROUTES);
  const cases = discoverGoldenCases(new URL("../fixtures", import.meta.url).pathname)
    .filter((c) => c.kind === "providerconfig" && c.hook !== "admission");
  let sawSecret = 0;
  for (const c of cases) {
    const request = Deno.readTextFileSync(`${c.dir}/request.json`);
    if (request.includes(ENCODED)) sawSecret++;
    const { status, body } = await runGoldenCase(app, c);
    assert.equal(status, 200);
    const text = JSON.stringify(body);
    assert.ok(!text.includes(ENCODED) && !text.includes(DECODED), `${c.hook}/${c.name} leaks the marker`);
  }
  assert.ok(sawSecret >= 10, "the fixtures do carry marked Secrets");
  const logged = JSON.stringify(logs);
  assert.equal(logs.length, cases.length);
  assert.ok(!logged.includes(ENCODED) && !logged.includes(DECODED));
});
