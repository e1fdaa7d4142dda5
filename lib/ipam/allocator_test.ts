import assert from "node:assert/strict";
import {
  Allocator,
  formatRange,
  formatSpan,
  maxAddress,
  parseRange,
  type Range,
  readPoolSpec,
  toRanges,
} from "./mod.ts";
import type { PoolSpec } from "./mod.ts";

const r = (text: string): Range => {
  const p = parseRange(text);
  if (!p.ok) throw new Error(p.message);
  return { start: p.value.start, end: p.value.end };
};

function pool(spec: PoolSpec, allocations: string[] = []): Allocator {
  const s = readPoolSpec(spec);
  if (!s.ok) throw new Error(JSON.stringify(s.problems));
  return Allocator.create({ ...s.pool, allocations: allocations.map(r) });
}

function granted(a: Allocator, n: number | bigint): string {
  const res = a.allocate(n);
  if (!res.ok) throw new Error(res.error.message);
  return formatSpan(a.family, res.value);
}

const LAB_POOL: PoolSpec = {
  cidr: "10.40.0.0/21",
  reserved: [{ cidr: "10.40.0.0/28" }, { cidr: "10.40.0.16/28" }],
  tenantAllocation: { start: "10.40.1.0", end: "10.40.7.254" },
};

Deno.test("capacity follows the definitions (docs/design.md#where-we-differ-from-the-seeds)", async (t) => {
  await t.step("lab-pool: 10.40.1.0-10.40.7.254 has 1791 usable addresses (the seed prints 1774)", () => {
    const c = pool(LAB_POOL).capacity();
    assert.equal(c.total, 1791n);
    assert.equal(c.available, 1791n);
    assert.equal(c.fragmentationPercent, 0);
  });
  await t.step("single-pool example: 10.40.1.0-10.40.3.254 has 767 (the seed prints 766)", () => {
    const c = pool({
      ...LAB_POOL,
      cidr: "10.40.0.0/22",
      tenantAllocation: { start: "10.40.1.0", end: "10.40.3.254" },
    })
      .capacity();
    assert.equal(c.total, 767n);
  });
  await t.step("CRD reference example: /24, reserved .0/28 and .240/28, tenant .16-.239 has 224", () => {
    const c = pool({
      cidr: "10.40.0.0/24",
      reserved: [{ cidr: "10.40.0.0/28" }, { cidr: "10.40.0.240/28" }],
      tenantAllocation: { start: "10.40.0.16", end: "10.40.0.239" },
    }).capacity();
    assert.equal(c.total, 224n);
  });
  await t.step("reserved ranges inside the allocatable range reduce capacity", () => {
    const a = pool({ cidr: "10.0.0.0/24", reserved: [{ cidr: "10.0.0.0/28" }] });
    assert.equal(a.capacity().total, 240n);
    assert.equal(granted(a, 8), "10.0.0.16-10.0.0.23");
  });
  await t.step("network and broadcast addresses are not special", () => {
    const a = pool({ cidr: "10.0.0.0/24" });
    assert.equal(granted(a, 256), "10.0.0.0-10.0.0.255");
    assert.equal(a.capacity().available, 0n);
  });
  await t.step(
    "an existing allocation overlapping a reserved range counts as reserved, not allocated",
    () => {
      const c = pool({ cidr: "10.0.0.0/24", reserved: [{ cidr: "10.0.0.0/28" }] }, ["10.0.0.8-10.0.0.23"])
        .capacity();
      assert.deepEqual([c.total, c.allocated, c.available, c.allocationCount], [240n, 8n, 232n, 1]);
    },
  );
  await t.step("allocations outside the allocatable range do not count", () => {
    const c = pool(LAB_POOL, ["10.40.0.32-10.40.0.63"]).capacity();
    assert.deepEqual([c.allocated, c.available], [0n, 1791n]);
  });
});

