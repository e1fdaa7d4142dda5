import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_ADDON_VALUES_BYTES, MAX_ADDONS_VALUES_BYTES, storedBoundErrors } from "./bounds.ts";
import { MAX_READ_ANNOTATION_BYTES } from "../../lib/api/mod.ts";

const values = (bytes: number) => ({ blob: "x".repeat(Math.max(0, bytes - 12)) }); // {"blob":"…"} is 11 more
const size = (v: unknown) => new TextEncoder().encode(JSON.stringify(v)).length;

Deno.test("what a team may store: each addon's values, all of them, and the annotations Butler reads", async (t) => {
  await t.step("refused exactly past each bound, unless stored so before (generated)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 * MAX_ADDON_VALUES_BYTES }), { maxLength: 8 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 * MAX_READ_ANNOTATION_BYTES }),
        (sizes, storedBefore, owner) => {
          const addons = sizes.map((n, i) => ({ name: `a${i}`, values: values(n) }));
          const object = {
            metadata: { annotations: { "butler.butlerlabs.dev/owner": "o".repeat(owner) } },
            spec: { addons },
          };
          const old = storedBefore ? structuredClone(object) : undefined;
          const paths = storedBoundErrors(object, old).map((e) => e.path);
          if (storedBefore) return assert.deepEqual(paths, []);
          const expected = [
            ...addons.flatMap((a, i) =>
              size(a.values) > MAX_ADDON_VALUES_BYTES ? [`spec.addons[${i}].values`] : []
            ),
            ...(addons.reduce((n, a) => n + size(a.values), 0) > MAX_ADDONS_VALUES_BYTES
              ? ["spec.addons"]
              : []),
            ...(owner > MAX_READ_ANNOTATION_BYTES
              ? ["metadata.annotations[butler.butlerlabs.dev/owner]"]
              : []),
          ];
          assert.deepEqual(paths, expected);
        },
      ),
      { numRuns: 200 },
    );
  });
  await t.step("the costliest shapes are measured as stored: empty objects, deep nesting, wide text", () => {
    for (
      const v of [
        `[${"{},".repeat(20_000)}{}]`,
        `${`{"ab":`.repeat(7000)}0${"}".repeat(7000)}`,
        JSON.stringify("€".repeat(12_000)),
      ]
    ) {
      const object = { spec: { addons: [{ name: "a", values: { v: JSON.parse(v) } }] } };
      assert.equal(storedBoundErrors(object, undefined).length, 1, v.slice(0, 20));
    }
  });
  await t.step("a change that keeps stored values but adds one past the bound is refused", () => {
    const stored = { spec: { addons: [{ name: "a", values: values(MAX_ADDON_VALUES_BYTES + 10) }] } };
    const grown = {
      spec: { addons: [...stored.spec.addons, { name: "b", values: values(MAX_ADDON_VALUES_BYTES + 20) }] },
    };
    assert.deepEqual(storedBoundErrors(grown, stored).map((e) => e.path), ["spec.addons[1].values"]);
  });
});
