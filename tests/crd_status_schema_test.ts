/**
 * The API server prunes status fields its schema does not declare, which would silently break the ledger and
 * the fixed point. Every status field a golden response writes must be declared in the CRD.
 */
import assert from "node:assert/strict";
import { discoverGoldenCases, loadKustomization, type Manifest } from "../lib/testing/mod.ts";

const objects = loadKustomization(new URL("../manifests", import.meta.url).pathname);
const root = new URL("./fixtures", import.meta.url).pathname;

function undeclared(value: unknown, schema: Manifest | undefined, path: string): string[] {
  if (!schema) return [path];
  if (schema["x-kubernetes-preserve-unknown-fields"]) return [];
  if (Array.isArray(value)) return value.flatMap((v, i) => undeclared(v, schema.items, `${path}[${i}]`));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) =>
      undeclared(v, schema.properties?.[k] ?? schema.additionalProperties, `${path}.${k}`)
    );
  }
  return [];
}

for (
  const [kind, plural] of [
    ["networkpool", "networkpools"],
    ["ipallocation", "ipallocations"],
    ["providerconfig", "providerconfigs"],
    ["team", "teams"],
    ["tenantcluster", "tenantclusters"],
  ] as const
) {
  Deno.test(`${kind}: every status field written is declared in the CRD`, () => {
    const crd = objects.find((o) => o.kind === "CustomResourceDefinition" && o.spec.names.plural === plural)!;
    const schema = crd.spec.versions[0].schema.openAPIV3Schema.properties.status;
    const cases = discoverGoldenCases(root).filter((c) =>
      c.kind === kind && c.hook !== "customize" && c.hook !== "admission"
    );
    assert.ok(cases.length > 0);
    for (const c of cases) {
      const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
      assert.deepEqual(undeclared(res.status, schema, "status"), [], c.name);
    }
  });
}
