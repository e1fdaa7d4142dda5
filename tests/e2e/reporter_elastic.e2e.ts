/**
 * The seed's elastic scenario end to end: real Metacontroller and hook service on the management cluster, a
 * second control plane as the tenant (with MetalLB's own CRDs), and `main.ts reporter` between them. Services
 * pending beyond the supply for more than 30 s create growth allocations; the MetalLB ConfigMap and the tenant's
 * `IPAddressPool default-pool` (applied by the reporter) gain their addresses; once the Services using them are
 * gone the growth is released after the grace (20 s here: the runner sets `TEST_SHRINK_GRACE_SECONDS`, tests only;
 * the shipped grace is the seed's 10 minutes) and the pool follows. A manual edit of the pool in the tenant is
 * reverted, and a static cluster's addresses reach the tenant the same way.
 * Runs after `lifecycle.e2e.ts` (files run in name order), which installs `manifests/`.
 */
import assert from "node:assert/strict";
import { b64, startTestTenant } from "../api/tenant.ts";
import { cluster, getObject, kubectlOk, ROOT } from "../api/cluster.ts";
import { startReporter } from "./stack.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const TEAM = "e2e-elastic";
const NS = `team-${TEAM}`;
const TC = "web";

const allocations =
  async () => (JSON.parse(await kubectlOk(["get", "ipallocations", "-n", NS, "-o", "json"])).items as Obj[]);
const metallb = async () => {
  const cm = await getObject("configmap", `${TC}-metallb`, NS) as Obj | undefined;
  return cm ? Object.values(cm.data as Record<string, string>).join("\n") : "";
};
/** The TenantCluster's addresses, as its status lists them for MetalLB. */
const statusAddresses = async (name = TC) =>
  ((await getObject("tenantcluster", name, NS) as Obj | undefined)?.status?.loadBalancer?.addresses ??
    []) as string[];

