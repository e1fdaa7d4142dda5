/**
 * NetworkPool admission on a real API server, with the shipped webhook configuration, RBAC and policies: a pool
 * that would take addresses another pool can grant is refused naming it, also when many are created at once
 * through two webhook replicas; a dry run writes nothing; a CIDR only grows; tenant ranges are not narrowed past
 * a grant; the deprecated start/end form is warned about; and only the webhook writes the pool registry.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { encodeRecord, uidToken } from "../../lib/pool_ledger/mod.ts";
import {
  api,
  applyObject,
  kubectl,
  kubectlOk,
  serveAdmission,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const NS = "butler-system";
const TEAM_NS = "team-pools";
const ROUNDS = 10;
const CONTENDERS = 12;
const REGISTRY = `/api/v1/namespaces/${NS}/configmaps/butler-pool-registry`;
// Other tiers' pools live in 10.0.0.0/8: these stay apart from them.
const pool = (name: string, spec: Obj) => ({
  apiVersion: API,
  kind: "NetworkPool",
  metadata: { name, namespace: NS },
  spec,
});
/** A merge patch of `pools-a` (of its status with `status`). */
const patchPool = (patch: unknown, status = false) =>
  kubectl([
    "patch",
    "networkpool",
    "pools-a",
    "-n",
    NS,
    ...(status ? ["--subresource=status"] : []),
    "--type=merge",
    "-p",
    JSON.stringify(patch),
  ]);
const create = (obj: unknown, dryRun = false) =>
  api("POST", `/apis/${API}/namespaces/${NS}/networkpools${dryRun ? "?dryRun=All" : ""}`, obj);

