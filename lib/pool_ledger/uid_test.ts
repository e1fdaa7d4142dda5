import assert from "node:assert/strict";
import { isToken, tokenUid, uidToken } from "./uid.ts";

Deno.test("UID tokens", async (t) => {
  await t.step("a canonical UUID takes 22 base64url characters and comes back", () => {
    const uid = "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b";
    assert.equal(uidToken(uid), ":C25aTD8dTCqei3pvXk08Kw");
    assert.equal(tokenUid(":C25aTD8dTCqei3pvXk08Kw"), uid);
  });
  await t.step("every UUID round-trips, including the extremes", () => {
    const uids = [
      "00000000-0000-0000-0000-000000000000",
      "ffffffff-ffff-ffff-ffff-ffffffffffff",
      ...Array.from({ length: 500 }, () => crypto.randomUUID()),
    ];
    for (const uid of uids) {
      const token = uidToken(uid);
      assert.equal(token.length, 23, uid);
      assert.ok(isToken(token), token);
      assert.equal(tokenUid(token), uid);
    }
  });
  await t.step("anything else is stored as it is", () => {
    for (
      const uid of [
        "uid-a1",
        "0B6E5A4C-3F1D-4C2A-9E8B-7A6F5E4D3C2B", // uppercase is not how the API server writes UIDs
        "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2", // one digit short
        "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2g",
        "0b6e5a4c13f1d-4c2a-9e8b-7a6f5e4d3c2b",
        "a uid with spaces and = and :",
        "ünïcödé",
      ]
    ) {
      assert.equal(uidToken(uid), `=${uid}`);
      assert.equal(tokenUid(uidToken(uid)), uid);
    }
  });
  for (
    const [bad, why] of [
      ["", "empty"],
      ["=", "empty literal"],
      ["=0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b", "a UUID has one token: the short one"],
      [":C25aTD8dTCqei3pvXk08K", "21 characters"],
      [":C25aTD8dTCqei3pvXk08Kww", "23 characters"],
      [":C25aTD8dTCqei3pvXk08Kx", "unused low bits set"],
      [":C25aTD8dTCqei3pvXk0+Kw", "not base64url"],
      ["C25aTD8dTCqei3pvXk08Kwx", "no mark"],
    ] as const
  ) {
    await t.step(`refuses ${JSON.stringify(bad)} (${why})`, () => {
      assert.equal(isToken(bad), false);
      assert.equal(tokenUid(bad), undefined);
    });
  }
});