Deno.test("best-fit allocation", async (t) => {
  // Free blocks: .0-.7 (8), .20-.23 (4), .40-.43 (4), .60-.255 (196)
  const fragmented = () =>
    pool({ cidr: "10.0.0.0/24" }, ["10.0.0.8-10.0.0.19", "10.0.0.24-10.0.0.39", "10.0.0.44-10.0.0.59"]);
  await t.step(
    "smallest fitting block wins",
    () => assert.equal(granted(fragmented(), 5), "10.0.0.0-10.0.0.4"),
  );
  await t.step(
    "ties go to the lowest address",
    () => assert.equal(granted(fragmented(), 4), "10.0.0.20-10.0.0.23"),
  );
  await t.step(
    "taken from the start of the block",
    () => assert.equal(granted(fragmented(), 3), "10.0.0.20-10.0.0.22"),
  );
  await t.step(
    "a request larger than every small block takes the large one",
    () => assert.equal(granted(fragmented(), 9), "10.0.0.60-10.0.0.68"),
  );
  await t.step("sequence", () => {
    const a = fragmented();
    assert.deepEqual([granted(a, 4), granted(a, 4), granted(a, 4), granted(a, 8)], [
      "10.0.0.20-10.0.0.23",
      "10.0.0.40-10.0.0.43",
      "10.0.0.0-10.0.0.3",
      "10.0.0.60-10.0.0.67",
    ]);
  });
  await t.step("count must be positive", () => {
    for (const n of [0, -1]) {
      assert.deepEqual(fragmented().allocate(n), {
        ok: false,
        error: { code: "invalid-count", message: "requested count must be positive" },
      });
    }
  });
  await t.step("no fitting block: exhausted, even with enough addresses in total", () => {
    const a = fragmented();
    assert.equal(a.capacity().available, 212n);
    assert.deepEqual(a.allocate(197), {
      ok: false,
      error: { code: "exhausted", message: "pool exhausted: no contiguous block available" },
    });
  });
  await t.step("fragmentation = 100 - largest*100/totalFree", () => {
    const c = fragmented().capacity();
    assert.deepEqual([c.freeBlockCount, c.largestFreeBlock, c.available], [4, 196n, 212n]);
    assert.equal(c.fragmentationPercent, 100 - Math.floor(196 * 100 / 212));
  });
  await t.step("each allocatable range is its own block: two untouched 8s show 50%", () => {
    const c = pool({
      cidr: "10.0.0.0/24",
      tenantAllocation: {
        ranges: [{ start: "10.0.0.0", end: "10.0.0.7" }, { start: "10.0.0.16", end: "10.0.0.23" }],
      },
    }).capacity();
    assert.deepEqual([c.total, c.freeBlockCount, c.fragmentationPercent], [16n, 2, 50]);
  });
  await t.step("full pool: zero fragmentation, zero largest block", () => {
    const a = pool({ cidr: "10.0.0.0/30" });
    granted(a, 4);
    const c = a.capacity();
    assert.deepEqual([c.available, c.largestFreeBlock, c.freeBlockCount, c.fragmentationPercent], [
      0n,
      0n,
      0,
      0,
    ]);
  });
});

