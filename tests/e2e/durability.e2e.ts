/**
 * Durable grants with real Metacontroller (issue #56): twelve ranges granted from a pool (two more granted first and
 * released, so that the survivors are not simply the lowest), then the status of the pool and of every
 * IPAllocation emptied at once through the status subresource. Every range comes back where it was (its record on
 * the IPAllocation is the truth; the pool rebuilds its ledger from the records), none is granted twice, and the
 * pool says it rebuilt.
 */
import assert from "node:assert/strict";
import { getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const API = "butler.butlerlabs.dev/v1alpha1";
const NS = "team-durable-e2e";
const POOL = "durable-pool";
const NAMES = Array.from({ length: 14 }, (_, i) => `a${String(i).padStart(2, "0")}`);
const GONE = ["a02", "a05"];

const apply = (obj: unknown) =>
  kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(obj) });

/** Every IPAllocation of the namespace: `name` → `first-last` from its status, when Allocated. */
async function ranges(): Promise<Map<string, string>> {
  const list = JSON.parse(await kubectlOk(["get", "ipallocations", "-n", NS, "-o", "json"])).items as Obj[];
  return new Map(
    list.filter((a) => a.status?.phase === "Allocated")
      .map((a) => [a.metadata.name, `${a.status.startAddress}-${a.status.endAddress}`]),
  );
}

function overlapping(held: Map<string, string>): string[] {
  const toInt = (a: string) => a.split(".").reduce((n, o) => n * 256 + Number(o), 0);
  const spans = [...held].map(([k, v]) => {
    const [s, e] = v.split("-");
    return { k, s: toInt(s!), e: toInt(e!) };
  });
  return spans.flatMap((x) =>
    spans.filter((y) => y.k > x.k && y.s <= x.e && x.s <= y.e).map((y) => `${x.k}/${y.k}`)
  );
}

Deno.test("durable grants: every status emptied at once moves no range", async (t) => {
  await kubectl(["create", "namespace", NS]);
  try {
    await apply({
      apiVersion: API,
      kind: "NetworkPool",
      metadata: { name: POOL, namespace: "butler-system" },
      spec: { cidr: "10.93.0.0/24", tenantAllocation: { start: "10.93.0.10", end: "10.93.0.250" } },
    });
    for (const [i, name] of NAMES.entries()) {
      await apply({
        apiVersion: API,
        kind: "IPAllocation",
        metadata: { name, namespace: NS },
        spec: {
          poolRef: { name: POOL, namespace: "butler-system" },
          type: i % 2 ? "nodes" : "loadbalancer",
          count: i % 2 ? 5 : 8,
        },
      });
    }
    const before = await eventually("14 ranges granted", async () => {
      const held = await ranges();
      return held.size === NAMES.length ? held : undefined;
    }, 120);
    await kubectlOk(["delete", "ipallocation", "-n", NS, ...GONE, "--wait=true"]);
    for (const gone of GONE) before.delete(gone);
    const records = JSON.parse(await kubectlOk(["get", "ipallocations", "-n", NS, "-o", "json"]))
      .items as Obj[];
    assert.equal(
      records.filter((a) => a.metadata.annotations?.["butler.butlerlabs.dev/grant"]).length,
      before.size,
      "every grant is recorded on its IPAllocation",
    );

    await t.step("the status of the pool and of every IPAllocation emptied at once", async () => {
      const targets = [
        ["networkpool", POOL, "butler-system"],
        ...[...before.keys()].map((n) => ["ipallocation", n, NS]),
      ];
      await Promise.all(
        targets.map(([kind, name, ns]) =>
          kubectlOk([
            "patch",
            kind!,
            name!,
            "-n",
            ns!,
            "--subresource=status",
            "--type=merge",
            "-p",
            '{"status":null}',
          ])
        ),
      );
    });

    await t.step(
      "every range comes back where it was, none twice, and the pool says it rebuilt",
      async () => {
        const after = await eventually("12 ranges Allocated again", async () => {
          const held = await ranges();
          return held.size === before.size ? held : undefined;
        }, 120);
        const moved = [...before].filter(([k, v]) => after.get(k) !== v).map(([k, v]) =>
          `${k}: ${v} -> ${after.get(k)}`
        );
        console.log(
          `durability: ${moved.length} of ${before.size} ranges moved after every status was emptied`,
        );
        assert.deepEqual(moved, []);
        assert.deepEqual(overlapping(after), []);
        const pool = await eventually("the pool holds 12 grants again", async () => {
          const p = await getObject("networkpool", POOL, "butler-system") as Obj | undefined;
          return p?.status?.allocationCount === before.size ? p : undefined;
        });
        const rebuilt = (pool.status.conditions as Obj[]).find((c) => c.type === "LedgerRebuilt");
        assert.equal(rebuilt?.status, "True", JSON.stringify(pool.status.conditions));
      },
    );

    await t.step("a new request is granted afterwards, outside every kept range", async () => {
      await apply({
        apiVersion: API,
        kind: "IPAllocation",
        metadata: { name: "late", namespace: NS },
        spec: { poolRef: { name: POOL, namespace: "butler-system" }, type: "loadbalancer", count: 8 },
      });
      const held = await eventually("late Allocated", async () => {
        const h = await ranges();
        return h.has("late") ? h : undefined;
      }, 60);
      assert.deepEqual(overlapping(held), []);
    });
  } finally {
    await kubectl(["delete", "namespace", NS, "--wait=true", "--timeout=120s"]);
    await kubectl(["delete", "networkpool", POOL, "-n", "butler-system", "--wait=true", "--timeout=60s"]);
  }
});
