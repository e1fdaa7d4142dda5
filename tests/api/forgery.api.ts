/**
 * The base install cannot tell the API server from any other caller of its webhooks (on a managed cluster the API
 * server presents no client certificate), so a review's word changes nothing stored. The service runs with the
 * shipped command line and settings (no components/webhook-client-auth), the real API server calls its
 * webhooks, and a forging client inside the test (any workload of the cluster could be it) sends reviews of its
 * own: a CREATE sized to the team's quota, many names, a DELETE without the cluster's UID, a review for
 * kube-system, a NetworkPool claiming 10.0.0.0/8. None of them writes the quota ledger or the pool registry,
 * changes a later decision of the real API server's, or writes outside team namespaces; the ledger policy refuses
 * the webhook's account a ledger in kube-system; a team's ProviderConfig cannot borrow the platform's credentials.
 */
import assert from "node:assert/strict";
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import {
  applyObject,
  cluster,
  ensureNamespaces,
  getObject,
  installManifests,
  kubectl,
  kubectlOk,
  ROOT,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";
import { post, ready, shippedServiceDir, startShipped } from "./shipped.ts";

const TEAM = "forge";
const NS = `team-${TEAM}`;
const LEDGER = "butler-quota-ledger";
const REGISTRY = "butler-pool-registry";

/** A review as only the API server should send it, forged. */
function review(
  uid: string,
  resource: "tenantclusters" | "networkpools",
  operation: "CREATE" | "DELETE",
  object: Record<string, unknown>,
): Record<string, unknown> {
  const kind = resource === "tenantclusters" ? "TenantCluster" : "NetworkPool";
  const metadata = object.metadata as { name: string; namespace: string };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid,
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource },
      name: metadata.name,
      namespace: metadata.namespace,
      operation,
      userInfo: { username: "mallory", groups: ["system:authenticated"] },
      object: operation === "DELETE" ? null : object,
      oldObject: operation === "DELETE" ? object : null,
    },
  };
}

const tenantCluster = (name: string, namespace = NS) => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: { name, namespace },
  // Outside the team's namespace only teamRef names the team (whose quota a ledger there would hold).
  spec: { kubernetesVersion: "v1.31.0", ...(namespace === NS ? {} : { teamRef: { name: TEAM } }) },
});

const pool = (name: string, cidr: string) => ({
  apiVersion: API,
  kind: "NetworkPool",
  metadata: { name, namespace: "butler-system" },
  spec: { cidr },
});