Deno.test("pinned allocation", async (t) => {
  await t.step("the seed's pinned range 10.40.2.0-10.40.2.7 is granted exactly", () => {
    const a = pool(LAB_POOL);
    const res = a.pin("10.40.2.0", "10.40.2.7");
    assert.ok(res.ok);
    assert.equal(formatRange(4, res.value), "10.40.2.0/29");
    const c = a.capacity();
    assert.deepEqual([c.allocated, c.freeBlockCount], [8n, 2]);
    assert.equal(granted(a, 8), "10.40.1.0-10.40.1.7", "best-fit takes the smaller block before the pin");
  });
  const errors: [string, string, string, string][] = [
    ["10.40.2", "10.40.2.7", "invalid-address", "invalid pinned range IPs: 10.40.2-10.40.2.7"],
    ["fd00::1", "fd00::2", "invalid-address", "invalid pinned range IPs: fd00::1-fd00::2 (the pool is IPv4)"],
    [
      "10.40.2.7",
      "10.40.2.0",
      "reversed",
      "invalid IP range: start is after end: pinned start 10.40.2.7 is after end 10.40.2.0",
    ],
    [
      "10.40.0.200",
      "10.40.0.210",
      "outside",
      "range falls outside pool boundaries: pinned range 10.40.0.200-10.40.0.210 is outside allocatable ranges [ranges[0] 10.40.1.0-10.40.7.254]",
    ],
    [
      "10.40.0.250",
      "10.40.1.5",
      "outside",
      "range falls outside pool boundaries: pinned range 10.40.0.250-10.40.1.5 is outside allocatable ranges [ranges[0] 10.40.1.0-10.40.7.254]",
    ],
  ];
  for (const [s, e, code, message] of errors) {
    await t.step(
      `${s}-${e}: ${code}`,
      () => assert.deepEqual(pool(LAB_POOL).pin(s, e), { ok: false, error: { code, message } }),
    );
  }
  const twoRanges: PoolSpec = {
    cidr: "10.0.0.0/24",
    reserved: [{ cidr: "10.0.0.40/29" }],
    tenantAllocation: {
      ranges: [{ start: "10.0.0.0", end: "10.0.0.15" }, { start: "10.0.0.32", end: "10.0.0.63" }],
    },
  };
  await t.step(
    "a range over two allocatable ranges straddles",
    () =>
      assert.deepEqual(pool(twoRanges).pin("10.0.0.10", "10.0.0.35"), {
        ok: false,
        error: {
          code: "straddle",
          message:
            "range falls outside pool boundaries: pinned range 10.0.0.10-10.0.0.35 straddles allocatable ranges; must fit entirely within one range. Overlapping ranges: ranges[0] 10.0.0.0-10.0.0.15, ranges[1] 10.0.0.32-10.0.0.63",
        },
      }),
  );
  await t.step(
    "outside lists every allocatable range",
    () =>
      assert.deepEqual(
        pool(twoRanges).pin("10.0.0.20", "10.0.0.25").ok ? "" : pool(twoRanges).pin("10.0.0.20", "10.0.0.25"),
        {
          ok: false,
          error: {
            code: "outside",
            message:
              "range falls outside pool boundaries: pinned range 10.0.0.20-10.0.0.25 is outside allocatable ranges [ranges[0] 10.0.0.0-10.0.0.15, ranges[1] 10.0.0.32-10.0.0.63]",
          },
        },
      ),
  );
  await t.step(
    "a reserved address conflicts: the first one is named",
    () =>
      assert.deepEqual(pool(twoRanges).pin("10.0.0.36", "10.0.0.44"), {
        ok: false,
        error: {
          code: "conflict",
          message: "pinned range conflicts at IP 10.0.0.40 (reserved or already allocated)",
        },
      }),
  );
  await t.step(
    "an allocated address conflicts, at the start",
    () =>
      assert.deepEqual(pool(twoRanges, ["10.0.0.4-10.0.0.7"]).pin("10.0.0.5", "10.0.0.9"), {
        ok: false,
        error: {
          code: "conflict",
          message: "pinned range conflicts at IP 10.0.0.5 (reserved or already allocated)",
        },
      }),
  );
  await t.step(
    "an allocated address conflicts, in the middle",
    () =>
      assert.deepEqual(pool(twoRanges, ["10.0.0.4-10.0.0.7"]).pin("10.0.0.0", "10.0.0.9"), {
        ok: false,
        error: {
          code: "conflict",
          message: "pinned range conflicts at IP 10.0.0.4 (reserved or already allocated)",
        },
      }),
  );
});

Deno.test("release", () => {
  const a = pool({ cidr: "10.0.0.0/28" });
  const x = a.allocate(4);
  const y = a.allocate(4);
  assert.ok(x.ok && y.ok);
  assert.equal(a.release(x.value), true);
  assert.equal(a.release(x.value), false, "a range is released once");
  assert.deepEqual(a.freeBlocks().map((b) => formatSpan(4, b)), ["10.0.0.0-10.0.0.3", "10.0.0.8-10.0.0.15"]);
  assert.equal(a.release(y.value), true);
  assert.deepEqual(a.freeBlocks().map((b) => formatSpan(4, b)), ["10.0.0.0-10.0.0.15"]);
  assert.equal(a.capacity().allocationCount, 0);
});

