import assert from "node:assert/strict";
import { computeUsage } from "../hooks/team/usage.ts";
import { TeamSpec } from "../lib/api/mod.ts";
import { ansi, paintFor, plain } from "./colour.ts";
import { renderEnvironments } from "./env_edit.ts";
import { renderUsageText } from "./team_usage.ts";

Deno.test("colour only on a terminal, and never with NO_COLOR", async (t) => {
  await t.step("the rule", () => {
    assert.equal(paintFor(true, undefined), ansi);
    assert.equal(paintFor(true, ""), ansi, "an empty NO_COLOR is unset (no-color.org)");
    assert.equal(paintFor(true, "1"), plain);
    assert.equal(paintFor(false, undefined), plain);
  });
  await t.step("painted text is the plain text with colour codes around the words, columns unmoved", () => {
    const spec = TeamSpec.parse({
      access: { users: [] },
      resourceLimits: { maxClusters: 1 },
      environments: [{ name: "prod", limits: { maxClusters: 1 } }],
    });
    const usage = computeUsage(spec, [{
      metadata: { name: "a", namespace: "team-t", labels: { "butler.butlerlabs.dev/environment": "prod" } },
      spec: {},
    }]);
    const coloured = renderUsageText("t", usage, ansi);
    const ESC = "\x1b";
    assert.ok(coloured.includes(`quota ${ESC}[33mWarning${ESC}[0m:`), coloured);
    assert.ok(coloured.includes(`100%  ${ESC}[33mnear limit${ESC}[0m`), coloured);
    const strip = (s: string) =>
      s.replaceAll(`${ESC}[33m`, "").replaceAll(`${ESC}[32m`, "").replaceAll(`${ESC}[0m`, "");
    assert.equal(strip(coloured), renderUsageText("t", usage));
    const rows = [{ name: "prod", clusters: 1, maxClusters: "1", percent: 100, state: "Warning" }];
    assert.equal(strip(renderEnvironments("t", rows, ansi)), renderEnvironments("t", rows));
    assert.ok(renderEnvironments("t", rows, ansi).includes(`${ESC}[33mWarning${ESC}[0m`));
  });
});
