/**
 * NetworkPools as Cluster API IPAM pools with real Metacontroller: Cluster API's IPAM CRDs (from its Go module)
 * and the cluster-api-ipam component, as shipped, pointed at the hook service. 100 IPAddressClaims on one
 * NetworkPool are all granted, each an IPAddress of its own (prefix and gateway from the pool, the gateway never
 * handed out), and all released when the claims go; a claim the full pool cannot serve says PoolExhausted, and
 * deleting it before it was granted leaks nothing.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { getObject, installOperatorCrds, kubectl, kubectlOk, ROOT } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const NS = "capi-e2e";
const CLAIMS = 100;
const CAPI = "ipam.cluster.x-k8s.io/v1beta2";

const claim = (name: string, pool: string) => ({
  apiVersion: CAPI,
  kind: "IPAddressClaim",
  metadata: { name, namespace: NS },
  spec: {
    clusterName: "prod",
    poolRef: { apiGroup: "butler.butlerlabs.dev", kind: "NetworkPool", name: pool },
  },
});
const pool = (name: string, spec: Obj) => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "NetworkPool",
  metadata: { name, namespace: NS },
  spec,
});
const list = async (resource: string): Promise<Obj[]> =>
  JSON.parse(await kubectlOk(["get", resource, "-n", NS, "-o", "json"])).items;
const ready = (c: Obj) => c.status?.conditions?.find((x: Obj) => x.type === "Ready");

Deno.test("Cluster API IPAddressClaims on a NetworkPool under real Metacontroller", async (t) => {
  const hooks = Deno.env.get("BUTLER_HOOKS_URL");
  assert.ok(hooks, "BUTLER_HOOKS_URL is set by tests/e2e/run.ts");
  // Cluster API's IPAM CRDs are among the operator CRDs the install step applies.
  await installOperatorCrds();
  const dc = Deno.readTextFileSync(`${ROOT}/manifests/components/cluster-api-ipam/decoratorcontroller.yaml`)
    .replaceAll("https://butler-hooks.butler-system.svc/", `${hooks}/`)
    .replaceAll("host: butler-hooks.butler-system.svc", `host: ${new URL(hooks).host}`);
  await kubectlOk(["apply", "--server-side", "--validate=strict", "-f", "-"], {
    stdin: JSON.stringify(parse(dc)),
  });
  await kubectl(["create", "namespace", NS]);
  try {
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify(
        pool("node-pool", {
          cidr: "10.90.0.0/24",
          gateway: "10.90.0.1",
          reserved: [{ cidr: "10.90.0.0/32" }],
        }),
      ),
    });

    await t.step(`${CLAIMS} claims: all granted, every address its own, the gateway never`, async () => {
      const items = Array.from({ length: CLAIMS }, (_, i) => claim(`prod-md-0-${i}`, "node-pool"));
      const started = Date.now();
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin: JSON.stringify({ apiVersion: "v1", kind: "List", items }),
      });
      const claims = await eventually(`${CLAIMS} claims Ready`, async () => {
        const all = await list("ipaddressclaims.ipam.cluster.x-k8s.io");
        return all.filter((c) => ready(c)?.status === "True" && c.status.addressRef?.name).length === CLAIMS
          ? all
          : undefined;
      }, 480);
      console.log(
        `  ${CLAIMS} claims Ready with their IPAddresses in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      const addresses = await list("ipaddresses.ipam.cluster.x-k8s.io");
      assert.equal(addresses.length, CLAIMS);
      const ips = addresses.map((a) => a.spec.address);
      assert.equal(new Set(ips).size, CLAIMS, "every address unique");
      assert.ok(
        !ips.includes("10.90.0.1") && !ips.includes("10.90.0.0"),
        "neither the gateway nor a reserved address",
      );
      for (const a of addresses) {
        assert.equal(a.spec.prefix, 24);
        assert.equal(a.spec.gateway, "10.90.0.1");
        assert.deepEqual(a.spec.poolRef, {
          apiGroup: "butler.butlerlabs.dev",
          kind: "NetworkPool",
          name: "node-pool",
        });
        assert.equal(a.metadata.ownerReferences?.[0]?.kind, "IPAddressClaim");
        assert.equal(a.metadata.ownerReferences[0].name, a.spec.claimRef.name);
      }
      for (const c of claims) assert.equal(c.status.addressRef.name, c.metadata.name);
      const p = await getObject("networkpool", "node-pool", NS) as Obj;
      assert.equal(p.status.allocationCount, CLAIMS);
    });

    await t.step(
      "a claim the full pool cannot serve says PoolExhausted; deleted before its grant, nothing leaks",
      async () => {
        await kubectlOk(["apply", "--server-side", "-f", "-"], {
          stdin: JSON.stringify(pool("tiny-pool", { cidr: "10.90.1.0/31" })),
        });
        for (const name of ["tiny-0", "tiny-1", "tiny-2"]) {
          await kubectlOk(["apply", "--server-side", "-f", "-"], {
            stdin: JSON.stringify(claim(name, "tiny-pool")),
          });
        }
        const waiting = await eventually("tiny-2 PoolExhausted", async () => {
          const c = await getObject("ipaddressclaims.ipam.cluster.x-k8s.io", "tiny-2", NS) as Obj | undefined;
          return c && ready(c)?.reason === "PoolExhausted" ? c : undefined;
        }, 120);
        assert.equal(ready(waiting).status, "False");
        assert.equal(waiting.status.deprecated.v1beta1.conditions[0].reason, "PoolExhausted");
        await kubectlOk(["delete", "ipaddressclaims.ipam.cluster.x-k8s.io", "tiny-2", "-n", NS]);
        await eventually("tiny-2's IPAllocation gone, the pool's failures empty", async () => {
          const allocations = await list("ipallocations");
          const p = await getObject("networkpool", "tiny-pool", NS) as Obj;
          return !allocations.some((a) => a.metadata.name === "claim-tiny-2") &&
              Object.keys(p.status?.failures ?? {}).length === 0 && p.status.allocationCount === 2
            ? true
            : undefined;
        }, 120);
      },
    );

    await t.step("deleting the claims releases every address", async () => {
      await kubectlOk(["delete", "ipaddressclaims.ipam.cluster.x-k8s.io", "--all", "-n", NS, "--wait=false"]);
      const started = Date.now();
      await eventually("every grant released", async () => {
        const pools = await Promise.all(
          ["node-pool", "tiny-pool"].map((n) => getObject("networkpool", n, NS)),
        );
        const left = [
          ...(await list("ipallocations")),
          ...(await list("ipaddresses.ipam.cluster.x-k8s.io")),
        ];
        return pools.every((p) => (p as Obj).status?.allocationCount === 0) && left.length === 0
          ? true
          : undefined;
      }, 300);
      console.log(`  every grant released in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const p = await getObject("networkpool", "node-pool", NS) as Obj;
      assert.equal(p.status.releases.total, CLAIMS, "every release in the pool's history total");
    });
  } finally {
    await kubectl(["delete", "namespace", NS, "--wait=false"]);
  }
});
