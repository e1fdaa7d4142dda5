import assert from "node:assert/strict";
import { ObservedAllocation } from "./ipallocation.ts";

const allocation = (status: unknown) => ({
  metadata: { name: "a", namespace: "team-a", uid: "u1" },
  spec: { poolRef: { name: "p" }, type: "loadbalancer", count: 1 },
  status,
});

Deno.test("ObservedAllocation: a recorded grant is read within its bounds, and past them is no record", async (t) => {
  const grant = {
    phase: "Allocated",
    startAddress: "10.0.0.1",
    endAddress: "10.0.0.1",
    allocatedBy: "NetworkPool s/p",
  };
  await t.step("at the bounds: 64-character addresses, a 512-character pool", () => {
    const at = {
      ...grant,
      startAddress: "a".repeat(64),
      endAddress: "b".repeat(64),
      allocatedBy: "c".repeat(512),
    };
    assert.deepEqual(ObservedAllocation.parse(allocation(at)).status, at);
  });
  await t.step("one past a bound: the allocation still reads, without a record", () => {
    for (
      const past of [{ startAddress: "a".repeat(65) }, { endAddress: "b".repeat(65) }, {
        allocatedBy: "c".repeat(513),
      }]
    ) {
      const parsed = ObservedAllocation.parse(allocation({ ...grant, ...past }));
      assert.equal(parsed.status, undefined);
      assert.equal(parsed.metadata.uid, "u1");
    }
  });
  await t.step("not Allocated, or no status: no record", () => {
    assert.equal(ObservedAllocation.parse(allocation({ ...grant, phase: "Pending" })).status, undefined);
    assert.equal(ObservedAllocation.parse(allocation(undefined)).status, undefined);
  });
});
