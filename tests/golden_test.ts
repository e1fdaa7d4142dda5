import { HOOK_ROUTES } from "../hooks/mod.ts";
import { createTestApp, fixtureReader, registerGoldenTests } from "../lib/testing/mod.ts";

const { app } = createTestApp(HOOK_ROUTES);
// Admission cases read the API: each gets an app whose reads come from its own reads.json.
registerGoldenTests(
  new URL("./fixtures", import.meta.url).pathname,
  app,
  (c) => c.hook === "admission" ? createTestApp(HOOK_ROUTES, { kube: fixtureReader(c.dir) }).app : app,
);
