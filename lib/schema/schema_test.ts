import assert from "node:assert/strict";
import fc from "fast-check";
import { readInstall } from "../plan/mod.ts";
import {
  celErrors,
  crdKinds,
  formatFieldError,
  judge,
  listTypeErrors,
  type ManifestObject,
  type Schema,
  unknownFields,
  validateSchema,
  withDefaults,
} from "./mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const KINDS = crdKinds(readInstall(ROOT));
const words = (s: Schema, v: unknown, path = "spec.x") => validateSchema(s, v, path).map(formatFieldError);

Deno.test("the OpenAPI checks, in the API server's words", async (t) => {
  await t.step("type, with the JSON type found", () => {
    assert.deepEqual(words({ type: "integer" }, "three"), [
      'spec.x: Invalid value: "string": spec.x in body must be of type integer: "string"',
    ]);
    assert.deepEqual(words({ type: "integer" }, 3), []);
    assert.deepEqual(words({ type: "number" }, 3), [], "an integer is a number");
    assert.deepEqual(words({ type: "integer" }, 1.5), [
      'spec.x: Invalid value: "number": spec.x in body must be of type integer: "number"',
    ]);
  });
  await t.step("enum, bounds, lengths, pattern, items, required", () => {
    assert.deepEqual(words({ type: "string", enum: ["a", "b"] }, "c"), [
      'spec.x: Unsupported value: "c": supported values: "a", "b"',
    ]);
    assert.deepEqual(words({ type: "integer", minimum: 1 }, 0), [
      "spec.x: Invalid value: 0: spec.x in body should be greater than or equal to 1",
    ]);
    assert.deepEqual(words({ type: "integer", maximum: 128 }, 129), [
      "spec.x: Invalid value: 129: spec.x in body should be less than or equal to 128",
    ]);
    assert.deepEqual(words({ type: "string", maxLength: 3 }, "abcd"), [
      "spec.x: Too long: may not be more than 3 bytes",
    ]);
    assert.deepEqual(words({ type: "string", maxLength: 3 }, "äöü"), [], "characters, not bytes");
    assert.deepEqual(words({ type: "string", minLength: 1 }, ""), [
      'spec.x: Invalid value: "": spec.x in body should be at least 1 chars long',
    ]);
    assert.deepEqual(words({ type: "string", pattern: "^v\\d+$" }, "x1"), [
      `spec.x: Invalid value: "x1": spec.x in body should match '^v\\d+$'`,
    ]);
    assert.deepEqual(words({ type: "array", maxItems: 1, items: { type: "string" } }, ["a", "b"]), [
      "spec.x: Too many: 2: must have at most 1 item",
    ]);
    assert.deepEqual(words({ type: "object", required: ["cidr"] }, {}), ["spec.x.cidr: Required value"]);
    assert.deepEqual(words({ type: "string" }, null), [
      'spec.x: Invalid value: "null": spec.x in body must be of type string: "null"',
    ]);
  });
  await t.step("int-or-string: the type, then anyOf and its best branch", () => {
    const s: Schema = {
      "x-kubernetes-int-or-string": true,
      anyOf: [{ type: "integer" }, { type: "string" }],
    };
    assert.deepEqual(words(s, "4Gi"), []);
    assert.deepEqual(words(s, 4), []);
    assert.deepEqual(words(s, true), [
      'spec.x: Invalid value: "boolean": spec.x in body must be of type integer,string: "boolean"',
      '<nil>: Invalid value: "": "spec.x" must validate at least one schema (anyOf)',
      'spec.x: Invalid value: "boolean": spec.x in body must be of type integer: "boolean"',
    ]);
  });
});

Deno.test("list types: duplicates of sets and of map keys", () => {
  const set: Schema = { type: "array", "x-kubernetes-list-type": "set", items: { type: "string" } };
  assert.deepEqual(listTypeErrors(set, ["a", "b", "a"], "spec.x").map(formatFieldError), [
    'spec.x[2]: Duplicate value: "a"',
  ]);
  const map: Schema = {
    type: "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["name"],
    items: { type: "object", properties: { name: { type: "string" } } },
  };
  assert.deepEqual(
    listTypeErrors(map, [{ name: "a", v: 1 }, { name: "a", v: 2 }], "spec.x").map(formatFieldError),
    [
      'spec.x[1]: Duplicate value: {"name":"a"}',
    ],
  );
  assert.deepEqual(listTypeErrors(map, ["a"], "spec.x").map(formatFieldError), [
    'spec.x[0]: Invalid value: "a": must be an object for an array of list-type map',
  ]);
});

Deno.test("unknown fields and defaults", () => {
  const s: Schema = {
    type: "object",
    properties: {
      metadata: { type: "object" },
      spec: {
        type: "object",
        properties: {
          scope: {
            type: "object",
            default: {},
            properties: { type: { type: "string", default: "platform" } },
          },
          free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
          labels: { type: "object", additionalProperties: { type: "string" } },
        },
      },
    },
  };
  assert.deepEqual(
    unknownFields(s, {
      metadata: { name: "a", labelz: {} },
      spec: { scoep: 1, free: { any: 1 }, labels: { k: "v" } },
    }),
    ["metadata.labelz", "spec.scoep"],
  );
  assert.deepEqual(withDefaults(s, { spec: {} }), { spec: { scope: { type: "platform" } } });
  assert.deepEqual(withDefaults(s, { spec: { scope: { type: "team" } } }), {
    spec: { scope: { type: "team" } },
  });
});

