import assert from "node:assert/strict";
import { type PoolSpec, readPoolSpec } from "./mod.ts";

Deno.test("readPoolSpec reports every problem with its path", async (t) => {
  const cases: [string, PoolSpec, [string, string][]][] = [
    ["missing CIDR", {}, [["cidr", "cidr is required"]]],
    ["bad CIDR", { cidr: "10.40.0.0/33" }, [[
      "cidr",
      'invalid pool CIDR: invalid CIDR notation: "10.40.0.0/33"',
    ]]],
    [
      "reserved outside the pool",
      { cidr: "10.40.0.0/21", reserved: [{ cidr: "10.41.0.0/28" }] },
      [["reserved[0].cidr", 'reserved CIDR "10.41.0.0/28" is not within pool CIDR "10.40.0.0/21"']],
    ],
    [
      "invalid reserved",
      { cidr: "10.40.0.0/21", reserved: [{ cidr: "10.40.0.0" }] },
      [["reserved[0].cidr", 'invalid reserved CIDR "10.40.0.0": invalid CIDR notation: "10.40.0.0"']],
    ],
    [
      "overlapping reserved",
      { cidr: "10.40.0.0/21", reserved: [{ cidr: "10.40.0.0/27" }, { cidr: "10.40.0.16/28" }] },
      [[
        "reserved[1].cidr",
        'reserved CIDR "10.40.0.16/28" overlaps reserved CIDR "10.40.0.0/27" (reserved[0])',
      ]],
    ],
    [
      "mixed families",
      {
        cidr: "10.40.0.0/21",
        reserved: [{ cidr: "fd00::/64" }],
        tenantAllocation: { start: "fd00::1", end: "10.40.1.0" },
      },
      [
        ["reserved[0].cidr", 'reserved CIDR "fd00::/64" is IPv6 but pool CIDR "10.40.0.0/21" is IPv4'],
        ["tenantAllocation.start", 'tenantAllocation.start "fd00::1" is IPv6 but the pool is IPv4'],
      ],
    ],
    [
      "tenant start after end",
      { cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.7.254", end: "10.40.1.0" } },
      [["tenantAllocation", "allocation start 10.40.7.254 is after end 10.40.1.0"]],
    ],
    [
      "tenant range outside the CIDR",
      { cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.1.0", end: "10.40.8.0" } },
      [["tenantAllocation", 'allocation range 10.40.1.0-10.40.8.0 is not within pool CIDR "10.40.0.0/21"']],
    ],
    [
      "tenant start without end",
      { cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.1.0" } },
      [["tenantAllocation.end", "tenantAllocation.start and tenantAllocation.end must be set together"]],
    ],
    [
      "invalid tenant address",
      { cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.1", end: "10.40.2.0" } },
      [["tenantAllocation.start", 'tenantAllocation.start "10.40.1" is not a valid IP address']],
    ],
    [
      "unsorted ranges",
      {
        cidr: "10.40.0.0/21",
        tenantAllocation: {
          ranges: [{ start: "10.40.2.0", end: "10.40.2.255" }, { start: "10.40.1.0", end: "10.40.2.0" }],
        },
      },
      [[
        "tenantAllocation.ranges[1].start",
        "ranges must be sorted by start IP and non-overlapping; ranges[1].start (10.40.1.0) must be greater than ranges[0].end (10.40.2.255)",
      ]],
    ],
    [
      "several problems at once",
      {
        cidr: "10.40.0.0/21",
        reserved: [{ cidr: "10.41.0.0/28" }, { cidr: "bad" }],
        tenantAllocation: {
          ranges: [{ start: "10.40.3.0", end: "10.40.2.0" }, { start: "10.40.4.0", end: "10.48.0.0" }],
        },
      },
      [
        ["reserved[0].cidr", 'reserved CIDR "10.41.0.0/28" is not within pool CIDR "10.40.0.0/21"'],
        ["reserved[1].cidr", 'invalid reserved CIDR "bad": invalid CIDR notation: "bad"'],
        ["tenantAllocation.ranges[0]", "ranges[0] start 10.40.3.0 is after end 10.40.2.0"],
        [
          "tenantAllocation.ranges[1]",
          "ranges[1] (10.40.4.0-10.48.0.0) falls outside pool CIDR 10.40.0.0/21",
        ],
      ],
    ],
  ];
  for (const [name, spec, expected] of cases) {
    await t.step(name, () => {
      const res = readPoolSpec(spec);
      assert.ok(!res.ok, "invalid");
      assert.deepEqual(res.problems.map((p) => [p.path, p.message]), expected);
    });
  }
  await t.step("valid IPv6 pool", () => {
    const res = readPoolSpec({ cidr: "fd00:10::/64", reserved: [{ cidr: "fd00:10::/120" }] });
    assert.ok(res.ok);
    assert.equal(res.pool.family, 6);
  });
});

Deno.test("readPoolSpec: a gateway is never granted; prefix within the family", async (t) => {
  await t.step("the gateway joins the reserved ranges, in order", () => {
    const res = readPoolSpec({
      cidr: "10.80.0.0/24",
      gateway: "10.80.0.1",
      reserved: [{ cidr: "10.80.0.128/25" }],
    });
    assert.ok(res.ok);
    assert.deepEqual(res.pool.reserved, [
      { start: 0x0a500001n, end: 0x0a500001n },
      { start: 0x0a500080n, end: 0x0a5000ffn },
    ]);
  });
  await t.step("a gateway a reserved range covers is not added twice", () => {
    const res = readPoolSpec({
      cidr: "10.80.0.0/24",
      gateway: "10.80.0.1",
      reserved: [{ cidr: "10.80.0.0/30" }],
    });
    assert.ok(res.ok);
    assert.deepEqual(res.pool.reserved, [{ start: 0x0a500000n, end: 0x0a500003n }]);
  });
  for (
    const [name, spec, expected] of [
      ["gateway outside the CIDR", { cidr: "10.80.0.0/24", gateway: "10.81.0.1" }, [
        "gateway",
        'gateway "10.81.0.1" is not within pool CIDR "10.80.0.0/24"',
      ]],
      ["gateway of the other family", { cidr: "10.80.0.0/24", gateway: "fd00::1" }, [
        "gateway",
        'gateway "fd00::1" is IPv6 but the pool is IPv4',
      ]],
      ["prefix wider than the CIDR", { cidr: "10.80.0.0/24", prefix: 16 }, [
        "prefix",
        "prefix 16 must be between the CIDR's 24 and 32",
      ]],
    ] as const
  ) {
    await t.step(name, () => {
      const res = readPoolSpec(spec);
      assert.ok(!res.ok);
      assert.deepEqual(res.problems.map((p) => [p.path, p.message]), [expected]);
    });
  }
});
