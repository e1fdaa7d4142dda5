import assert from "node:assert/strict";
import {
  ALLOWED_VERSION_PATTERN,
  isVersion,
  normalizeVersion,
  VERSION_PATTERN,
  versionAllowed,
} from "./mod.ts";

Deno.test("both version forms mean the same version", async (t) => {
  await t.step("forms accepted", () => {
    for (const v of ["1.30.4", "v1.30.4", "v1.31.10"]) assert.ok(isVersion(v), v);
    for (const v of ["1.30", "v1.30.x", "latest", "V1.30.4", "v1.30.4-rc.1", " 1.30.4"]) {
      assert.ok(!isVersion(v), v);
    }
  });
  await t.step("normalised with the v", () => {
    assert.equal(normalizeVersion("1.30.4"), "v1.30.4");
    assert.equal(normalizeVersion("v1.30.4"), "v1.30.4");
  });
  await t.step("allowed lists: exact and wildcard, either form", () => {
    assert.ok(versionAllowed("v1.30.4", ["1.30.4"]));
    assert.ok(versionAllowed("1.30.4", ["v1.30.4"]));
    assert.ok(versionAllowed("v1.30.9", ["1.29.x", "1.30.x"]));
    assert.ok(versionAllowed("1.30.9", ["v1.30.x"]));
    assert.ok(!versionAllowed("v1.31.0", ["1.30.x"]));
    assert.ok(!versionAllowed("v1.3.0", ["1.30.x"]), "1.3.0 is not in 1.30.x");
    assert.ok(!versionAllowed("v1.300.0", ["1.30.x"]), "1.300.0 is not in 1.30.x");
    assert.ok(versionAllowed("v1.31.0", []), "an empty list allows all");
  });
  await t.step("the CRDs use these patterns", async () => {
    const tc = await Deno.readTextFile(new URL("../../manifests/crds/tenantclusters.yaml", import.meta.url));
    const team = await Deno.readTextFile(new URL("../../manifests/crds/teams.yaml", import.meta.url));
    assert.ok(tc.includes(`pattern: '${VERSION_PATTERN}'`));
    // One schema, shared by the team's and each environment's clusterDefaults (a YAML anchor).
    assert.equal(team.split(`pattern: '${VERSION_PATTERN}'`).length - 1, 1);
    assert.match(team, /clusterDefaults: \*clusterDefaults/);
    assert.ok(team.includes(`pattern: '${ALLOWED_VERSION_PATTERN}'`));
  });
});
