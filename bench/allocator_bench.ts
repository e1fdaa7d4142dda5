/**
 * `npx -y deno@2.9.6 bench lib/ipam/allocator_bench.ts`
 *
 * One best-fit allocation, building the free list included, in pools holding many grants; beside it the
 * one-boolean-per-address baseline (upstream's algorithm) on the same kind of data, so the ratio is measured in
 * the same run. The /12 is built from the grants both as the NetworkPool ledger hands them over (number offsets)
 * and as BigInt ranges.
 */
import { Allocator, type OffsetRanges, parseCidr, type Range } from "../lib/ipam/mod.ts";
import { count, RUNS, sized } from "./smoke.ts";

/** Deterministic grants of 1..16 addresses separated by gaps of 1..16, from the start of the pool. */
function scatter(start: bigint, count: number): Range[] {
  const out: Range[] = [];
  let x = 7;
  let at = start;
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const gap = BigInt(1 + (x % 16));
    const size = BigInt(1 + ((x >> 8) % 16));
    at += gap;
    out.push({ start: at, end: at + size - 1n });
    at += size;
  }
  return out;
}

function setup(cidrText: string, grants: number) {
  const c = parseCidr(cidrText);
  if (!c.ok) throw new Error(c.message);
  const cidr = c.value;
  return {
    model: {
      family: cidr.family,
      allocatable: [{ start: cidr.start, end: cidr.end }],
      reserved: [{ start: cidr.start, end: cidr.start + 15n }],
      allocations: scatter(cidr.start + 16n, grants),
    },
    cidr,
  };
}

/**
 * Upstream's shape: a boolean per address, marked, scanned for runs, best-fit. `bytes` keeps the booleans in a
 * `Uint8Array` instead of an array of booleans (Go's `[]bool` is one byte per address): the faster of the two
 * baselines, reported beside the other so the ratio is not flattered.
 */
function bitmapAllocate(
  cidr: Range,
  reserved: readonly Range[],
  allocations: readonly Range[],
  n: number,
  bytes = false,
): number {
  const base = Number(cidr.start);
  const size = Number(cidr.end - cidr.start) + 1;
  const used: { [i: number]: boolean | number } = bytes
    ? new Uint8Array(size)
    : new Array<boolean>(size).fill(false);
  for (const r of [...reserved, ...allocations]) {
    for (let v = Number(r.start); v <= Number(r.end); v++) used[v - base] = bytes ? 1 : true;
  }
  let best = -1;
  let bestSize = 0;
  let runStart = -1;
  for (let i = 0; i <= size; i++) {
    if (i < size && !used[i]) {
      if (runStart < 0) runStart = i;
    } else if (runStart >= 0) {
      const len = i - runStart;
      if (len >= n && (best < 0 || len < bestSize)) {
        best = runStart;
        bestSize = len;
      }
      runStart = -1;
    }
  }
  return best + base;
}

const N12 = sized(10_000, 100);
const N8 = sized(100_000, 100);
const N64 = sized(10_000, 100);
const N16 = sized(625, 100);
const v4at12 = setup("10.16.0.0/12", N12);
/** The same grants as the NetworkPool ledger decodes them: number offsets from the pool's first address. */
const v4at12Offsets: OffsetRanges = {
  base: v4at12.cidr.start,
  starts: v4at12.model.allocations.map((r) => Number(r.start - v4at12.cidr.start)),
  ends: v4at12.model.allocations.map((r) => Number(r.end - v4at12.cidr.start)),
};
const v4at8 = setup("10.0.0.0/8", N8);
const v6at64 = setup("fd00:1:2:3::/64", N64);
const v4at16 = setup("10.40.0.0/16", N16);

Deno.bench(
  `interval best-fit, grants as the ledger gives them (offsets): /12 holding ${count(N12)} allocations`,
  { group: "/12", baseline: true, ...RUNS },
  () => {
    Allocator.create({ ...v4at12.model, allocations: v4at12Offsets }).allocate(8);
  },
);
Deno.bench(
  `interval best-fit, grants as BigInt ranges: /12 holding ${count(N12)} allocations`,
  { group: "/12", ...RUNS },
  () => {
    Allocator.create(v4at12.model).allocate(8);
  },
);
Deno.bench(`bitmap baseline: /12 holding ${count(N12)} allocations`, { group: "/12", ...RUNS }, () => {
  bitmapAllocate(v4at12.cidr, v4at12.model.reserved, v4at12.model.allocations, 8);
});
Deno.bench(
  `bitmap baseline (Uint8Array): /12 holding ${count(N12)} allocations`,
  { group: "/12", ...RUNS },
  () => {
    bitmapAllocate(v4at12.cidr, v4at12.model.reserved, v4at12.model.allocations, 8, true);
  },
);
Deno.bench(`interval best-fit: /16 holding ${count(N16)} allocations`, {
  group: "/16",
  baseline: true,
  ...RUNS,
}, () => {
  Allocator.create(v4at16.model).allocate(8);
});
Deno.bench(`bitmap baseline: /16 holding ${count(N16)} allocations`, { group: "/16", ...RUNS }, () => {
  bitmapAllocate(v4at16.cidr, v4at16.model.reserved, v4at16.model.allocations, 8);
});
Deno.bench(
  `bitmap baseline (Uint8Array): /16 holding ${count(N16)} allocations`,
  { group: "/16", ...RUNS },
  () => {
    bitmapAllocate(v4at16.cidr, v4at16.model.reserved, v4at16.model.allocations, 8, true);
  },
);
Deno.bench(`interval best-fit: /8 holding ${count(N8)} allocations`, RUNS, () => {
  Allocator.create(v4at8.model).allocate(8);
});
Deno.bench(`interval best-fit: IPv6 /64 holding ${count(N64)} allocations`, RUNS, () => {
  Allocator.create(v6at64.model).allocate(8);
});
