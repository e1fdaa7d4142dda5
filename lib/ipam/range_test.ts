import assert from "node:assert/strict";
import {
  enumerateRange,
  formatRange,
  normalizeRanges,
  parseCidr,
  parseRange,
  type Range,
  subtractRanges,
} from "./mod.ts";

const r = (text: string): Range & { family: 4 | 6 } => {
  const p = parseRange(text);
  if (!p.ok) throw new Error(p.message);
  return p.value;
};

Deno.test("parseCidr", async (t) => {
  await t.step("masks host bits", () => {
    const c = parseCidr("10.0.0.5/24");
    assert.ok(c.ok);
    assert.equal(formatRange(4, c.value), "10.0.0.0/24");
    assert.equal(c.value.prefix, 24);
  });
  const cases: [string, string][] = [
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["10.40.0.0/32", "10.40.0.0/32"],
    ["255.255.255.0/24", "255.255.255.0/24"],
    ["fd00:1::5/48", "fd00:1::/48"],
    ["::1/128", "::1/128"],
    ["::/0", "::/0"],
  ];
  for (const [text, formatted] of cases) {
    await t.step(text, () => {
      const c = parseCidr(text);
      assert.ok(c.ok);
      assert.equal(formatRange(c.value.family, c.value), formatted);
    });
  }
  for (
    const bad of ["10.0.0.0", "10.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/ 8", "a/8", "10.0.0.0/8/8"]
  ) {
    await t.step(`rejects ${bad}`, () => {
      assert.deepEqual(parseCidr(bad), {
        ok: false,
        message: `invalid CIDR notation: ${JSON.stringify(bad)}`,
      });
    });
  }
});

Deno.test("parseRange", async (t) => {
  await t.step(
    "start-end, with spaces",
    () => assert.deepEqual(r(" 10.0.0.1 - 10.0.0.3"), { family: 4, start: 0x0a000001n, end: 0x0a000003n }),
  );
  await t.step(
    "CIDR",
    () => assert.deepEqual(r("10.0.0.0/30"), { family: 4, start: 0x0a000000n, end: 0x0a000003n, prefix: 30 }),
  );
  await t.step(
    "single",
    () => assert.deepEqual(r("10.0.0.9"), { family: 4, start: 0x0a000009n, end: 0x0a000009n }),
  );
  await t.step(
    "IPv6 range",
    () =>
      assert.deepEqual(r("fd00::1-fd00::ff"), {
        family: 6,
        start: 0xfd00n << 112n | 1n,
        end: 0xfd00n << 112n | 0xffn,
      }),
  );
  await t.step("reversed", () =>
    assert.deepEqual(parseRange("10.0.0.3-10.0.0.1"), {
      ok: false,
      message: "invalid IP range: start is after end: 10.0.0.3-10.0.0.1",
    }));
  await t.step("mixed families", () =>
    assert.deepEqual(parseRange("10.0.0.1-::1"), {
      ok: false,
      message: 'invalid IP range: "10.0.0.1-::1" mixes IPv4 and IPv6',
    }));
  await t.step("garbage", () => assert.equal(parseRange("x-y").ok, false));
});

Deno.test("formatRange: CIDR only when a power of two AND aligned", async (t) => {
  const cases: [string, string][] = [
    ["10.40.1.0-10.40.1.7", "10.40.1.0/29"],
    ["10.40.1.8-10.40.1.15", "10.40.1.8/29"],
    ["10.40.1.4-10.40.1.11", "10.40.1.4-10.40.1.11"],
    ["10.40.1.3-10.40.1.10", "10.40.1.3-10.40.1.10"],
    ["10.40.1.0-10.40.1.5", "10.40.1.0-10.40.1.5"],
    ["10.40.1.9-10.40.1.9", "10.40.1.9/32"],
    ["0.0.0.0-255.255.255.255", "0.0.0.0/0"],
    ["255.255.255.254-255.255.255.255", "255.255.255.254/31"],
    ["fd00::-fd00::ff", "fd00::/120"],
    ["fd00::1-fd00::1", "fd00::1/128"],
    ["fd00::1-fd00::2", "fd00::1-fd00::2"],
  ];
  for (const [range, expected] of cases) {
    await t.step(range, () => assert.equal(formatRange(r(range).family, r(range)), expected));
  }
});

Deno.test("enumerateRange caps at 65,536", async (t) => {
  await t.step("small", () =>
    assert.deepEqual(enumerateRange(4, r("10.0.0.254-10.0.1.1")), {
      ok: true,
      value: ["10.0.0.254", "10.0.0.255", "10.0.1.0", "10.0.1.1"],
    }));
  await t.step(
    "the last addresses of the space",
    () =>
      assert.deepEqual(enumerateRange(4, r("255.255.255.254/31")), {
        ok: true,
        value: ["255.255.255.254", "255.255.255.255"],
      }),
  );
  await t.step("exactly 65,536 is allowed", () => {
    const e = enumerateRange(4, r("10.0.0.0/16"));
    assert.ok(e.ok);
    assert.equal(e.value.length, 65536);
    assert.equal(e.value[65535], "10.0.255.255");
  });
  await t.step("65,537 is refused", () =>
    assert.deepEqual(enumerateRange(4, r("10.0.0.0-10.1.0.0")), {
      ok: false,
      message: "range too large to enumerate: 65537 IPs",
    }));
  await t.step(
    "an IPv6 /64 is refused without looping",
    () =>
      assert.deepEqual(enumerateRange(6, r("fd00::/64")), {
        ok: false,
        message: "range too large to enumerate: 18446744073709551616 IPs",
      }),
  );
});

Deno.test("interval operations", async (t) => {
  const R = (s: number, e: number): Range => ({ start: BigInt(s), end: BigInt(e) });
  await t.step("normalize merges overlapping and adjacent", () => {
    assert.deepEqual(normalizeRanges([R(10, 12), R(0, 3), R(4, 5), R(11, 20), R(30, 30)]), [
      R(0, 5),
      R(10, 20),
      R(30, 30),
    ]);
  });
  await t.step("subtract", () => {
    assert.deepEqual(subtractRanges([R(0, 100)], [R(0, 9), R(20, 29), R(95, 200)]), [R(10, 19), R(30, 94)]);
    assert.deepEqual(subtractRanges([R(0, 9), R(20, 29)], [R(5, 24)]), [R(0, 4), R(25, 29)]);
    assert.deepEqual(subtractRanges([R(0, 9)], []), [R(0, 9)]);
    assert.deepEqual(subtractRanges([R(0, 9)], [R(0, 9)]), []);
  });
});
