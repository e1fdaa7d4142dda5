/**
 * The LoadBalancer reporter against real API servers: the test cluster is the management cluster, and a second
 * control plane is the tenant, reached through a TCP proxy the test can cut and restore. The reporter runs as
 * `main.ts reporter` with the shipped ServiceAccount's RBAC (a token of `butler-reporter`), with shortened
 * Lease, heartbeat and recheck periods.
 */
import assert from "node:assert/strict";
import { REPORTER_BINDING } from "../../hooks/team/mod.ts";
import { syncTenantCluster } from "../../hooks/tenantcluster/mod.ts";
import { KINDS } from "../../lib/butler/mod.ts";
import { groupKey } from "../../lib/contract/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { b64, startTestTenant } from "./tenant.ts";
import {
  api,
  cluster,
  denoDir,
  freePort,
  installManifests,
  kubectl,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "./cluster.ts";
import { parse } from "yaml";

const NS = "team-reporter-a";
const PC = "reporter-elastic";
const GROUP = "/apis/butler.butlerlabs.dev/v1alpha1";
const inventoryPath = (name: string) => `${GROUP}/namespaces/${NS}/loadbalancerinventories/${name}`;

interface Inventory {
  metadata: { ownerReferences?: { kind: string; name: string; uid: string }[] };
  spec: { observedAt: string; services?: { namespace: string; name: string; ingressIPs?: string[] }[] };
  status?: {
    services?: number;
    pending?: number;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
}

async function inventory(name: string): Promise<Inventory | undefined> {
  const r = await api("GET", inventoryPath(name));
  return r.status === 200 ? r.body as unknown as Inventory : undefined;
}

/** Polls until `check` holds; returns the milliseconds it took. */
async function within(ms: number, what: string, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < ms) {
    if (await check()) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${ms} ms`);
}

const reporting = (inv: Inventory | undefined) =>
  inv?.status?.conditions?.find((c) => c.type === "Reporting");

/** A TCP proxy to the tenant API server that the test can cut (close everything) and restore on the same port. */
function tcpProxy(target: number) {
  const port = freePort();
  let listener: Deno.Listener | undefined;
  const conns = new Set<Deno.Conn>();
  async function serve(l: Deno.Listener) {
    for await (const inbound of l) {
      Deno.connect({ hostname: "127.0.0.1", port: target }).then((outbound) => {
        conns.add(inbound).add(outbound);
        const close = () => {
          for (const c of [inbound, outbound]) {
            conns.delete(c);
            try {
              c.close();
            } catch { /* closed */ }
          }
        };
        inbound.readable.pipeTo(outbound.writable).catch(() => {}).finally(close);
        outbound.readable.pipeTo(inbound.writable).catch(() => {}).finally(close);
      }, () => inbound.close());
    }
  }
  const open = () => {
    listener = Deno.listen({ hostname: "127.0.0.1", port });
    serve(listener).catch(() => {});
  };
  open();
  return {
    port,
    cut() {
      listener?.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      conns.clear();
    },
    restore: open,
  };
}

Deno.test("the LoadBalancer reporter, a real management cluster and a real tenant cluster", async (t) => {
  await installManifests();
  // The tenant: tokens bound to tenant Secrets (deleting one revokes it), reached through the proxy.
  const tenant = await startTestTenant();
  const proxy = tcpProxy(Number(new URL(tenant.server).port));
  const reporters: { name: string; child: Deno.ChildProcess; port: number; log: string }[] = [];
  const mgmt = cluster();
  const kubeconfig = (token: string) => tenant.kubeconfig(token, `https://127.0.0.1:${proxy.port}`);
  const putSecret = (name: string, text: string) =>
    kubectlOk(["apply", "--server-side", "--force-conflicts", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name, namespace: NS },
        data: { value: b64(text) },
      }),
    });

  // The management side: an elastic ProviderConfig, TenantClusters, and the reporter's shipped RBAC.
  // A team namespace, as its Team makes it: TenantClusters live nowhere else.
  await kubectlOk(["create", "namespace", NS]);
  await kubectlOk(["label", "namespace", NS, `butler.butlerlabs.dev/team=${NS.slice(5)}`]);
  const pc = Deno.readTextFileSync(`${ROOT}/examples/providerconfigs/proxmox-elastic.yaml`)
    .replace("name: proxmox-elastic", `name: ${PC}`);
  await kubectlOk(["apply", "-f", "-"], { stdin: pc });
  const tc = (name: string) =>
    kubectlOk(["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "TenantCluster",
        metadata: { name, namespace: NS },
        spec: { providerConfigRef: { name: PC } },
      }),
    });
  await kubectlOk([
    "apply",
    "-f",
    `${ROOT}/manifests/components/reporter/serviceaccount.yaml`,
    "-f",
    `${ROOT}/manifests/components/reporter/rbac.yaml`,
  ]);
  // The reporter may get Secrets only where a Team's hook binds it, in the team namespace: as it does.
  await kubectlOk(["apply", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: REPORTER_BINDING, namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REPORTER_BINDING },
      subjects: [{ kind: "ServiceAccount", name: "butler-reporter", namespace: "butler-system" }],
    }),
  });
  const reporterCan = async (ns: string) =>
    (await kubectl([
      "auth",
      "can-i",
      "get",
      "secrets",
      "-n",
      ns,
      "--as=system:serviceaccount:butler-system:butler-reporter",
    ])).stdout.trim();
  assert.equal(await reporterCan(NS), "yes");
  assert.equal(await reporterCan("butler-system"), "no", "never the CA's key or provider credentials");
  assert.equal(await reporterCan("kube-system"), "no");
  const saToken =
    (await kubectlOk(["create", "token", "butler-reporter", "-n", "butler-system", "--duration=1h"]))
      .trim();
  const mgmtKubeconfig = `${tenant.dir}/management-kubeconfig`;
  Deno.writeTextFileSync(
    mgmtKubeconfig,
    tokenKubeconfig(mgmt.server, saToken, { caData: b64(Deno.readTextFileSync(`${mgmt.dir}/ca.crt`)) }),
  );
  const cache = await denoDir();
  const reporterContainer = (parse(
    Deno.readTextFileSync(`${ROOT}/manifests/components/reporter/deployment.yaml`),
  ) as { spec: { template: { spec: { containers: { args: string[] }[] } } } }).spec.template.spec
    .containers[0]!;
  function startReporter(name: string) {
    const port = freePort();
    const log = `${tenant.dir}/${name}.log`;
    // The shipped command line (Deno's permissions narrowed), its ServiceAccount folder mapped to where the
    // management kubeconfig is.
    const args = reporterContainer.args.map((a) =>
      mapShipped(a, [
        ["/var/run/secrets/kubernetes.io/serviceaccount", tenant.dir],
        ["/deno-dir", cache],
        ["/app", ROOT],
      ])
    );
    const child = spawnLogged([Deno.execPath(), ...args], log, {
      KUBECONFIG: mgmtKubeconfig,
      HOSTNAME: name,
      POD_NAMESPACE: "butler-system",
      HOST: "127.0.0.1",
      PORT: String(port),
      REPORTER_LEASE_SECONDS: "6",
      REPORTER_RENEW_SECONDS: "2",
      REPORTER_HEARTBEAT_SECONDS: "5",
      KUBECONFIG_RECHECK_SECONDS: "2",
      // As the component's Deployment sets it: /metrics and /tenants answer only a token that may get them.
      METRICS_AUTH: "kubernetes",
    });
    reporters.push({ name, child, port, log });
    return { name, child, port, log };
  }
  const ours = (tenants: Record<string, string>) =>
    Object.keys(tenants).filter((k) => k.startsWith(`${NS}/`)).sort();
  // A reader of /tenants: an account bound to the shipped ClusterRole butler-metrics-reader.
  await kubectl(["create", "serviceaccount", "reporter-test-reader", "-n", "butler-system"]);
  await kubectl([
    "create",
    "clusterrolebinding",
    "reporter-test-reader",
    "--clusterrole=butler-metrics-reader",
    "--serviceaccount=butler-system:reporter-test-reader",
  ]);
  const reader = (await kubectlOk(["create", "token", "reporter-test-reader", "-n", "butler-system"])).trim();
  const tenantsOf = async (port: number) =>
    ((await (await fetch(`http://127.0.0.1:${port}/tenants`, {
      headers: { authorization: `Bearer ${reader}` },
    }))
      .json()) as { tenants: Record<string, string> })
      .tenants;

  try {
    const tokenA = await tenant.token("token-a");
    await putSecret("c1-kubeconfig", kubeconfig(tokenA));
    await tc("c1");
    const first = startReporter("reporter-1");

    await t.step("the inventory is created from the first read, owned by its TenantCluster", async () => {
      await within(30_000, "inventory c1", async () => reporting(await inventory("c1")) !== undefined);
      const inv = (await inventory("c1"))!;
      assert.equal(inv.metadata.ownerReferences?.[0]?.kind, "TenantCluster");
      assert.deepEqual(inv.spec.services ?? [], []);
      assert.equal(reporting(inv)?.reason, "Watching");
    });

    await t.step("/tenants and /metrics answer only a token the API server says may get them", async () => {
      for (const path of ["/tenants", "/metrics"]) {
        const anonymous = await fetch(`http://127.0.0.1:${first.port}${path}`);
        assert.equal(anonymous.status, 401);
        assert.match((await anonymous.json()).error, /needs a token whose user may get it: no bearer token/);
        const hooks = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system"])).trim();
        const other = await fetch(`http://127.0.0.1:${first.port}${path}`, {
          headers: { authorization: `Bearer ${hooks}` },
        });
        assert.equal(other.status, 403);
        await other.body?.cancel();
        const ok = await fetch(`http://127.0.0.1:${first.port}${path}`, {
          headers: { authorization: `Bearer ${reader}` },
        });
        assert.equal(ok.status, 200);
        await ok.body?.cancel();
      }
    });

    await t.step("a LoadBalancer Service created in the tenant shows up pending within 2 s", async () => {
      await tenant.service("shop");
      const ms = await within(2000, "pending Service", async () => {
        const s = (await inventory("c1"))?.spec.services?.find((s) => s.name === "shop");
        return s !== undefined && !s.ingressIPs;
      });
      console.log(`  pending Service in the inventory after ${ms.toFixed(0)} ms`);
      // The status follows the spec in a second write.
      await within(
        2000,
        "pending count in status",
        async () => (await inventory("c1"))?.status?.pending === 1,
      );
    });

    await t.step("assigning it an address shows within 2 s", async () => {
      await tenant.assign("shop", "192.168.10.40");
      const ms = await within(2000, "assigned address", async () => {
        const s = (await inventory("c1"))?.spec.services?.find((s) => s.name === "shop");
        return s?.ingressIPs?.[0] === "192.168.10.40";
      });
      console.log(`  assigned address in the inventory after ${ms.toFixed(0)} ms`);
    });

    await t.step(
      "observedAt rests while no decision waits on the demand, and beats while a release counts down",
      async () => {
        // Nothing pending and no countdown: the idle period (600 s) applies, not the 5 s one, which would have
        // beaten within 10 s (its period plus the worker's 5 s tick).
        const before = (await inventory("c1"))!.spec.observedAt;
        await new Promise((r) => setTimeout(r, 11_000));
        assert.equal((await inventory("c1"))!.spec.observedAt, before, "no heartbeat at rest");
        // The TenantCluster starts a release countdown (as its hook records it): the reporter, watching it,
        // refreshes observedAt every heartbeat from then on.
        const countdown = (unusedSince: Record<string, string> | null) =>
          kubectlOk([
            "patch",
            "tenantcluster",
            "c1",
            "-n",
            NS,
            "--subresource=status",
            "--type=merge",
            "-p",
            JSON.stringify({ status: { ipam: { unusedSince } } }),
          ]);
        await countdown({ "c1-lb-2": new Date().toISOString().replace(/\.\d+Z$/, "Z") });
        const first = await within(
          12_000,
          "heartbeat",
          async () => (await inventory("c1"))!.spec.observedAt !== before,
        );
        const beat = (await inventory("c1"))!.spec.observedAt;
        await within(
          12_000,
          "another heartbeat",
          async () => (await inventory("c1"))!.spec.observedAt !== beat,
        );
        console.log(`  first heartbeat ${first.toFixed(0)} ms after the countdown started`);
        await countdown(null);
      },
    );

    await t.step(
      "kubeconfig rotation: refused credentials show, rotated ones are used without a restart",
      async () => {
        await putSecret("c1-kubeconfig", kubeconfig("not-a-token"));
        await within(
          15_000,
          "Unauthorized",
          async () => reporting(await inventory("c1"))?.reason === "Unauthorized",
        );
        const tokenB = await tenant.token("token-b");
        await putSecret("c1-kubeconfig", kubeconfig(tokenB));
        await tenant.kubectl(["delete", "secret", "token-a", "-n", "default"]); // token A no longer works anywhere
        await within(
          15_000,
          "Watching again",
          async () => reporting(await inventory("c1"))?.reason === "Watching",
        );
        await tenant.service("api");
        await within(
          3000,
          "Service read with token B",
          async () => (await inventory("c1"))?.spec.services?.some((s) => s.name === "api") ?? false,
        );
      },
    );

    await t.step(
      "cutting the tenant's API server stops observedAt; the hook then reports DemandUnknown",
      async () => {
        proxy.cut();
        await within(
          15_000,
          "Unreachable",
          async () => reporting(await inventory("c1"))?.reason === "Unreachable",
        );
        const frozen = (await inventory("c1"))!;
        await new Promise((r) => setTimeout(r, 7000)); // more than a heartbeat
        const later = (await inventory("c1"))!;
        assert.equal(later.spec.observedAt, frozen.spec.observedAt);
        assert.equal(later.spec.services?.length, 2, "the last known Services are kept");
        // The stored inventory as the TenantCluster hook reads it (in the elastic fixture's request): five minutes
        // after the last observedAt no elastic decision is made; ten seconds after, the same request decides.
        const fixture = JSON.parse(Deno.readTextFileSync(
          `${ROOT}/tests/fixtures/tenantcluster/sync/elastic-growth-3-pending-1-in-flight/request.json`,
        ));
        const group = groupKey(KINDS.LoadBalancerInventory);
        const key = Object.keys(fixture.related[group])[0]!;
        fixture.related[group][key] = { ...fixture.related[group][key], spec: later.spec };
        const elastic = (seconds: number) => {
          const now = new Date(Date.parse(later.spec.observedAt) + seconds * 1000);
          const out = syncTenantCluster(fixture, { now, config: DEFAULT_HOOK_CONFIG }) as unknown as {
            status: { conditions: { type: string; reason: string; message: string }[] };
          };
          return out.status.conditions.find((c) => c.type === "ElasticIPAM")!;
        };
        assert.equal(elastic(301).reason, "DemandUnknown");
        assert.match(elastic(301).message, new RegExp(`last observed at ${later.spec.observedAt}`));
        assert.notEqual(elastic(10).reason, "DemandUnknown");
        proxy.restore();
        await within(30_000, "recovered", async () => {
          const inv = await inventory("c1");
          return reporting(inv)?.reason === "Watching" && inv!.spec.observedAt !== frozen.spec.observedAt;
        });
      },
    );

    await t.step(
      "two replicas share the tenants; one killed, the other takes them within the Lease",
      async () => {
        for (const name of ["c2", "c3", "c4", "c5", "c6"]) {
          await putSecret(`${name}-kubeconfig`, kubeconfig(await tenant.token(`token-${name}`)));
          await tc(name);
        }
        const second = startReporter("reporter-2");
        const all = ["c1", "c2", "c3", "c4", "c5", "c6"].map((n) => `${NS}/${n}`);
        let split: [string[], string[]] = [[], []];
        await within(30_000, "tenants split over two replicas", async () => {
          try {
            const [a, b] = [await tenantsOf(first.port), await tenantsOf(second.port)];
            split = [ours(a), ours(b)];
            return split[0].length > 0 && split[1].length > 0 &&
              [...split[0], ...split[1]].sort().join() === all.join();
          } catch {
            return false;
          }
        });
        console.log(`  reporter-1 watches ${split[0].join(", ")}; reporter-2 watches ${split[1].join(", ")}`);
        first.child.kill("SIGKILL");
        await first.child.status;
        const ms = await within(30_000, "the survivor holds every tenant", async () => {
          const b = Object.keys(await tenantsOf(second.port)).filter((k) => k.startsWith(`${NS}/`)).sort();
          return b.join() === all.join();
        });
        console.log(`  the survivor took the dead replica's tenants after ${(ms / 1000).toFixed(1)} s`);
        await tenant.service("after-failover");
        await within(10_000, "every inventory is written by the survivor", async () => {
          for (const n of ["c1", "c2", "c3", "c4", "c5", "c6"]) {
            const inv = await inventory(n);
            if (!inv?.spec.services?.some((s) => s.name === "after-failover")) return false;
          }
          return true;
        });
      },
    );

    await t.step("a deleted TenantCluster's watch stops and its inventory goes with it", async () => {
      assert.ok(await inventory("c6"), "c6 has an inventory to lose");
      await kubectlOk(["delete", "tenantcluster", "c6", "-n", NS, "--wait=false"]);
      await within(30_000, "inventory c6 collected", async () => (await inventory("c6")) === undefined);
      const survivor = reporters[1]!;
      await within(
        10_000,
        "c6 no longer watched",
        async () => !(`${NS}/c6` in await tenantsOf(survivor.port)),
      );
    });
  } finally {
    for (const r of reporters) {
      try {
        r.child.kill("SIGTERM");
      } catch { /* gone */ }
      await r.child.status;
    }
    proxy.cut();
    await tenant.stop();
    await kubectlOk(["delete", "namespace", NS, "--wait=false"]).catch(() => "");
  }
});
