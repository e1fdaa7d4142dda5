import assert from "node:assert/strict";
import { fnv1a32 } from "./mod.ts";

Deno.test("FNV-1a 32: the published test vectors, over text and over bytes, and seeds", () => {
  // From the FNV reference (draft-eastlake-fnv): "", "a", "foobar".
  assert.equal(fnv1a32(""), 0x811c9dc5);
  assert.equal(fnv1a32("a"), 0xe40c292c);
  assert.equal(fnv1a32("foobar"), 0xbf9cf968);
  assert.equal(fnv1a32(new TextEncoder().encode("foobar")), 0xbf9cf968);
  assert.notEqual(fnv1a32("foobar", 0x01000193), fnv1a32("foobar"));
});