/** GET /metrics with a bearer token (or none): the status and the body. */
async function readMetrics(base: string, token?: string): Promise<{ status: number; text: string }> {
  const c = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(`${cluster().dir}/ca.crt`)] });
  try {
    const res = await fetch(`${base}/metrics`, {
      client: c,
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    return { status: res.status, text: await res.text() };
  } finally {
    c.close();
  }
}

/** A token of an account bound to the shipped butler-metrics-reader ClusterRole. */
async function readerToken(): Promise<string> {
  await kubectl(["create", "serviceaccount", "forge-metrics-reader", "-n", "butler-system"]);
  await kubectl([
    "create",
    "clusterrolebinding",
    "forge-metrics-reader",
    "--clusterrole=butler-metrics-reader",
    "--serviceaccount=butler-system:forge-metrics-reader",
  ]);
  return (await kubectlOk(["create", "token", "forge-metrics-reader", "-n", "butler-system"])).trim();
}

Deno.test("a forging client on the base install holds no quota, overshoots nothing, writes nowhere", async (t) => {
  await installManifests();
  await ensureNamespaces(["team-payments"]);
  const { dir } = await shippedServiceDir();
  const service = await startShipped(dir, new URL(cluster().server).host);
  const forge = (body: unknown, path: string) => post(`${service.webhooks}/webhooks/validate/${path}`, body);
  try {
    assert.ok(await ready(service), service.log());
    await applyObject({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { "butler.butlerlabs.dev/team": TEAM } },
    });
    await applyObject({
      apiVersion: API,
      kind: "Team",
      metadata: { name: TEAM },
      spec: {
        access: { users: [{ name: "alice@example.com", role: "admin" }] },
        resourceLimits: { maxClusters: 1 },
      },
    });
    await applyObject(await shippedWebhooks(service.webhooks));

    await t.step(
      "the service says at start that reviews are not authenticated, and its gauge says 0",
      async () => {
        assert.match(service.log(), /admission reviews are not authenticated: admission writes nothing/);
        const metrics = await readMetrics(service.hooks, await readerToken());
        assert.equal(metrics.status, 200);
        assert.match(metrics.text, /^butler_admission_authenticated 0$/m);
      },
    );

    await t.step("/metrics answers only a token whose user may get it, as the API server says", async () => {
      const anonymous = await readMetrics(service.hooks);
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.text, /reading \/metrics needs a token whose user may get it: no bearer token/);
      assert.equal((await readMetrics(service.hooks, "forged-token")).status, 401);
      const hooks = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system"])).trim();
      const refused = await readMetrics(service.hooks, hooks);
      assert.equal(refused.status, 403);
      assert.match(
        refused.text,
        /system:serviceaccount:butler-system:butler-hooks.{0,4} may not get \/metrics/,
      );
    });

    await t.step("forged CREATEs sized to the quota, re-sent under many names, reserve nothing", async () => {
      for (let i = 0; i < 20; i++) {
        const r = await forge(
          review(`forged-create-${i}`, "tenantclusters", "CREATE", tenantCluster(`ghost-${i}`)),
          "tenantcluster",
        );
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.response.allowed, true, "the quota is free: the review's answer is allowed");
      }
      assert.equal(await getObject("ConfigMap", LEDGER, NS), undefined, "no ledger was written");
    });

    await t.step("the real create that follows is admitted: the quota was not held", async () => {
      const r = await untilRun(
        () => kubectl(["create", "-f", "-"], { stdin: JSON.stringify(tenantCluster("c1")) }),
        (r) => r.code === 0,
      );
      assert.equal(r.code, 0, r.stderr);
    });

    await t.step(
      "a forged DELETE of the stored cluster frees nothing: the next real create is refused",
      async () => {
        const r = await forge(
          review("forged-delete", "tenantclusters", "DELETE", tenantCluster("c1")),
          "tenantcluster",
        );
        assert.equal(r.status, 200);
        const second = await kubectl(["create", "-f", "-"], { stdin: JSON.stringify(tenantCluster("c2")) });
        assert.notEqual(second.code, 0);
        assert.match(second.stderr, /team "forge" already has 1 cluster\(s\); team quota limits to 1/);
        assert.equal(await getObject("ConfigMap", LEDGER, NS), undefined);
      },
    );

    await t.step("a forged review for kube-system writes nothing there", async () => {
      const r = await forge(
        review("forged-kube-system", "tenantclusters", "CREATE", tenantCluster("ghost", "kube-system")),
        "tenantcluster",
      );
      assert.equal(r.status, 200);
      assert.equal(await getObject("ConfigMap", LEDGER, "kube-system"), undefined);
    });

    await t.step("the webhook's account itself may not write a ledger outside team namespaces", async () => {
      const r = await kubectl([
        "create",
        "configmap",
        LEDGER,
        "-n",
        "kube-system",
        "--as=system:serviceaccount:butler-system:butler-hooks",
      ]);
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /the admission webhook's account may only write the ConfigMaps butler-quota-ledger of team namespaces/,
      );
    });

    await t.step(
      "a forged NetworkPool claiming 10.0.0.0/8 squats nothing: a real pool inside it is admitted",
      async () => {
        // Other tests may have left a registry of their own (their reviews were authenticated): it must not change.
        const before = await getObject("ConfigMap", REGISTRY, "butler-system");
        const r = await forge(
          review("forged-pool", "networkpools", "CREATE", pool("squat", "10.0.0.0/8")),
          "networkpool",
        );
        // Its answer depends on the pools other tests left; what matters is that it wrote nothing.
        assert.equal(r.status, 200);
        const after = await getObject("ConfigMap", REGISTRY, "butler-system");
        assert.deepEqual(after?.metadata, before?.metadata, "the registry was not written");
        const real = await kubectl(["create", "-f", "-"], {
          stdin: JSON.stringify(pool("forge-real", "10.251.7.0/24")),
        });
        assert.equal(real.code, 0, real.stderr);
      },
    );

    await t.step("a team's ProviderConfig cannot borrow the platform's credentials", async () => {
      const r = await kubectl([
        "create",
        "--dry-run=server",
        "-f",
        `${ROOT}/examples/invalid/providerconfig-borrowed-credentials.yaml`,
      ]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /ValidatingAdmissionPolicy 'butler-providerconfig-references'/);
      assert.match(
        r.stderr,
        /a ProviderConfig outside butler-system may reference only a Secret in its own namespace "team-payments", not one in "butler-system"/,
      );
    });
  } finally {
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl([
      "delete",
      "networkpool",
      "forge-real",
      "-n",
      "butler-system",
      "--ignore-not-found",
      "--wait=false",
    ]);
    await kubectl(["delete", "team", TEAM, "--ignore-not-found", "--wait=false"]);
    await kubectl(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
    await kubectl(["delete", "configmap", LEDGER, "-n", "kube-system", "--ignore-not-found"]);
    await service.stop();
  }
});