Deno.test("edge cases that break naive code", async (t) => {
  await t.step("a pool ending at 255.255.255.255", () => {
    const a = pool({ cidr: "255.255.255.0/24", reserved: [{ cidr: "255.255.255.252/30" }] });
    assert.equal(a.capacity().total, 252n);
    assert.equal(granted(a, 252), "255.255.255.0-255.255.255.251");
    const b = pool({ cidr: "255.255.255.0/24" });
    assert.ok(b.pin("255.255.255.255", "255.255.255.255").ok);
    assert.equal(granted(b, 255), "255.255.255.0-255.255.255.254");
    assert.equal(b.allocate(1).ok, false);
  });
  await t.step("a pool ending at the last IPv6 address", () => {
    const a = pool({ cidr: "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00/120" });
    assert.ok(a.pin("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").ok);
    assert.equal(a.capacity().available, 254n);
    assert.equal(a.freeBlocks()[0]!.end, maxAddress(6) - 2n);
  });
  await t.step("/32 and /128 pools hold one address", () => {
    for (const cidr of ["10.9.9.9/32", "fd00::9/128"]) {
      const a = pool({ cidr });
      assert.equal(a.capacity().total, 1n);
      assert.ok(a.allocate(1).ok);
      assert.equal(a.allocate(1).ok, false);
    }
  });
  await t.step("allocating a whole /8", () => {
    const a = pool({ cidr: "10.0.0.0/8" });
    assert.equal(granted(a, 1 << 24), "10.0.0.0-10.255.255.255");
    assert.equal(a.capacity().available, 0n);
  });
  await t.step("an IPv6 /48: capacity 2^80, grants from the start", () => {
    const a = pool({ cidr: "fd00:1:2::/48", reserved: [{ cidr: "fd00:1:2::/64" }] });
    assert.equal(a.capacity().total, (1n << 80n) - (1n << 64n));
    assert.equal(granted(a, 16), "fd00:1:2:1::-fd00:1:2:1::f");
    assert.equal(granted(a, 1n << 64n), "fd00:1:2:1::10-fd00:1:2:2::f");
  });
  await t.step("an IPv6 /64 (BigInt free list): pin, conflict, release, best-fit between far blocks", () => {
    const a = pool({ cidr: "fd00:7::/64", reserved: [{ cidr: "fd00:7::/120" }] });
    assert.ok(a.pin("fd00:7::ffff:0:0:0", "fd00:7::ffff:0:0:f").ok);
    const conflict = a.pin("fd00:7::fffe:ffff:ffff:fffe", "fd00:7::ffff:0:0:1");
    assert.ok(!conflict.ok);
    assert.equal(
      conflict.error.message,
      "pinned range conflicts at IP fd00:7:0:0:ffff:: (reserved or already allocated)",
    );
    assert.ok(a.pin("fd00:7::100", "fd00:7::10f").ok);
    assert.equal(
      granted(a, 8),
      "fd00:7::ffff:0:0:10-fd00:7::ffff:0:0:17",
      "the smaller of two blocks of 2^48 and 2^60 addresses",
    );
    const x = a.pin("fd00:7::ffff:0:0:20", "fd00:7::ffff:0:0:27");
    assert.ok(x.ok);
    assert.equal(
      granted(a, 8),
      "fd00:7::ffff:0:0:18-fd00:7::ffff:0:0:1f",
      "the 8-address gap left before the pin",
    );
    assert.equal(a.release(x.value), true);
    assert.deepEqual(a.freeBlocks().map((b) => formatSpan(6, b)), [
      "fd00:7::110-fd00:7::fffe:ffff:ffff:ffff",
      "fd00:7::ffff:0:0:20-fd00:7::ffff:ffff:ffff:ffff",
    ]);
    assert.equal(a.capacity().allocated, 16n + 16n + 8n + 8n);
  });
});

Deno.test("touching allocatable ranges are one block", async (t) => {
  const TOUCHING: PoolSpec = {
    cidr: "10.0.0.0/24",
    tenantAllocation: {
      ranges: [{ start: "10.0.0.0", end: "10.0.0.7" }, { start: "10.0.0.8", end: "10.0.0.15" }],
    },
  };
  await t.step("read as one range", () => {
    const s = readPoolSpec(TOUCHING);
    assert.ok(s.ok);
    assert.deepEqual(s.pool.allocatable.map((x) => formatSpan(4, x)), ["10.0.0.0-10.0.0.15"]);
  });
  await t.step("no fragmentation while empty", () => {
    const c = pool(TOUCHING).capacity();
    assert.equal(c.fragmentationPercent, 0);
    assert.equal(c.largestFreeBlock, 16n);
  });
  await t.step("a request for 16 spans the boundary", () => {
    assert.equal(granted(pool(TOUCHING), 16), "10.0.0.0-10.0.0.15");
  });
  await t.step("a pinned range across the boundary is inside the pool", () => {
    const res = pool(TOUCHING).pin("10.0.0.4", "10.0.0.11");
    assert.ok(res.ok, res.ok ? "" : res.error.message);
  });
  await t.step("ranges with a gap stay two blocks", () => {
    const s = readPoolSpec({
      cidr: "10.0.0.0/24",
      tenantAllocation: {
        ranges: [{ start: "10.0.0.0", end: "10.0.0.7" }, { start: "10.0.0.9", end: "10.0.0.15" }],
      },
    });
    assert.ok(s.ok);
    assert.equal(s.pool.allocatable.length, 2);
  });
});

