/**
 * Pools with real Metacontroller: a pool that overlaps another (stored while the webhook was absent) reports
 * Ready False Overlapping and grants nothing new, keeping its grants, until the other goes; and requests a full
 * pool could not grant are granted as soon as room appears (a release, a pool grown), in arrival order, while a
 * pinned range that is taken waits without blocking them and without a hot loop.
 */
import assert from "node:assert/strict";
import { cluster, getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const API = "butler.butlerlabs.dev/v1alpha1";
const NS = "team-pools-e2e";

const apply = (obj: unknown) =>
  kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(obj) });
const pool = (name: string, spec: Obj) => ({
  apiVersion: API,
  kind: "NetworkPool",
  metadata: { name, namespace: "butler-system" },
  spec,
});
const allocation = (name: string, poolName: string, spec: Obj) => ({
  apiVersion: API,
  kind: "IPAllocation",
  metadata: { name, namespace: NS },
  spec: { poolRef: { name: poolName, namespace: "butler-system" }, type: "loadbalancer", ...spec },
});
const ready = async (name: string) =>
  ((await getObject("networkpool", name, "butler-system")) as Obj | undefined)?.status?.conditions
    ?.find((c: Obj) => c.type === "Ready");
const phase = async (name: string) =>
  ((await getObject("ipallocation", name, NS)) as Obj | undefined)?.status;
/** Why an allocation is not Allocated: its Ready condition's message. */
const why = (status: Obj | undefined): string | undefined =>
  status?.conditions?.find((c: Obj) => c.type === "Ready")?.message;

/** Waits for an allocation's status to be Allocated, and returns it. */
function allocated(name: string, seconds = 60): Promise<Obj> {
  return eventually(`${name} Allocated`, async () => {
    const s = await phase(name);
    return s?.phase === "Allocated" ? s : undefined;
  }, seconds);
}

/** The pool's sync calls so far, from the hook service's log. */
function poolSyncs(name: string): number {
  const log = Deno.readTextFileSync(`${cluster().dir}/hooks.log`);
  return log.split("\n").filter((l) =>
    l.includes('"route":"/hooks/networkpool/sync"') && l.includes(`"name":"${name}"`)
  ).length;
}

