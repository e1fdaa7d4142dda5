import assert from "node:assert/strict";
import { above, add, formatQuantity, multiply, parseQuantity, percentOf, type Quantity } from "./mod.ts";

const q = (s: string | number): Quantity => {
  const p = parseQuantity(s);
  if (!p.ok) throw new Error(p.message);
  return p.value;
};

Deno.test("parseQuantity", async (t) => {
  const cases: [string | number, bigint, boolean][] = [
    ["500m", 500_000_000n, false],
    ["4", 4_000_000_000n, false],
    [4, 4_000_000_000n, false],
    ["0.5", 500_000_000n, false],
    [".5", 500_000_000n, false],
    ["1.5", 1_500_000_000n, false],
    ["16Gi", 16n * (1n << 30n) * 1_000_000_000n, true],
    ["2Ti", 2n * (1n << 40n) * 1_000_000_000n, true],
    ["1.5Gi", 1610612736n * 1_000_000_000n, true],
    ["100Gi", 100n * (1n << 30n) * 1_000_000_000n, true],
    ["1k", 1000n * 1_000_000_000n, false],
    ["1M", 1_000_000n * 1_000_000_000n, false],
    ["1e3", 1000n * 1_000_000_000n, false],
    ["1E-3", 1_000_000n, false],
    ["100n", 100n, false],
    ["1u", 1000n, false],
    ["0.1n", 1n, false], // rounded up to the smallest unit
    ["-1", -1_000_000_000n, false],
  ];
  for (const [text, nanos, binary] of cases) {
    await t.step(String(text), () => assert.deepEqual(q(text), { nanos, binary }));
  }
  for (const bad of ["", "16GB", "1.2.3", "Gi", "1 Gi", "abc", "1e", "0x10"]) {
    await t.step(`rejects ${JSON.stringify(bad)}`, () => assert.equal(parseQuantity(bad).ok, false));
  }
});

Deno.test("arithmetic is exact and formats canonically", async (t) => {
  await t.step("cpu × replicas", () => assert.equal(formatQuantity(multiply(q("500m"), 3)), "1500m"));
  await t.step("whole cores", () => assert.equal(formatQuantity(multiply(q("4"), 30)), "120"));
  await t.step(
    "memory sums stay binary",
    () => assert.equal(formatQuantity(add(q("16Gi"), q("16Gi"), q("512Mi"))), "33280Mi"),
  );
  await t.step("storage", () => assert.equal(formatQuantity(multiply(q("100Gi"), 20)), "2000Gi"));
  await t.step("2Ti", () => assert.equal(formatQuantity(q("2048Gi")), "2Ti"));
  await t.step("mixed decimal", () => assert.equal(formatQuantity(add(q("1"), q("250m"))), "1250m"));
  await t.step("zero", () => assert.equal(formatQuantity(add()), "0"));
  await t.step(
    "0.1 + 0.2 is 300m, not 0.30000000000000004",
    () => assert.equal(formatQuantity(add(q("0.1"), q("0.2"))), "300m"),
  );
});

Deno.test("thresholds compare exactly", () => {
  const limit = q("100");
  assert.equal(above(q("80"), limit, 80), false);
  assert.equal(above(q("80001m"), limit, 80), true);
  assert.equal(above(q("100"), limit, 100), false);
  assert.equal(above(q("100001m"), limit, 100), true);
  assert.equal(percentOf(q("101"), limit), 101);
  assert.equal(percentOf(q("79999m"), limit), 79);
  assert.equal(percentOf(q("1"), q("0")), 100);
});