Deno.test("grants given as number offsets (the ledger's form)", async (t) => {
  const spec = readPoolSpec({ cidr: "fd00:0:0:1::/112" });
  if (!spec.ok) throw new Error("spec");
  const poolStart = spec.pool.allocatable[0]!.start;
  const ranges = [r("fd00:0:0:1::10-fd00:0:0:1::17"), r("fd00:0:0:1::40-fd00:0:0:1::4f")];
  const asOffsets = (base: bigint, rs: readonly Range[]) => ({
    base,
    starts: rs.map((x) => Number(x.start - base)),
    ends: rs.map((x) => Number(x.end - base)),
  });
  const blocksOf = (allocations: Parameters<typeof Allocator.create>[0]["allocations"]) =>
    Allocator.create({ ...spec.pool, allocations }).freeBlocks().map((b) => formatSpan(6, b));
  const want = blocksOf(ranges);

  await t.step("from the pool's first address, or any base whose offsets are exact", () => {
    assert.deepEqual(blocksOf(asOffsets(poolStart, ranges)), want);
    assert.deepEqual(blocksOf(asOffsets(poolStart - 1000n, ranges)), want);
    assert.deepEqual(blocksOf(asOffsets(poolStart + 0x40n, ranges)), want, "negative offsets");
  });
  await t.step("unsorted offsets are sorted first", () => {
    assert.deepEqual(blocksOf(asOffsets(poolStart, [...ranges].reverse())), want);
  });
  await t.step("offsets that are not exact once moved to the pool take the BigInt path", () => {
    // A ledger written when the pool was elsewhere: its base is 2^64 below the pool.
    const old = [r("fd00::-fd00::7"), r("fd00::100-fd00::10f")];
    assert.deepEqual(blocksOf(asOffsets(old[0]!.start, old)), blocksOf(old));
    assert.deepEqual(blocksOf(asOffsets(old[0]!.start, old)), blocksOf([]));
    // A base just under 2^53 above the pool, offsets about 2^52 to 2^53: past 2^53 from the pool's start.
    const base = poolStart + 2n ** 53n - 1n;
    const high = { base, starts: [2 ** 52, 2 ** 53 - 8], ends: [2 ** 52 + 7, 2 ** 53] };
    assert.deepEqual(blocksOf(high), blocksOf(toRanges(high)));
    assert.deepEqual(blocksOf(high), blocksOf([]));
    // A grant from inside the pool to past 2^53 beyond it (a huge IPv6 pinned range of an old, larger spec).
    const wide = { base: poolStart + 2n ** 52n, starts: [0x10 - 2 ** 52], ends: [2 ** 52 + 4] };
    assert.deepEqual(blocksOf(wide), blocksOf(toRanges(wide)));
    assert.deepEqual(blocksOf(wide), ["fd00:0:0:1::-fd00:0:0:1::f"]);
  });
  await t.step("allocation, capacity and release work on offsets as on ranges", () => {
    const a = Allocator.create({ ...spec.pool, allocations: asOffsets(poolStart, ranges) });
    const b = Allocator.create({ ...spec.pool, allocations: ranges });
    assert.deepEqual(a.allocate(8), b.allocate(8));
    assert.deepEqual(a.capacity(), b.capacity());
    assert.deepEqual(a.allocations(), b.allocations());
    assert.equal(a.release(ranges[1]!), true);
    assert.equal(b.release(ranges[1]!), true);
    assert.deepEqual(a.freeBlocks(), b.freeBlocks());
    assert.equal(a.capacity().allocationCount, 2);
  });
});
