import assert from "node:assert/strict";
import fc from "fast-check";
import { createFreeList, type FreeList } from "./free_list.ts";
import { maxAddress } from "./address.ts";
import { normalizeRanges, type Range, subtractRanges } from "./range.ts";

/**
 * Bases where the offset arithmetic of the fast list is easiest to get wrong: zero, either side of a 32-bit
 * word boundary (the borrow between halves), either side of 2^64 (the halves of the low word wrap), and the top
 * of each family's space.
 */
const EDGES = [
  0n,
  2n ** 32n - 300n,
  2n ** 32n,
  2n ** 53n - 300n,
  2n ** 64n - 300n,
  2n ** 64n,
  0xfd00_0000_0000_0000_0000_0000_ffff_fe00n,
  maxAddress(4) - 1200n,
  maxAddress(6) - 1200n,
];

interface Case {
  allocatable: Range[];
  reserved: Range[];
  allocations: Range[];
  ops: ({ t: "best"; n: number } | { t: "take"; off: number; len: number })[];
}

/** Offsets relative to a base, turned into ranges clamped to the address space. */
const span = fc.record({ off: fc.integer({ min: -200, max: 1300 }), len: fc.integer({ min: 1, max: 40 }) });

const scenario: fc.Arbitrary<Case> = fc.record({
  base: fc.constantFrom(...EDGES),
  family: fc.constantFrom(4, 6),
  cuts: fc.uniqueArray(fc.integer({ min: 0, max: 1100 }), { minLength: 2, maxLength: 6 }),
  reserved: fc.array(span, { maxLength: 4 }),
  allocations: fc.array(span, { maxLength: 30 }),
  sorted: fc.boolean(),
  ops: fc.array(
    fc.oneof(
      fc.record({ t: fc.constant("best" as const), n: fc.integer({ min: 1, max: 60 }) }),
      fc.record({
        t: fc.constant("take" as const),
        off: fc.integer({ min: 0, max: 1100 }),
        len: fc.integer({ min: 1, max: 20 }),
      }),
    ),
    { maxLength: 20 },
  ),
}).map(({ base, family, cuts, reserved, allocations, sorted, ops }) => {
  const max = maxAddress(family === 4 ? 4 : 6);
  const b = base > max - 1200n ? max - 1200n : base;
  const at = (off: number) => {
    const v = b + BigInt(off);
    return v < 0n ? 0n : v > max ? max : v;
  };
  const toRange = ({ off, len }: { off: number; len: number }) => ({
    start: at(off),
    end: at(off + len - 1),
  });
  const c = [...cuts].sort((x, y) => x - y);
  const allocatable: Range[] = [];
  for (let i = 0; i + 1 < c.length; i += 2) allocatable.push({ start: at(c[i]!), end: at(c[i + 1]!) });
  const grants = allocations.map(toRange);
  return {
    allocatable,
    reserved: reserved.map(toRange),
    allocations: sorted
      ? grants.sort((x, y) => (x.start < y.start ? -1 : x.start > y.start ? 1 : 0))
      : grants,
    ops: ops.map((o) => (o.t === "take" ? { ...o, off: Number(at(o.off) - b) } : o)),
  };
});

function observe(list: FreeList) {
  return {
    blocks: list.blocks(),
    total: list.total,
    count: list.count,
    available: list.available(),
    largest: list.largest(),
  };
}

function trace(c: Case, representation: "offsets" | "ranges") {
  const list = createFreeList(c.allocatable, c.reserved, representation);
  const out: unknown[] = [observe(list)];
  list.rebuild(c.allocations);
  out.push(observe(list));
  const base = c.allocatable[0]!.start;
  for (const o of c.ops) {
    if (o.t === "best") out.push(list.takeBestFit(BigInt(o.n)));
    else {
      const start = base + BigInt(o.off);
      out.push(list.take({ start, end: start + BigInt(o.len - 1) }));
    }
    out.push(observe(list));
  }
  return out;
}

Deno.test("free list representations", async (t) => {
  await t.step("offsets and BigInt ranges agree on every operation", () => {
    fc.assert(
      fc.property(scenario, (c) => assert.deepEqual(trace(c, "offsets"), trace(c, "ranges"))),
      { numRuns: 600 },
    );
  });

  await t.step("the blocks are usable space minus the allocations, from the interval algebra", () => {
    fc.assert(
      fc.property(scenario, (c) => {
        const list = createFreeList(c.allocatable, c.reserved, "offsets");
        list.rebuild(c.allocations);
        const usable = subtractRanges(c.allocatable, normalizeRanges(c.reserved));
        assert.deepEqual(list.blocks(), subtractRanges(usable, normalizeRanges(c.allocations)));
      }),
      { numRuns: 300 },
    );
  });

  await t.step("a pool's span picks the representation", () => {
    const small = createFreeList([{ start: 0n, end: 2n ** 53n - 2n }], []);
    const large = createFreeList([{ start: 0n, end: 2n ** 53n }], []);
    assert.equal(small.constructor.name, "OffsetFreeList");
    assert.equal(large.constructor.name, "RangeFreeList");
    assert.equal(small.total, 2n ** 53n - 1n);
    const edge = createFreeList([{ start: 0n, end: 2n ** 53n - 1n }], []);
    assert.equal(edge.constructor.name, "OffsetFreeList");
    assert.equal(edge.takeBestFit(2n ** 53n + 1n), undefined, "2^53 + 1 rounds to 2^53, which would fit");
    assert.equal(edge.takeBestFit(2n ** 53n), 0n);
    assert.equal(large.total, 2n ** 53n + 1n);
  });

  await t.step("offsets cross a 32-bit word and the 2^64 boundary exactly", () => {
    for (const base of [2n ** 32n - 4n, 2n ** 64n - 4n, 0xfd00_0000_0000_0000_ffff_ffff_ffff_fffcn]) {
      const pool = [{ start: base, end: base + 15n }];
      const list = createFreeList(pool, [{ start: base - 8n, end: base + 1n }], "offsets");
      list.rebuild([{ start: base + 4n, end: base + 5n }, { start: base + 12n, end: base + 20n }]);
      assert.deepEqual(list.blocks(), [{ start: base + 2n, end: base + 3n }, {
        start: base + 6n,
        end: base + 11n,
      }]);
      assert.equal(list.takeBestFit(2n), base + 2n);
      assert.equal(list.take({ start: base + 8n, end: base + 12n }), base + 12n, "first address not free");
      assert.equal(list.take({ start: base + 7n, end: base + 8n }), undefined);
      assert.deepEqual(list.blocks(), [{ start: base + 6n, end: base + 6n }, {
        start: base + 9n,
        end: base + 11n,
      }]);
    }
  });

  await t.step("ranges reaching far outside a small pool are clipped, not wrapped", () => {
    for (const base of [2n ** 64n - 16n, 0xfd00_0000_0000_0000_0000_0000_0000_0100n]) {
      const pool = [{ start: base, end: base + 255n }];
      for (const representation of ["offsets", "ranges"] as const) {
        const list = createFreeList(pool, [{ start: base + 250n, end: base + 2n ** 60n }], representation);
        list.rebuild([{ start: base - 2n ** 60n, end: base + 9n }, {
          start: base + 20n,
          end: maxAddress(6),
        }]);
        assert.deepEqual(list.blocks(), [{ start: base + 10n, end: base + 19n }], representation);
        assert.equal(list.total, 250n, representation);
      }
    }
  });
});
