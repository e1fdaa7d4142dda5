import assert from "node:assert/strict";
import { formatAddress, maxAddress, parseAddress } from "./mod.ts";

Deno.test("parseAddress / formatAddress", async (t) => {
  const valid: [string, 4 | 6, bigint, string][] = [
    ["0.0.0.0", 4, 0n, "0.0.0.0"],
    ["10.40.1.0", 4, 0x0a280100n, "10.40.1.0"],
    ["255.255.255.255", 4, 0xffffffffn, "255.255.255.255"],
    ["::", 6, 0n, "::"],
    ["::1", 6, 1n, "::1"],
    ["FD00:0:0:0::1", 6, 0xfd00n << 112n | 1n, "fd00::1"],
    ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 6, maxAddress(6), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
    ["2001:db8:0:0:1:0:0:1", 6, 0x20010db8000000000001000000000001n, "2001:db8::1:0:0:1"],
  ];
  for (const [text, family, value, canonical] of valid) {
    await t.step(`parses ${text}`, () => {
      assert.deepEqual(parseAddress(text), { family, value });
      assert.equal(formatAddress(family, value), canonical);
    });
  }
  for (
    const text of [
      "",
      "10.1",
      "10.0.0.256",
      "010.0.0.1",
      " 10.0.0.1",
      "10.0.0.1 ",
      "fe80::1%eth0",
      "1::2::3",
      "x",
    ]
  ) {
    await t.step(`rejects ${JSON.stringify(text)}`, () => assert.equal(parseAddress(text), undefined));
  }
});
