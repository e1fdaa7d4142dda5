/**
 * The admission webhooks on a real API server: the shipped ValidatingWebhookConfiguration (rules,
 * matchConditions, namespaceSelector, failurePolicy) pointed at the hook service's routes over TLS, the routes
 * reading the API with the kube client. Deletes refused while in use, an environment removal refused while
 * TenantClusters use it, another team's ProviderConfig refused; and with the service down, what each
 * failurePolicy does.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { encodeRecord, uidToken } from "../../lib/pool_ledger/mod.ts";
import {
  applyObject,
  installManifests,
  kubectl,
  kubectlOk,
  ROOT,
  serveAdmission,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const NS = "team-webhooks";
const OTHER_NS = "team-webhooks-data";

const harvester = (name: string, namespace: string, scope?: Obj) => ({
  apiVersion: API,
  kind: "ProviderConfig",
  metadata: { name, namespace },
  spec: {
    provider: "harvester",
    credentialsRef: { name: "harvester-kubeconfig" },
    harvester: { namespace: "default", networkName: "default/vlan40" },
    ...(scope ? { scope } : {}),
  },
});

const tenantCluster = (name: string, pc: { name: string; namespace?: string }, env?: string) => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: { name, namespace: NS, ...(env ? { labels: { "butler.butlerlabs.dev/environment": env } } : {}) },
  spec: { providerConfigRef: pc },
});

function refused(r: { code: number; stderr: string }, message: string): void {
  assert.notEqual(r.code, 0, "refused");
  assert.ok(r.stderr.includes(message), `expected "${message}" in: ${r.stderr}`);
}

function allowed(r: { code: number; stderr: string }): void {
  assert.equal(r.code, 0, r.stderr);
}

Deno.test("admission webhooks on a real API server", async (t) => {
  await installManifests();
  let server: Deno.HttpServer<Deno.NetAddr> | undefined = await serveAdmission();
  const base = `https://127.0.0.1:${server.addr.port}`;
  try {
    for (const [ns, team] of [[NS, "webhooks"], [OTHER_NS, "webhooks-data"]]) {
      await applyObject({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns, labels: { "butler.butlerlabs.dev/team": team } },
      });
    }
    await applyObject({
      apiVersion: API,
      kind: "Team",
      metadata: { name: "webhooks" },
      spec: {
        access: { users: [{ name: "alice@example.com", role: "admin" }] },
        environments: [{ name: "dev" }, { name: "prod" }],
      },
    });
    await applyObject(harvester("wh-harvester", "butler-system"));
    await applyObject(harvester("wh-spare", "butler-system"));
    // The platform's ProviderConfig for another team: in butler-system, so the references policy lets a
    // TenantCluster name it, and the webhook decides on its team scope.
    await applyObject(
      harvester("data-harvester", "butler-system", { type: "team", teamRef: { name: "webhooks-data" } }),
    );
    await applyObject(harvester("own-harvester", NS, { type: "team", teamRef: { name: "webhooks" } }));
    await applyObject(tenantCluster("c1", { name: "wh-harvester" }));
    await applyObject(tenantCluster("c2", { name: "wh-harvester", namespace: "butler-system" }, "dev"));
    await applyObject(await shippedWebhooks(base));

    const deletePc = (name: string) =>
      kubectl(["delete", "providerconfig", name, "-n", "butler-system", "--dry-run=server"]);
    await t.step("a ProviderConfig in use is not deleted, naming its TenantClusters", async () => {
      const message =
        'cannot delete ProviderConfig "wh-harvester": TenantClusters team-webhooks/c1, team-webhooks/c2 still reference it';
      refused(await untilRun(() => deletePc("wh-harvester"), (r) => r.stderr.includes(message)), message);
      allowed(await deletePc("wh-spare"));
    });
    await t.step("an environment in use is not removed; an unused one is", async () => {
      const envs = (names: string[]) =>
        kubectl([
          "patch",
          "team",
          "webhooks",
          "--type=merge",
          "--dry-run=server",
          "-p",
          JSON.stringify({ spec: { environments: names.map((name) => ({ name })) } }),
        ]);
      refused(
        await envs(["prod"]),
        'cannot remove environment "dev" from team "webhooks": TenantCluster team-webhooks/c2 still uses it',
      );
      allowed(await envs(["dev"]));
    });
    await t.step("another team's ProviderConfig is refused; the team's own is not", async () => {
      const create = (obj: unknown) =>
        kubectl(["create", "--dry-run=server", "-f", "-"], { stdin: JSON.stringify(obj) });
      refused(
        await create(tenantCluster("c3", { name: "data-harvester", namespace: "butler-system" }, "dev")),
        'spec.providerConfigRef: Forbidden: ProviderConfig "data-harvester" is scoped to team "webhooks-data", but TenantCluster references team "webhooks"',
      );
      allowed(await create(tenantCluster("c4", { name: "own-harvester", namespace: NS }, "dev")));
    });
    await t.step("a NetworkPool with grants is not deleted, naming the allocations", async () => {
      const pool = parseAllDocuments(Deno.readTextFileSync(`${ROOT}/examples/networkpools/lab-pool.yaml`))[0]!
        .toJS() as Obj;
      // Addresses of its own: other tiers' pools (the examples' lab-pool among them) may still hold the seed's.
      pool.metadata = { name: "wh-pool", namespace: "butler-system" };
      pool.spec = { cidr: "172.30.0.0/24" };
      await applyObject(pool);
      const allocation = parseAllDocuments(
        Deno.readTextFileSync(`${ROOT}/examples/ipallocations/prod-cluster-lb.yaml`),
      )[0]!.toJS() as Obj;
      allocation.metadata = { name: "c1-lb", namespace: NS };
      allocation.spec.poolRef = { name: "wh-pool", namespace: "butler-system" };
      allocation.spec.tenantClusterRef = { name: "c1", namespace: NS };
      await applyObject(allocation);
      const uid =
        JSON.parse(await kubectlOk(["get", "ipallocation", "c1-lb", "-n", NS, "-o", "json"])).metadata.uid;
      const deletePool = () =>
        kubectl(["delete", "networkpool", "wh-pool", "-n", "butler-system", "--dry-run=server"]);
      allowed(await deletePool());
      const patchStatus = (status: unknown) =>
        kubectlOk([
          "patch",
          "networkpool",
          "wh-pool",
          "-n",
          "butler-system",
          "--subresource=status",
          "--type=merge",
          "-p",
          JSON.stringify({ status }),
        ]);
      const refusedForHolder = async () =>
        refused(
          await deletePool(),
          "cannot delete NetworkPool: 1 allocation(s) still hold addresses: team-webhooks/c1-lb",
        );
      const record = encodeRecord(0xac1e0000n, { start: 0xac1e0010n, end: 0xac1e0011n }, "0", uidToken(uid));
      await patchStatus({ ledger: { version: 2, base: "172.30.0.0", grants: [record] } });
      await refusedForHolder();
      // A pool not yet migrated from version 0.1 holds its grants in status.grants: refused alike.
      await patchStatus({ ledger: null, grants: { [uid]: "172.30.0.16+2@2026-11-01T00:00:00Z" } });
      await refusedForHolder();
      await patchStatus({ grants: null, ledger: { version: 2, base: "172.30.0.0", grants: [] } });
      allowed(await deletePool());
    });
    await t.step(
      "with the service down: Ignore lets deletes through to the finalizers, Fail holds",
      async () => {
        await server!.shutdown();
        server = undefined;
        allowed(await deletePc("wh-harvester"));
        const r = await kubectl(["create", "--dry-run=server", "-f", "-"], {
          stdin: JSON.stringify(tenantCluster("c5", { name: "data-harvester", namespace: "butler-system" })),
        });
        refused(r, 'failed calling webhook "tenantclusters.admission.butler.butlerlabs.dev"');
      },
    );
  } finally {
    await server?.shutdown();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl(["delete", "team", "webhooks", "--ignore-not-found", "--wait=false"]);
    for (const name of ["wh-harvester", "wh-spare", "data-harvester"]) {
      await kubectl([
        "delete",
        "providerconfig",
        name,
        "-n",
        "butler-system",
        "--ignore-not-found",
        "--wait=false",
      ]);
    }
    await kubectl([
      "delete",
      "networkpool",
      "wh-pool",
      "-n",
      "butler-system",
      "--ignore-not-found",
      "--wait=false",
    ]);
    for (const ns of [NS, OTHER_NS]) {
      await kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]);
    }
  }
});