Deno.test("NetworkPool admission on a real API server", async (t) => {
  const created: string[] = [];
  // Two replicas of the hook service behind one address, as the Deployment runs them.
  const server = await serveAdmission(2);
  try {
    await kubectlOk(["create", "namespace", TEAM_NS]);
    await applyObject(await shippedWebhooks(`https://127.0.0.1:${server.addr.port}`));
    const first = pool("pools-a", {
      cidr: "172.20.0.0/24",
      reserved: [{ cidr: "172.20.0.0/28" }],
      tenantAllocation: { ranges: [{ start: "172.20.0.16", end: "172.20.0.239" }] },
    });
    // The API server takes a moment to call a webhook just registered: until then the create is not reviewed.
    const admitted = await create(first);
    assert.equal(admitted.status, 201, JSON.stringify(admitted.body));
    await untilRun(
      () =>
        kubectl(["create", "--dry-run=server", "-f", "-"], {
          stdin: JSON.stringify(pool("probe", first.spec)),
        }),
      (r) => r.stderr.includes("can already grant"),
    );
    created.push("pools-a");

    await t.step("a pool over another pool's grantable addresses is refused, naming it", async () => {
      const r = await create(pool("pools-b", { cidr: "172.20.0.128/25" }));
      assert.equal(r.status, 403, JSON.stringify(r.body));
      assert.equal(
        r.body.message,
        'admission webhook "networkpool-changes.admission.butler.butlerlabs.dev" denied the request: spec: Forbidden: NetworkPool butler-system/pools-a can already grant 172.20.0.128-172.20.0.239: pools must not overlap, or two tenants could be given the same addresses',
      );
      // Its reserved addresses and what lies outside its tenant ranges are not its to grant.
      const beside = await create(pool("pools-gateways", { cidr: "172.20.0.0/28" }));
      assert.equal(beside.status, 201, JSON.stringify(beside.body));
      created.push("pools-gateways");
    });

    await t.step("a dry run is decided but records nothing", async () => {
      const before = (await api("GET", REGISTRY)).body as Obj;
      const r = await create(pool("pools-dry", { cidr: "172.20.1.0/24" }), true);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      const after = (await api("GET", REGISTRY)).body as Obj;
      assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
      const refused = await create(pool("pools-dry", { cidr: "172.20.0.0/24" }), true);
      assert.equal(refused.status, 403);
    });

    await t.step(
      `${CONTENDERS} overlapping pools created at once through two replicas: no two admitted overlap, ${ROUNDS} rounds`,
      async () => {
        for (let round = 1; round <= ROUNDS; round++) {
          const results = await Promise.all(
            Array.from({ length: CONTENDERS }, (_, i) =>
              create(pool(`race-${round}-${i}`, {
                cidr: i < 4 ? `172.21.${round}.${i * 32}/27` : `172.21.${round}.0/24`,
              }))),
          );
          const won = results.flatMap((r, i) => r.status === 201 ? [`race-${round}-${i}`] : []);
          created.push(...won);
          const messages = results.filter((r) => r.status !== 201).map((r) => String(r.body.message));
          // The /24s overlap everything; the /27s overlap only the /24s: either one /24, or up to four /27s.
          const wide = won.filter((n) => Number(n.split("-")[2]) >= 4);
          assert.ok(
            wide.length === 1 ? won.length === 1 : wide.length === 0 && won.length >= 1 && won.length <= 4,
            `round ${round}: admitted ${won.join(", ")}; ${messages.slice(0, 2).join(" | ")}`,
          );
          for (const m of messages) assert.match(m, /can already grant 172\.21\./, `round ${round}: ${m}`);
        }
      },
    );

    await t.step("a CIDR only grows", async () => {
      const shrink = await patchPool({ spec: { cidr: "172.20.0.0/25", tenantAllocation: null } });
      assert.notEqual(shrink.code, 0);
      assert.match(
        shrink.stderr,
        /spec\.cidr: Forbidden: new CIDR "172\.20\.0\.0\/25" does not contain the previous CIDR "172\.20\.0\.0\/24"; shrinking a pool may orphan existing allocations/,
      );
    });

    await t.step("tenant ranges are not narrowed past a grant whose IPAllocation exists", async () => {
      await applyObject({
        apiVersion: API,
        kind: "IPAllocation",
        metadata: {
          name: "c1-lb",
          namespace: TEAM_NS,
          labels: { "butler.butlerlabs.dev/network-pool": "pools-a" },
        },
        spec: { poolRef: { name: "pools-a" }, type: "loadbalancer", count: 8 },
      });
      const uid = JSON.parse(await kubectlOk(["get", "ipallocation", "c1-lb", "-n", TEAM_NS, "-o", "json"]))
        .metadata.uid;
      // 172.20.0.200-172.20.0.207, granted.
      const record = encodeRecord(0xac140000n, { start: 0xac1400c8n, end: 0xac1400cfn }, "0", uidToken(uid));
      const written = await patchPool({
        status: { ledger: { version: 2, base: "172.20.0.0", grants: [record] } },
      }, true);
      assert.equal(written.code, 0, written.stderr);
      const narrow = () =>
        patchPool({
          spec: { tenantAllocation: { ranges: [{ start: "172.20.0.16", end: "172.20.0.203" }] } },
        });
      const refused = await narrow();
      assert.notEqual(refused.code, 0);
      assert.match(
        refused.stderr,
        /spec\.tenantAllocation\.ranges: Forbidden: cannot narrow tenant allocation ranges: IPAllocation "team-pools\/c1-lb" has address 172\.20\.0\.204 outside the proposed ranges\. Migrate or delete affected allocations first/,
      );
      // Once the allocation is gone, its grant no longer holds the ranges.
      await kubectlOk(["delete", "ipallocation", "c1-lb", "-n", TEAM_NS]);
      const r = await narrow();
      assert.equal(r.code, 0, r.stderr);
    });

    await t.step("the deprecated start/end form is admitted with a warning", async () => {
      const r = await kubectl(["create", "-f", "-"], {
        stdin: JSON.stringify(pool("pools-legacy", {
          cidr: "172.20.2.0/24",
          tenantAllocation: { start: "172.20.2.10", end: "172.20.2.99" },
        })),
      });
      assert.equal(r.code, 0, r.stderr);
      created.push("pools-legacy");
      assert.match(
        r.stderr,
        /Warning: spec\.tenantAllocation\.start\/end are deprecated: use spec\.tenantAllocation\.ranges: \[\{start: "172\.20\.2\.10", end: "172\.20\.2\.99"\}\]/,
      );
    });

    await t.step("only the webhook writes the pool registry", async () => {
      const edit = await kubectl([
        "patch",
        "configmap",
        "butler-pool-registry",
        "-n",
        NS,
        "--type=merge",
        "-p",
        '{"data":{"butler-system.fake":"{}"}}',
      ]);
      assert.notEqual(edit.code, 0);
      assert.match(
        edit.stderr,
        /ConfigMap butler-pool-registry records the NetworkPools being admitted and is written by the NetworkPool admission webhook only; user "[^"]+" may not update it/,
      );
    });
  } finally {
    await server.shutdown();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    for (const name of created) {
      await kubectl(["delete", "networkpool", name, "-n", NS, "--ignore-not-found", "--wait=false"]);
    }
    await kubectl(["delete", "namespace", TEAM_NS, "--ignore-not-found", "--wait=false"]);
  }
});
