/**
 * Every node of every CRD schema uses only the keys of `JSONSchemaProps` (apiextensions.k8s.io/v1). A YAML slip
 * such as an unquoted comma in a flow mapping (`{ type: boolean, description: a, b }`) turns prose into extra
 * keys, which `kubectl kustomize` passes through and a strict apply refuses. This is the fast, offline twin of
 * the kubectl-validate and real API server checks (`deno task test:api`).
 */
import assert from "node:assert/strict";
import { loadKustomization, type Manifest } from "../lib/testing/mod.ts";

/** The fields of apiextensions.k8s.io/v1 JSONSchemaProps. */
const SCHEMA_KEYS = new Set([
  "id",
  "$schema",
  "$ref",
  "description",
  "type",
  "format",
  "title",
  "default",
  "maximum",
  "exclusiveMaximum",
  "minimum",
  "exclusiveMinimum",
  "maxLength",
  "minLength",
  "pattern",
  "maxItems",
  "minItems",
  "uniqueItems",
  "multipleOf",
  "enum",
  "maxProperties",
  "minProperties",
  "required",
  "items",
  "allOf",
  "oneOf",
  "anyOf",
  "not",
  "properties",
  "additionalProperties",
  "patternProperties",
  "dependencies",
  "additionalItems",
  "definitions",
  "externalDocs",
  "example",
  "nullable",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-embedded-resource",
  "x-kubernetes-int-or-string",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-list-type",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
]);
const RULE_KEYS = new Set(["rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"]);

/** Every problem of one schema node and its sub-schemas, as `path: reason`. */
export function schemaProblems(node: unknown, path: string): string[] {
  if (typeof node !== "object" || node === null || Array.isArray(node)) {
    return [`${path}: not a schema object`];
  }
  const schema = node as Manifest;
  const problems = Object.keys(schema).filter((k) => !SCHEMA_KEYS.has(k)).map((k) =>
    `${path}: unknown key "${k}"`
  );
  for (const [i, rule] of (schema["x-kubernetes-validations"] ?? []).entries()) {
    for (const k of Object.keys(rule)) {
      if (!RULE_KEYS.has(k)) problems.push(`${path}.x-kubernetes-validations[${i}]: unknown key "${k}"`);
    }
  }
  for (const [k, sub] of Object.entries(schema.properties ?? {})) {
    problems.push(...schemaProblems(sub, `${path}.${k}`));
  }
  if (schema.items) problems.push(...schemaProblems(schema.items, `${path}[]`));
  if (typeof schema.additionalProperties === "object") {
    problems.push(...schemaProblems(schema.additionalProperties, `${path}{}`));
  }
  for (const k of ["anyOf", "allOf", "oneOf"]) {
    for (const [i, sub] of (schema[k] ?? []).entries()) {
      problems.push(...schemaProblems(sub, `${path}.${k}[${i}]`));
    }
  }
  return problems;
}

const crds = loadKustomization(new URL("../manifests", import.meta.url).pathname)
  .filter((o) => o.kind === "CustomResourceDefinition");

Deno.test("CRD schemas use only JSONSchemaProps keys", async (t) => {
  await t.step("the check finds a flow mapping broken by a comma", () => {
    const broken = {
      type: "boolean",
      description: "complete and",
      "in ipam mode": null,
      "a pool has room.": null,
    };
    assert.deepEqual(schemaProblems({ type: "object", properties: { ready: broken } }, "status"), [
      'status.ready: unknown key "in ipam mode"',
      'status.ready: unknown key "a pool has room."',
    ]);
  });
  assert.equal(crds.length, 6);
  for (const crd of crds) {
    await t.step(crd.metadata.name, () => {
      for (const v of crd.spec.versions) {
        assert.deepEqual(schemaProblems(v.schema.openAPIV3Schema, `${v.name}`), []);
      }
    });
  }
});