Deno.test("CEL rules with the Kubernetes library, failing in the API server's words", async (t) => {
  const quantity: Schema = {
    "x-kubernetes-int-or-string": true,
    "x-kubernetes-validations": [{
      rule: "type(self) == int ? self >= 0 : isQuantity(self) && !quantity(self).isLessThan(quantity('0'))",
      message: "must be a non-negative Kubernetes quantity",
    }],
  };
  await t.step("quantities: a scalar's value is printed", () => {
    assert.deepEqual(celErrors(quantity, "480Gi", "spec.m"), []);
    assert.deepEqual(celErrors(quantity, 3, "spec.m"), [], "an int-or-string number is an int");
    assert.deepEqual(celErrors(quantity, "480GB", "spec.m").map(formatFieldError), [
      'spec.m: Invalid value: "480GB": must be a non-negative Kubernetes quantity',
    ]);
    assert.deepEqual(celErrors(quantity, "-1", "spec.m").length, 1);
    assert.deepEqual(celErrors(quantity, " 1", "spec.m").length, 1, "no spaces, as Kubernetes parses");
  });
  await t.step("reason and fieldPath; an object's value is omitted; no message: the rule", () => {
    const s: Schema = {
      type: "object",
      "x-kubernetes-validations": [
        {
          rule: "has(self.region)",
          message: "region is required",
          reason: "FieldValueRequired",
          fieldPath: ".region",
        },
        { rule: "!has(self.legacy)", reason: "FieldValueForbidden", message: "legacy is gone" },
        { rule: "size(self) < 3" },
      ],
    };
    assert.deepEqual(celErrors(s, { legacy: 1, a: 2, b: 3 }, "spec.aws").map(formatFieldError), [
      "spec.aws.region: Required value: region is required",
      "spec.aws: Forbidden: legacy is gone",
      "spec.aws: Invalid value: failed rule: size(self) < 3",
    ]);
  });
  await t.step("optionals, as the admission policies write them", () => {
    const s: Schema = {
      type: "object",
      "x-kubernetes-validations": [{
        rule: "self.?scope.?teamRef.?name.orValue('') != 'x'",
        message: "not x",
      }],
    };
    assert.deepEqual(celErrors(s, { scope: { teamRef: { name: "x" } } }, "spec").length, 1);
    assert.deepEqual(celErrors(s, { scope: {} }, "spec"), []);
  });
  await t.step("transition rules run on an update only", () => {
    const s: Schema = {
      type: "object",
      "x-kubernetes-validations": [{ rule: "self == oldSelf", message: "immutable" }],
    };
    assert.deepEqual(celErrors(s, { a: 1 }, "spec"), []);
    assert.deepEqual(celErrors(s, { a: 1 }, "spec", { a: 1 }), []);
    assert.deepEqual(celErrors(s, { a: 2 }, "spec", { a: 1 }).map(formatFieldError), [
      "spec: Invalid value: immutable",
    ]);
  });
});

Deno.test("judge: a create as the API server judges it", async (t) => {
  const pool = (spec: unknown, extra: Record<string, unknown> = {}): ManifestObject => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name: "p", namespace: "butler-system" },
    spec,
    ...extra,
  });
  await t.step("admitted: defaulted, status not taken on a create", () => {
    const v = judge(
      KINDS,
      pool({ cidr: "10.40.0.0/24", tenantAllocation: { start: "10.40.0.10", end: "10.40.0.99" } }, {
        status: { totalIPs: 5 },
      }),
    );
    assert.ok(v.ok);
    assert.equal(
      (v.object.spec as { tenantAllocation: { defaults: unknown } }).tenantAllocation.defaults,
      undefined,
    );
    assert.equal(v.object.status, undefined);
  });
  await t.step("a blocking error stops the CEL rules, and says so", () => {
    const v = judge(KINDS, pool({}));
    assert.equal(v.ok, false);
    assert.match(
      !v.ok ? v.message : "",
      /spec\.cidr: Required value; <nil>: Invalid value: null: some validation rules were not checked/,
    );
  });
  await t.step("strict field validation, and an unserved version", () => {
    const typo = judge(KINDS, pool({ cidr: "10.40.0.0/24", cdir: "x" }));
    assert.equal(
      !typo.ok && typo.message,
      'NetworkPool in version "v1alpha1" cannot be handled as a NetworkPool: strict decoding error: unknown field "spec.cdir"',
    );
    const v2 = judge(KINDS, {
      ...pool({ cidr: "10.40.0.0/24" }),
      apiVersion: "butler.butlerlabs.dev/v1alpha2",
    });
    assert.equal(
      !v2.ok && v2.message,
      'no matches for kind "NetworkPool" in version "butler.butlerlabs.dev/v1alpha2"',
    );
  });
  await t.step("no input throws: every verdict is admitted or refused in words", () => {
    const json = fc.jsonValue({ maxDepth: 4 });
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.constantFrom("cidr", "gateway", "prefix", "reserved", "tenantAllocation", "x"),
          json,
        ),
        (spec) => {
          const v = judge(KINDS, pool(spec));
          assert.ok(v.ok || v.message.length > 0);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
