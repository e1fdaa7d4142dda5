import assert from "node:assert/strict";
import { customizeProviderConfig } from "../../hooks/providerconfig/mod.ts";
import { discoverGoldenCases } from "../../lib/testing/mod.ts";

const root = new URL("../fixtures", import.meta.url).pathname;

Deno.test("the ProviderConfig asks for exactly its credentials Secret, never every Secret", async (t) => {
  const cases = discoverGoldenCases(root).filter((c) =>
    c.kind === "providerconfig" && c.hook !== "customize" && c.hook !== "admission"
  );
  assert.ok(cases.length > 10);
  for (const c of cases) {
    await t.step(c.name, async () => {
      const request = JSON.parse(await Deno.readTextFile(`${c.dir}/request.json`));
      const pc = request.object;
      const rules = customizeProviderConfig({ controller: request.controller, parent: pc }).relatedResources;
      const secrets = rules.filter((r) => r.resource === "secrets");
      const ref = pc.spec?.credentialsRef;
      if (!ref?.name) return assert.deepEqual(secrets, []);
      // A spec that cannot be read asks for no Secret at all rather than for all of them.
      for (const rule of secrets) {
        assert.deepEqual(Object.keys(rule).sort(), ["apiVersion", "names", "namespace", "resource"]);
        assert.deepEqual(rule.names, [ref.name]);
        assert.equal(rule.namespace, ref.namespace ?? pc.metadata.namespace);
      }
    });
  }
});
