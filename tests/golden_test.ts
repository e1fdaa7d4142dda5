import { HOOK_ROUTES } from "../hooks/mod.ts";
import { createTestApp, registerGoldenTests } from "../lib/testing/mod.ts";

const { app } = createTestApp(HOOK_ROUTES);
registerGoldenTests(new URL("./fixtures", import.meta.url).pathname, app);