Deno.test("pools under real Metacontroller", async (t) => {
  await kubectl(["create", "namespace", NS]);
  try {
    await t.step("a pool stored before the webhook that overlaps another grants nothing new", async () => {
      await apply(pool("ov-a", { cidr: "10.89.0.0/28" }));
      await apply(allocation("held", "ov-a", { count: 2 }));
      await allocated("held");
      // As if stored before the webhook existed: the webhook configuration is set aside while it is created.
      const vwc = JSON.parse(
        await kubectlOk(["get", "validatingwebhookconfiguration", "butler-admission", "-o", "json"]),
      );
      await kubectlOk(["delete", "validatingwebhookconfiguration", "butler-admission"]);
      try {
        await apply(pool("ov-b", { cidr: "10.89.0.0/29" }));
      } finally {
        delete vwc.metadata.resourceVersion;
        delete vwc.metadata.uid;
        delete vwc.metadata.managedFields;
        await kubectlOk(["create", "-f", "-"], { stdin: JSON.stringify(vwc) });
      }
      for (const [name, other] of [["ov-a", "ov-b"], ["ov-b", "ov-a"]] as const) {
        const c = await eventually(`${name} Overlapping`, async () => {
          const r = await ready(name);
          return r?.reason === "Overlapping" ? r : undefined;
        });
        assert.equal(c.status, "False");
        assert.match(
          c.message,
          new RegExp(`^NetworkPool butler-system/${other} can already grant 10\\.89\\.0\\.`),
        );
      }
      await apply(allocation("waits", "ov-a", { count: 1 }));
      const waiting = await eventually("waits refused for the overlap", async () => {
        const s = await phase("waits");
        return why(s)?.includes("overlaps NetworkPool") ? s : undefined;
      });
      assert.notEqual(waiting.phase, "Allocated");
      assert.equal((await phase("held"))?.phase, "Allocated", "existing grants stay");
      // Resolved: the other pool goes, and the waiting request is granted.
      await kubectlOk(["delete", "networkpool", "ov-b", "-n", "butler-system"]);
      await allocated("waits");
      assert.equal((await ready("ov-a"))?.status, "True");
    });

    await t.step("an exhausted request is granted when a release makes room, in arrival order", async () => {
      await apply(pool("rc-pool", { cidr: "10.89.1.0/29" }));
      await apply(allocation("rc-a", "rc-pool", { count: 4 }));
      await allocated("rc-a");
      await apply(allocation("rc-b", "rc-pool", { count: 4 }));
      const b = await allocated("rc-b");
      // A pinned range that is taken, then two requests the full pool cannot grant.
      await apply(allocation("rc-pinned", "rc-pool", {
        pinnedRange: { startAddress: b.startAddress, endAddress: b.startAddress },
      }));
      await apply(allocation("rc-c", "rc-pool", { count: 2 }));
      await new Promise((r) => setTimeout(r, 1100)); // a later creationTimestamp: arrival order is by it
      await apply(allocation("rc-d", "rc-pool", { count: 4 }));
      for (const name of ["rc-pinned", "rc-c", "rc-d"]) {
        await eventually(`${name} refused`, async () => {
          const s = await phase(name);
          return s?.phase && s.phase !== "Allocated" && why(s) ? s : undefined;
        });
      }
      // Quiet: once settled, nothing is written (a hot loop writes status after status), and the pool is synced
      // no more often than its retry interval and the other pools' changes ask for.
      const versions = async () =>
        JSON.stringify(
          await Promise.all(
            [
              ["networkpool", "rc-pool", "butler-system"],
              ...["rc-pinned", "rc-c", "rc-d"].map((n) => [
                "ipallocation",
                n,
                NS,
              ]),
            ].map(async ([kind, name, ns]) =>
              ((await getObject(kind!, name!, ns!)) as Obj | undefined)?.metadata?.resourceVersion
            ),
          ),
        );
      let settled = await versions();
      for (let i = 0; i < 10; i++) {
        await new Promise((r) => setTimeout(r, 3000));
        const now = await versions();
        if (now === settled) break;
        settled = now;
      }
      const syncs = poolSyncs("rc-pool");
      await new Promise((r) => setTimeout(r, 15_000));
      assert.equal(await versions(), settled, "nothing written in 15 s of quiet");
      const quiet = poolSyncs("rc-pool") - syncs;
      assert.ok(quiet <= 1, `${quiet} syncs of rc-pool in 15 s of quiet`);
      // A release: the first waiting request that fits gets the room, well before the 60 s retry.
      await kubectlOk(["delete", "ipallocation", "rc-a", "-n", NS]);
      const c = await allocated("rc-c", 30);
      assert.equal(c.startAddress, "10.89.1.0");
      // rc-d (4) no longer fits in what is left (2): it waits, and so does the taken pinned range.
      assert.notEqual((await phase("rc-d"))?.phase, "Allocated");
      assert.notEqual((await phase("rc-pinned"))?.phase, "Allocated");
    });

    await t.step("an exhausted request is granted when the pool grows", async () => {
      await kubectlOk([
        "patch",
        "networkpool",
        "rc-pool",
        "-n",
        "butler-system",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { cidr: "10.89.1.0/28" } }),
      ]);
      const d = await allocated("rc-d", 30);
      const ledger = ((await getObject("networkpool", "rc-pool", "butler-system")) as Obj).status.ledger;
      assert.equal(d.startAddress, "10.89.1.8", JSON.stringify(ledger));
      assert.notEqual((await phase("rc-pinned"))?.phase, "Allocated", "the taken pinned range still waits");
    });

    await t.step(
      "a released range cools down, then goes to the next request; the history names its holder",
      async () => {
        await apply(pool("cool-pool", { cidr: "10.89.2.0/30", releaseCooldownSeconds: 20 }));
        await apply(allocation("cool-a", "cool-pool", { count: 4 }));
        await allocated("cool-a");
        const uid = ((await getObject("ipallocation", "cool-a", NS)) as Obj).metadata.uid;
        await kubectlOk(["delete", "ipallocation", "cool-a", "-n", NS]);
        const released = Date.now();
        const cooling = await eventually("the range cooling", async () => {
          const s = ((await getObject("networkpool", "cool-pool", "butler-system")) as Obj | undefined)
            ?.status;
          return s?.releases?.cooling?.length ? s : undefined;
        });
        assert.deepEqual(cooling.releases.cooling.map((c: Obj) => c.range), ["10.89.2.0-10.89.2.3"]);
        assert.equal(cooling.coolingIPs, 4);
        assert.deepEqual(cooling.releases.history[0].holder, {
          kind: "IPAllocation",
          uid,
          namespace: NS,
          name: "cool-a",
        });
        await apply(allocation("cool-b", "cool-pool", { count: 4 }));
        await eventually("cool-b waiting for the cooldown", async () => {
          const s = await phase("cool-b");
          return why(s)?.includes("cooling down") ? s : undefined;
        });
        // Nothing else changes: the pool's own resync at the end of the cooldown grants it (the retry is 60 s).
        const b = await allocated("cool-b", 45);
        assert.equal(b.startAddress, "10.89.2.0");
        const waited = (Date.now() - released) / 1000;
        assert.ok(waited >= 19, `granted ${waited} s after the release, within its 20 s cooldown`);
      },
    );
  } finally {
    await kubectl(["delete", "namespace", NS, "--wait=false"]);
    for (const name of ["ov-a", "ov-b", "rc-pool", "cool-pool"]) {
      await kubectl([
        "delete",
        "networkpool",
        name,
        "-n",
        "butler-system",
        "--ignore-not-found",
        "--wait=false",
      ]);
    }
  }
});
