/**
 * The stored adversary's generator searches what the shipped roles may write, not a list kept by hand: these tests
 * read the manifests on their own and fail when a writable kind, a free-form place or a bounded field is missed.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { KUBECONFIG_MAX_BYTES } from "../../lib/reporter/views.ts";
import { ROOT } from "../api/cluster.ts";
import {
  atBounds,
  type Context,
  generatePoints,
  KUBECONFIG_BYTES,
  type Obj,
  SLICE_NODE_BYTES,
} from "./generate.ts";
import { toJson, VALUE_SHAPES } from "./shapes.ts";
import { freeFormPaths, type Schema, writableTargets } from "./writable.ts";

const ctx: Context = {
  team: "hostile",
  namespace: "team-hostile",
  providerConfig: "hostile-elastic",
  tenantServer: "https://127.0.0.1:1",
  tenantCa: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
};

/** Every `x-kubernetes-preserve-unknown-fields` below a CRD's spec, read from the YAML text's own structure. */
function preserveCount(schema: unknown): number {
  if (!schema || typeof schema !== "object") return 0;
  const s = schema as Record<string, unknown>;
  return (s["x-kubernetes-preserve-unknown-fields"] ? 1 : 0) +
    Object.entries(s).reduce((n, [, v]) => n + preserveCount(v), 0);
}

/** The string leaves of a schema with a `maxLength` and no pattern, as paths (`[]`: every item). */
function boundedStrings(schema: Schema, path = ""): string[] {
  if (schema.type === "string" && schema.maxLength !== undefined && !schema.pattern && !schema.enum) {
    return [path];
  }
  return [
    ...Object.entries(schema.properties ?? {}).flatMap(([k, s]) =>
      boundedStrings(s, path ? `${path}.${k}` : k)
    ),
    ...(schema.items ? boundedStrings(schema.items, `${path}[]`) : []),
  ];
}

/** The values at a path of `obj` (`[]`: every item). */
function valuesAt(obj: unknown, path: string): unknown[] {
  const [head, ...rest] = path.split(".");
  if (head === undefined || head === "") return [obj];
  const key = head.replace(/\[\]$/, "");
  const v = (obj as Obj | undefined)?.[key];
  if (v === undefined) return [];
  const items = head.endsWith("[]") ? (v as unknown[]) : [v];
  return items.flatMap((i) => valuesAt(i, rest.join(".")));
}

