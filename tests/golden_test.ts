import { HOOK_ROUTES } from "../hooks/mod.ts";
import { createTestApp, fixtureReader, registerGoldenTests } from "../lib/testing/mod.ts";

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
