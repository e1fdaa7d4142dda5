import assert from "node:assert/strict";
import client from "prom-client";
import { registerBuildInfo, VERSION } from "./mod.ts";

Deno.test("the build's version", async (t) => {
  await t.step("is deno.json's version, a semantic version without a v", () => {
    const config = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)));
    assert.equal(VERSION, config.version);
    assert.match(VERSION, /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/);
  });
  await t.step("is exported as butler_build_info with the component and Deno", async () => {
    const registry = new client.Registry();
    registerBuildInfo(registry, "reporter");
    const text = await registry.metrics();
    assert.match(
      text,
      new RegExp(
        `^butler_build_info\\{version="${VERSION.replaceAll(".", "\\.")}",component="reporter",deno="${
          Deno.version.deno.replaceAll(".", "\\.")
        }"\\} 1$`,
        "m",
      ),
    );
  });
});
