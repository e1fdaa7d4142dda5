import assert from "node:assert/strict";
import fc from "fast-check";
import {
  Allocator,
  type Family,
  formatAddress,
  maxAddress,
  overlaps,
  type Range,
  rangeSize,
  readPoolSpec,
} from "./mod.ts";

/** A random pool: 2^3..2^10 addresses, anywhere in the space (the very top included), IPv4 or IPv6. */
interface Scenario {
  family: Family;
  base: bigint;
  hostBits: number;
  cuts: number[]; // sorted distinct offsets: pairs form allocatable ranges; empty = whole CIDR
  reserved: { offset: number; bits: number }[];
  /** Grants the pool starts with: anywhere in the CIDR, even over reserved space, each other or a gap. */
  initial: { offset: number; len: number }[];
  /**
   * When set, the initial grants are given as number offsets from `base - shift` (the ledger's form) rather than
   * as BigInt ranges, up to the largest exact offsets.
   */
  shift?: bigint | undefined;
  ops: Op[];
}
type Op = { t: "alloc"; n: number } | { t: "pin"; off: number; len: number } | { t: "release"; i: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ t: fc.constant("alloc" as const), n: fc.integer({ min: 1, max: 40 }) }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      t: fc.constant("pin" as const),
      off: fc.integer({ min: 0, max: 1100 }),
      len: fc.integer({ min: 1, max: 16 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("release" as const), i: fc.nat() }) },
);

const scenario: fc.Arbitrary<Scenario> = fc.record({
  family: fc.constantFrom<Family>(4, 6),
  top: fc.boolean(),
  seed: fc.bigInt({ min: 0n, max: maxAddress(6) }),
  hostBits: fc.integer({ min: 3, max: 10 }),
  cutCount: fc.constantFrom(0, 0, 2, 4, 6),
  cutSeeds: fc.uniqueArray(fc.nat(1023), { minLength: 6, maxLength: 6 }),
  reserved: fc.array(fc.record({ offset: fc.nat(1023), bits: fc.integer({ min: 0, max: 3 }) }), {
    maxLength: 3,
  }),
  initial: fc.array(fc.record({ offset: fc.nat(1023), len: fc.integer({ min: 1, max: 24 }) }), {
    maxLength: 4,
  }),
  ops: fc.array(op, { maxLength: 40 }),
  shift: fc.option(
    fc.oneof(
      fc.constant(0n),
      fc.bigInt({ min: -5000n, max: 5000n }),
      fc.bigInt({ min: -(2n ** 53n) + 1024n, max: 2n ** 53n - 1024n }),
      fc.bigInt({ min: 2n ** 53n - 2048n, max: 2n ** 53n - 1024n }),
    ),
    { nil: undefined },
  ),
}).map(({ family, top, seed, hostBits, cutCount, cutSeeds, reserved, initial, ops, shift }) => {
  const size = 1 << hostBits;
  const max = maxAddress(family);
  const aligned = ((seed & max) >> BigInt(hostBits)) << BigInt(hostBits);
  const base = top ? max - BigInt(size) + 1n : aligned;
  const cuts = [...new Set(cutSeeds.map((c) => c % size))].slice(0, cutCount).sort((a, b) => a - b);
  const initialIn = initial.map((g) => ({
    offset: g.offset % size,
    len: Math.min(g.len, size - (g.offset % size)),
  }));
  return {
    family,
    base,
    hostBits,
    cuts: cuts.length % 2 ? cuts.slice(1) : cuts,
    reserved,
    initial: initialIn,
    ops,
    shift,
  };
});

function specOf(s: Scenario) {
  const size = 1 << s.hostBits;
  const bits = s.family === 4 ? 32 : 128;
  const fmt = (off: number) => formatAddress(s.family, s.base + BigInt(off));
  const reserved: Range[] = [];
  for (const r of s.reserved) {
    const len = 1 << r.bits;
    const off = Math.floor((r.offset % size) / len) * len;
    const range = { start: s.base + BigInt(off), end: s.base + BigInt(off + len - 1) };
    if (!reserved.some((x) => overlaps(x, range))) reserved.push(range);
  }
  const ranges = [];
  for (let i = 0; i < s.cuts.length; i += 2) {
    ranges.push({ start: fmt(s.cuts[i]!), end: fmt(s.cuts[i + 1]!) });
  }
  return {
    cidr: `${fmt(0)}/${bits - s.hostBits}`,
    reserved: reserved.map((r) => ({
      cidr: `${formatAddress(s.family, r.start)}/${bits - Math.log2(Number(rangeSize(r)))}`,
    })),
    tenantAllocation: ranges.length ? { ranges } : undefined,
  };
}

