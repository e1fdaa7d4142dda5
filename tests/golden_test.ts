import { HOOK_ROUTES } from "../hooks/mod.ts";
import assert from "node:assert/strict";
import {
  createTestApp,
  discoverGoldenCases,
  fixtureReader,
  registerGoldenTests,
  updatingGoldens,
} from "../lib/testing/mod.ts";

const { app } = createTestApp(HOOK_ROUTES);
// Admission cases read (and the quota ledger writes) the API: each gets an app over its own reads.json.
const apis = new Map<string, ReturnType<typeof fixtureReader>>();
registerGoldenTests(
  new URL("./fixtures", import.meta.url).pathname,
  app,
  (c) => {
    if (c.hook !== "admission") return app;
    const kube = fixtureReader(c.dir);
    apis.set(c.dir, kube);
    return createTestApp(HOOK_ROUTES, { kube }).app;
  },
  (c) => apis.get(c.dir)?.writes ?? [],
);

Deno.test("golden files: never rewritten under CI, and a missing folder is an error", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];
  assert.equal(updatingGoldens(env({})), false);
  assert.equal(updatingGoldens(env({ UPDATE_GOLDEN: "1" })), true);
  assert.throws(() => updatingGoldens(env({ UPDATE_GOLDEN: "1", CI: "true" })), /refused under CI=true/);
  assert.throws(() => discoverGoldenCases("/nonexistent/fixtures"), /not found/);
  // A folder of files and no case folder (the HTTP tests' envelopes).
  assert.throws(
    () => discoverGoldenCases(new URL("./http/envelopes", import.meta.url).pathname),
    /holds no case/,
  );
});
