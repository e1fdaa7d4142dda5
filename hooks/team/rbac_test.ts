import assert from "node:assert/strict";
import fc from "fast-check";
import { sanitize } from "./rbac.ts";

/** Upstream's sanitizeName, as it was written here before (quadratic on runs of `-`): the reference. */
const reference = (name: string) => name.toLowerCase().replace(/[^a-z0-9-]/g, "-").replace(/^-+|-+$/g, "");

Deno.test("sanitize: the same names as upstream's sanitizeName, for any input", () => {
  const chars = fc.constantFrom("-", "a", "Z", "0", ".", "@", "_", " ", "é", "--");
  fc.assert(
    fc.property(fc.array(chars, { maxLength: 40 }).map((a) => a.join("")), (s) => {
      assert.equal(sanitize(s), reference(s));
    }),
    { numRuns: 2000 },
  );
  assert.equal(sanitize("-Alice.Smith@Example.com-"), "alice-smith-example-com");
  assert.equal(sanitize("---"), "");
});