/** Upstream's algorithm, one boolean per address and range: the oracle. */
class Naive {
  readonly used: boolean[][];
  constructor(readonly ranges: readonly Range[], reserved: readonly Range[]) {
    this.used = ranges.map((r) =>
      Array.from(
        { length: Number(rangeSize(r)) },
        (_, i) => reserved.some((x) => r.start + BigInt(i) >= x.start && r.start + BigInt(i) <= x.end),
      )
    );
  }
  freeBlocks(): (Range & { ri: number })[] {
    const out: (Range & { ri: number })[] = [];
    this.ranges.forEach((r, ri) => {
      let start = -1;
      const bits = this.used[ri]!;
      for (let i = 0; i <= bits.length; i++) {
        if (i < bits.length && !bits[i]) {
          if (start < 0) start = i;
        } else if (start >= 0) {
          out.push({ start: r.start + BigInt(start), end: r.start + BigInt(i - 1), ri });
          start = -1;
        }
      }
    });
    return out;
  }
  mark(r: Range, value: boolean): void {
    this.ranges.forEach((x, ri) => {
      for (let v = x.start > r.start ? x.start : r.start; v <= (x.end < r.end ? x.end : r.end); v++) {
        this.used[ri]![Number(v - x.start)] = value;
      }
    });
  }
  allocate(n: number): Range | "exhausted" {
    let best: Range | undefined;
    for (const b of this.freeBlocks()) {
      if (rangeSize(b) >= BigInt(n) && (!best || rangeSize(b) < rangeSize(best))) best = b;
    }
    if (!best) return "exhausted";
    const r = { start: best.start, end: best.start + BigInt(n) - 1n };
    this.mark(r, true);
    return r;
  }
  pin(r: Range): Range | string {
    const inside = this.ranges.findIndex((x) => r.start >= x.start && r.end <= x.end);
    if (inside < 0) return this.ranges.filter((x) => overlaps(x, r)).length > 1 ? "straddle" : "outside";
    const x = this.ranges[inside]!;
    for (let v = r.start; v <= r.end; v++) {
      if (this.used[inside]![Number(v - x.start)]) return `conflict ${v}`;
    }
    this.mark(r, true);
    return r;
  }
}

function run(s: Scenario) {
  const spec = readPoolSpec(specOf(s));
  assert.ok(spec.ok, JSON.stringify(!spec.ok && spec.problems));
  const initial = s.initial.map((g) => ({
    start: s.base + BigInt(g.offset),
    end: s.base + BigInt(g.offset + g.len - 1),
  }));
  const ledgerBase = s.base - (s.shift ?? 0n);
  const given = s.shift === undefined ? initial : {
    base: ledgerBase,
    starts: initial.map((g) => Number(g.start - ledgerBase)),
    ends: initial.map((g) => Number(g.end - ledgerBase)),
  };
  const a = Allocator.create({ ...spec.pool, allocations: given });
  const naive = new Naive(spec.pool.allocatable, spec.pool.reserved);
  for (const g of initial) naive.mark(g, true);
  assert.deepEqual(a.freeBlocks(), naive.freeBlocks().map(({ start, end }) => ({ start, end })));
  assert.equal(a.capacity().allocated, a.allocatedInUsable());
  const grants: Range[] = [];
  const trace: unknown[] = [];
  for (const o of s.ops) {
    const before = a.freeBlocks();
    if (o.t === "alloc") {
      const got = a.allocate(o.n);
      const want = naive.allocate(o.n);
      if (want === "exhausted") {
        assert.ok(!got.ok && got.error.code === "exhausted");
        assert.ok(before.every((b) => rangeSize(b) < BigInt(o.n)), "exhausted only when no block fits");
      } else {
        assert.ok(got.ok);
        assert.deepEqual(got.value, want);
        const fitting = before.filter((b) => rangeSize(b) >= BigInt(o.n));
        const minimal = fitting.reduce((m, b) => (rangeSize(b) < rangeSize(m) ? b : m));
        assert.equal(got.value.start, minimal.start, "minimal block, lowest on ties, taken from its start");
        grants.push(got.value);
      }
      trace.push(got);
    } else if (o.t === "pin") {
      const max = maxAddress(s.family);
      const start = s.base + BigInt(o.off) > max ? max : s.base + BigInt(o.off);
      const end = start + BigInt(o.len - 1) > max ? max : start + BigInt(o.len - 1);
      const got = a.pin(formatAddress(s.family, start), formatAddress(s.family, end));
      const want = naive.pin({ start, end });
      if (typeof want === "string") {
        assert.ok(!got.ok);
        const [code, at] = want.split(" ");
        assert.equal(got.error.code, code);
        if (at) assert.match(got.error.message, new RegExp(`at IP ${formatAddress(s.family, BigInt(at))} `));
      } else {
        assert.ok(got.ok);
        assert.deepEqual(got.value, want);
        grants.push(got.value);
      }
      trace.push(got);
    } else if (grants.length) {
      const [g] = grants.splice(o.i % grants.length, 1);
      assert.equal(a.release(g!), true);
      naive.mark(g!, false);
      trace.push(g);
    }

    // Invariants after every step.
    for (let i = 0; i < grants.length; i++) {
      const g = grants[i]!;
      assert.ok(spec.pool.allocatable.some((x) => g.start >= x.start && g.end <= x.end), "inside one range");
      assert.ok(!spec.pool.reserved.some((x) => overlaps(x, g)), "never on a reserved address");
      for (let j = i + 1; j < grants.length; j++) assert.ok(!overlaps(g, grants[j]!), "grants never overlap");
      assert.ok(!initial.some((x) => overlaps(x, g)), "new grants never overlap existing ones");
    }
    const free = a.freeBlocks();
    assert.deepEqual(free, naive.freeBlocks().map(({ start, end }) => ({ start, end })));
    const c = a.capacity();
    const sumFree = free.reduce((n, b) => n + rangeSize(b), 0n);
    assert.equal(c.available, c.total - c.allocated);
    assert.equal(c.available, sumFree);
    assert.equal(c.allocated, a.allocatedInUsable());
    assert.equal(c.allocationCount, initial.length + grants.length);
  }
  return trace;
}

Deno.test("allocator properties against a one-boolean-per-address oracle", () => {
  fc.assert(fc.property(scenario, (s) => void run(s)), { numRuns: 1000 });
});

Deno.test("allocator results are deterministic", () => {
  fc.assert(fc.property(scenario, (s) => assert.deepEqual(run(s), run(s))), { numRuns: 100 });
});