Deno.test("the generator reads what the team roles may write from the RBAC and the CRDs", async (t) => {
  const targets = writableTargets(ROOT, "hostile");
  await t.step(
    "a team admin writes TenantClusters, ProviderConfigs, Secrets and its Team; an operator clusters",
    () => {
      assert.deepEqual(
        targets.map((x) => [x.kind, Object.keys(x.writers).sort(), x.names ?? []]),
        [
          ["Secret", ["admin"], []],
          ["ProviderConfig", ["admin"], []],
          ["Team", ["admin"], ["hostile"]],
          ["TenantCluster", ["admin", "operator"], []],
        ],
      );
    },
  );
  await t.step("every free-form place of a writable CRD has a point in every value shape", () => {
    const crds = ["tenantclusters", "teams", "providerconfigs"].flatMap((f) =>
      parseAllDocuments(Deno.readTextFileSync(`${ROOT}/manifests/crds/${f}.yaml`)).map((d) => d.toJS())
    );
    const inSpecs = crds.reduce(
      (n, c) => n + preserveCount(c.spec.versions[0].schema.openAPIV3Schema.properties.spec),
      0,
    );
    const places = targets.flatMap((x) => freeFormPaths(x.schema).map((p) => `${x.kind} ${p.join(".")}`));
    assert.equal(places.length, inSpecs, places.join(", "));
    const points = generatePoints(targets, ctx);
    for (const place of places) {
      const shapes = points.filter((p) =>
        p.family === "free-form" && `${p.kind} ${p.place}` === place.replaceAll(".[]", "[]")
      )
        .map((p) => p.shape);
      assert.deepEqual(shapes, [...VALUE_SHAPES], place);
    }
  });
  await t.step(
    "an at-bounds object holds every bounded string at its maxLength, in wide characters too",
    () => {
      for (const target of targets.filter((x) => x.kind !== "Secret")) {
        const spec = target.schema.properties!.spec!;
        for (const charset of ["ascii", "wide"] as const) {
          const object = { spec: atBounds(spec, charset, undefined, "spec", { leaves: [], unbounded: [] }) };
          for (const path of boundedStrings(spec, "spec")) {
            const values = valuesAt(object, path);
            assert.ok(values.length > 0, `${target.kind} ${path}: present`);
            for (const v of values) {
              assert.equal(
                [...String(v)].length,
                schemaAt(spec, path),
                `${target.kind} ${path}`,
              );
            }
          }
          if (charset === "wide") assert.match(toJson(object), /\u8a9e{16}/);
        }
        // The point keeps what its base object sets (references, members): the rest is at the bound.
        const point = generatePoints([target], ctx).find((p) =>
          p.id === `${target.kind.toLowerCase()}-bounds-ascii`
        )!;
        assert.ok(toJson(point.object("x", 0)).includes("a".repeat(200)), target.kind);
      }
    },
  );
  await t.step("the kubeconfig points are at the reporter's bound and past it", () => {
    assert.equal(KUBECONFIG_BYTES, KUBECONFIG_MAX_BYTES);
    const kubeconfigs = generatePoints(targets, ctx).filter((p) => p.family === "kubeconfig");
    for (const p of kubeconfigs) {
      const text = atob((p.object("k", p.bytes) as { data: { value: string } }).data.value);
      if (p.id.endsWith("at-bound")) {
        assert.equal(new TextEncoder().encode(text).length, KUBECONFIG_MAX_BYTES, p.id);
      } else assert.ok(text.length > 60 * KUBECONFIG_MAX_BYTES, p.id);
    }
  });
  await t.step(
    "issue #55's reproductions are points, at their sizes (the slice: 7 MB of `{}` in smaller objects)",
    () => {
      const full = generatePoints(targets, ctx, "full").filter((p) => p.family === "reproduction");
      assert.deepEqual(full.map((p) => [p.kind, p.copies, p.bytes]), [
        ["TenantCluster", 5, 1_400_000],
        ["TenantCluster", 10, Math.round(1.1 * 1024 * 1024)],
        ["ProviderConfig", 33, 256 * 1024 - 64],
      ]);
      const five = toJson(full[0]!.object("r", full[0]!.bytes));
      assert.ok(five.length > 1_390_000 && five.includes("{},{},{}"));
      const slice = generatePoints(targets, ctx, "slice").filter((p) => p.family === "reproduction");
      assert.ok(slice[0]!.copies * slice[0]!.bytes >= 5 * 1_400_000);
      assert.deepEqual(
        slice.slice(1).map((p) => [p.copies, p.bytes]),
        full.slice(1).map((p) => [p.copies, p.bytes]),
      );
    },
  );
  await t.step(
    "the slice stores the shapes of many small nodes smaller, strings and depth at their bounds",
    () => {
      const slice = generatePoints(targets, ctx, "slice").filter((p) => p.family === "free-form");
      assert.ok(slice.filter((p) => p.shape === "empties").every((p) => p.bytes === SLICE_NODE_BYTES));
      assert.ok(slice.filter((p) => p.shape === "longString").every((p) => p.bytes > 1_000_000));
      const deep = slice.find((p) => p.shape === "deep" && p.kind === "TenantCluster")!;
      assert.ok(toJson(deep.object("d", deep.bytes)).includes('{"a":'.repeat(9000)));
      const teams = slice.filter((p) => p.shape === "deep" && p.kind === "Team");
      assert.ok(teams.length > 0 && teams.every((p) => p.bytes === SLICE_NODE_BYTES));
    },
  );
});

/** The `maxLength` of the string at a path of a schema. */
function schemaAt(schema: Schema, path: string): number | undefined {
  let s: Schema | undefined = schema;
  for (const step of path.split(".").slice(1)) {
    s = s?.properties?.[step.replace(/\[\]$/, "")];
    if (step.endsWith("[]")) s = s?.items;
  }
  return s?.maxLength;
}