Deno.test("elastic IPAM end to end: tenant Services -> reporter -> growth -> MetalLB -> release", async (t) => {
  const tenant = await startTestTenant();
  const mgmt = cluster();
  let reporter: Deno.ChildProcess | undefined;
  try {
    const token = await tenant.token();
    const { service, assign } = tenant;
    await tenant.installMetalLB();
    /** Waits until the tenant's pool lists exactly what the TenantCluster's status lists (and that is `expect`). */
    const poolFollows = (what: string, expect: (addresses: string[]) => boolean, name = TC) =>
      eventually(`tenant IPAddressPool: ${what}`, async () => {
        const want = await statusAddresses(name);
        const pool = await tenant.metallbPool();
        const got = pool?.spec?.addresses ?? [];
        return want.length && expect(want) && JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
      }, 120);

    // The management side: the seed's elastic ProviderConfig, its credentials and pool, a Team, and the cluster.
    await kubectlOk(["apply", "--server-side", "-f", "examples/ipam/elastic/"]);
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "Team",
        metadata: { name: TEAM },
        spec: {
          displayName: "Elastic e2e",
          access: { users: [{ name: "erin@example.com", role: "admin" }] },
        },
      }),
    });
    await eventually(`namespace ${NS}`, () => getObject("namespace", NS));
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `${TC}-kubeconfig`, namespace: NS },
        data: {
          value: b64(tenant.kubeconfig(token)),
        },
      }),
    });
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: TC, namespace: NS },
        spec: {
          providerConfigRef: { name: "nutanix-elastic" },
          kubernetesVersion: "v1.31.0",
          workers: { replicas: 2, machineTemplate: { cpu: 4, memory: "16Gi", diskSize: "100Gi" } },
        },
      }),
    });
    reporter = await startReporter({
      plane: mgmt,
      name: "e2e-reporter",
      port: 0,
      kubeconfig: mgmt.kubeconfig,
      log: `${mgmt.dir}/reporter.log`,
      env: { REPORTER_HEARTBEAT_SECONDS: "10", METALLB_RESYNC_SECONDS: "5" },
    });

    let initial: string[] = [];
    await t.step(
      "the cluster is Ready with its 2 initial addresses, and the reporter writes its inventory",
      async () => {
        const lb = await eventually("initial LB allocation", async () => {
          const a = (await allocations()).find((a) => a.metadata.name === `${TC}-lb`);
          return a?.status?.phase === "Allocated" ? a : undefined;
        }, 120);
        initial = lb.status.addresses;
        assert.equal(initial.length, 2);
        const inv = await eventually("inventory", async () => {
          const o = await getObject("loadbalancerinventory", TC, NS) as Obj | undefined;
          return o?.status?.conditions?.find((c: Obj) => c.type === "Reporting")?.reason === "Watching"
            ? o
            : undefined;
        });
        assert.deepEqual(inv.spec.services ?? [], []);
        const pool = await poolFollows("the initial addresses", (a) => a.length === 1);
        assert.equal(pool[0], `${initial[0]}-${initial[1]}`);
        const applied = await eventually("MetalLBApplied", async () => {
          const o = await getObject("loadbalancerinventory", TC, NS) as Obj;
          return o.status?.conditions?.find((c: Obj) => c.type === "MetalLBApplied" && c.status === "True");
        });
        assert.equal(applied.reason, "Applied");
      },
    );

    await t.step(
      "two Services use the initial addresses; two more stay pending past 30 s and grow",
      async () => {
        await service("shop");
        await service("api");
        await assign("shop", initial[0]!);
        await assign("api", initial[1]!);
        await service("search");
        await service("mail");
        const growth = await eventually("two growth allocations Allocated", async () => {
          const g = (await allocations()).filter((a) =>
            a.metadata.name.startsWith(`${TC}-lb-`) && a.status?.phase === "Allocated"
          );
          return g.length === 2 ? g : undefined;
        }, 120);
        const added = growth.flatMap((g) => g.status.addresses as string[]);
        assert.equal(added.length, 2);
        const text = await eventually("MetalLB ConfigMap with the growth", async () => {
          const t = await metallb();
          return added.every((ip) => t.includes(ip)) ? t : undefined;
        });
        for (const ip of initial) assert.ok(text.includes(ip), text);
        const pool = await poolFollows("the initial and the growth addresses", (a) => a.length === 3);
        for (const ip of added) assert.ok(pool.some((r) => r.split("-").includes(ip)), pool.join(", "));
        // MetalLB gives the pending Services the new addresses: the growth is in use and the cluster at rest.
        await assign("search", added[0]!);
        await assign("mail", added[1]!);
        const elastic = await eventually("ElasticIPAM AtRest", async () => {
          const tc = await getObject("tenantcluster", TC, NS) as Obj;
          const c = tc.status.conditions.find((c: Obj) => c.type === "ElasticIPAM");
          return c?.reason === "AtRest" ? c : undefined;
        });
        assert.equal(elastic.status, "True", JSON.stringify(elastic));
        assert.equal((await allocations()).filter((a) => a.metadata.name.startsWith(`${TC}-lb-`)).length, 2);
      },
    );

    await t.step(
      "the Services on the growth are deleted: it is released after the grace, not before",
      async () => {
        const before = Date.now();
        await tenant.kubectl(["delete", "service", "search", "mail", "-n", "default"]);
        await eventually("growth released", async () => {
          const g = (await allocations()).filter((a) => a.metadata.name.startsWith(`${TC}-lb-`));
          return g.length === 0 ? true : undefined;
        }, 120);
        const seconds = (Date.now() - before) / 1000;
        assert.ok(seconds >= 20, `released after ${seconds.toFixed(1)} s, not before the 20 s grace`);
        const text = await eventually("MetalLB ConfigMap back to the initial addresses", async () => {
          const t = await metallb();
          return initial.every((ip) => t.includes(ip)) && (t.match(/\d+\.\d+\.\d+\.\d+/g) ?? []).length <= 4
            ? t
            : undefined;
        });
        const initialAllocation = (await allocations()).find((a) => a.metadata.name === `${TC}-lb`);
        assert.equal(initialAllocation?.status?.phase, "Allocated", "the initial allocation is never shrunk");
        assert.ok(text.length > 0);
        await poolFollows("back to the initial addresses", (a) => a.length === 1);
      },
    );

    await t.step("a manual edit of the tenant's pool is reverted", async () => {
      const want = await statusAddresses();
      await tenant.kubectl([
        "patch",
        "ipaddresspool",
        "default-pool",
        "-n",
        "metallb-system",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { addresses: ["192.0.2.10-192.0.2.20"] } }),
      ]);
      const reverted = await eventually("the pool reverted", async () => {
        const got = (await tenant.metallbPool())?.spec?.addresses ?? [];
        return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
      }, 60);
      assert.ok(!reverted.includes("192.0.2.10-192.0.2.20"));
    });

    await t.step("the cluster, its allocations and its inventory go", async () => {
      await kubectlOk(["delete", "tenantcluster", TC, "-n", NS, "--wait=false"]);
      await eventually(
        "TenantCluster gone",
        async () => (await getObject("tenantcluster", TC, NS)) ? undefined : true,
        120,
      );
      await eventually(
        "inventory collected",
        async () => (await getObject("loadbalancerinventory", TC, NS)) ? undefined : true,
      );
    });

    await t.step("a static cluster's addresses reach the tenant too", async () => {
      const creds = Deno.readTextFileSync(`${ROOT}/examples/credentials/harvester-credentials.yaml`);
      await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: creds });
      await kubectlOk(["apply", "--server-side", "-f", "examples/ipam/single-pool/"]);
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "v1",
          kind: "Secret",
          metadata: { name: "static-kubeconfig", namespace: NS },
          data: { value: b64(tenant.kubeconfig(token)) },
        }),
      });
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin: JSON.stringify({
          apiVersion: "butler.butlerlabs.dev/v1alpha1",
          kind: "TenantCluster",
          metadata: { name: "static", namespace: NS },
          spec: { providerConfigRef: { name: "harvester-lab" }, kubernetesVersion: "v1.31.0" },
        }),
      });
      const pool = await poolFollows("the static cluster's 8 addresses", (a) => a.length === 1, "static");
      assert.match(pool[0]!, /^10\.40\.\d+\.\d+-10\.40\.\d+\.\d+$/);
      await kubectlOk(["delete", "tenantcluster", "static", "-n", NS, "--wait=false"]);
      await eventually(
        "static TenantCluster gone",
        async () => (await getObject("tenantcluster", "static", NS)) ? undefined : true,
        120,
      );
    });

    await t.step("cleanup: the team and its namespace go", async () => {
      await kubectlOk(["delete", "team", TEAM, "--wait=false"]);
      await eventually(
        "namespace gone",
        async () => (await getObject("namespace", NS)) ? undefined : true,
        120,
      );
      await kubectlOk(["delete", "-f", "examples/ipam/elastic/", "--wait=false"]);
      await kubectlOk(["delete", "-f", "examples/ipam/single-pool/", "--wait=false"]);
    });
  } finally {
    try {
      reporter?.kill("SIGTERM");
    } catch { /* gone */ }
    await reporter?.status;
    await tenant.stop();
  }
});
