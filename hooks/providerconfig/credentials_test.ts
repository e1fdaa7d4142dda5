import assert from "node:assert/strict";
import { checkCredentials, REQUIRED_KEYS, requiredKeys, usesKey } from "./credentials.ts";
import type { Provider } from "../../lib/api/mod.ts";

const ref = { namespace: "butler-system", name: "creds" };
const value = "U0VDUkVU";

Deno.test("credentialsRef.key renames the key of single-key providers only", async (t) => {
  await t.step("which providers use it", () => {
    const using = (Object.keys(REQUIRED_KEYS) as Provider[]).filter(usesKey).sort();
    assert.deepEqual(using, ["gcp", "harvester"]);
  });
  await t.step("harvester with key: the named key is required, the default one is not", () => {
    assert.deepEqual(checkCredentials("harvester", ref, { data: { kubeconfig2: value } }, "kubeconfig2"), {
      ok: true,
    });
    assert.deepEqual(checkCredentials("harvester", ref, { data: { kubeconfig: value } }, "kubeconfig2"), {
      ok: false,
      reason: "MissingKeys",
      message: "secret missing required keys: [kubeconfig2]",
    });
  });
  await t.step("gcp with key", () => {
    assert.deepEqual(requiredKeys("gcp", "sa.json"), [["sa.json"]]);
  });
  await t.step("aws ignores key and needs its two keys", () => {
    assert.deepEqual(requiredKeys("aws", "x"), REQUIRED_KEYS.aws);
    assert.equal(
      checkCredentials("aws", ref, { data: { x: value } }, "x").ok,
      false,
    );
  });
});
