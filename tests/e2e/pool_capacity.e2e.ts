/**
 * Pool capacity Events with real Metacontroller: a pool filled past 70 % gets a PoolCapacityWarning Event from
 * the hook service (`kubectl get events --field-selector reason=PoolCapacityWarning`), its status records the
 * announcement, and the hooks were only ever called with Metacontroller's client certificate.
 */
import assert from "node:assert/strict";
import { cluster, getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

Deno.test("a pool filled past 70% gets a PoolCapacityWarning Event", async (t) => {
  const ns = "team-capacity";
  await kubectl(["create", "namespace", ns]);
  await kubectlOk(["apply", "--server-side", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "NetworkPool",
      metadata: { name: "cap-pool", namespace: "butler-system" },
      spec: { cidr: "10.88.0.0/29" },
    }),
  });
  // 6 of 8 addresses: 75 %, at or above the 70 % tier, below 85 %.
  for (const [name, count] of [["a", 4], ["b", 2]] as const) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "IPAllocation",
        metadata: { name, namespace: ns },
        spec: { poolRef: { name: "cap-pool", namespace: "butler-system" }, type: "loadbalancer", count },
      }),
    });
  }
  await t.step("the Event, as the seed's kubectl command lists it", async () => {
    const event = await eventually("a PoolCapacityWarning Event", async () => {
      const list = JSON.parse(
        await kubectlOk([
          "get",
          "events",
          "-n",
          "butler-system",
          "--field-selector",
          "reason=PoolCapacityWarning",
          "-o",
          "json",
        ]),
      );
      return (list.items as Obj[]).find((e) => e.involvedObject.name === "cap-pool");
    });
    assert.equal(event.type, "Warning");
    assert.equal(event.involvedObject.kind, "NetworkPool");
    assert.equal(event.source.component, "butler-hooks");
    assert.equal(
      event.message,
      "Pool filling up: at or above the 70% threshold of CapacityWarning. Pool utilization is 75% (6/8 IPs)",
    );
  });
  await t.step("the pool's status records what was announced; no higher tier", async () => {
    // The Event is written as the hook answers; Metacontroller writes the status a moment later.
    const pool = await eventually("status.capacityEvents", async () => {
      const o = await getObject("networkpool", "cap-pool", "butler-system") as Obj | undefined;
      return o?.status?.capacityEvents ? o : undefined;
    });
    assert.deepEqual(pool.status.capacityEvents.map((a: Obj) => [a.type, a.status]), [[
      "CapacityWarning",
      "True",
    ]]);
    const critical = await kubectlOk([
      "get",
      "events",
      "-n",
      "butler-system",
      "--field-selector",
      "reason=PoolCapacityCritical,involvedObject.name=cap-pool",
      "-o",
      "name",
    ]);
    assert.equal(critical.trim(), "");
  });
  await t.step("every hook call came with Metacontroller's client certificate (none refused)", () => {
    const log = Deno.readTextFileSync(`${cluster().dir}/hooks.log`);
    assert.match(log, /"route":"\/hooks\/networkpool\/sync","status":200/);
    assert.doesNotMatch(log, /"status":403/);
  });
});
