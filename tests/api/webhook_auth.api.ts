/**
 * The API server authenticates to the admission webhooks. The test control plane is configured as an operator
 * configures kube-apiserver (an AdmissionConfiguration whose WebhookAdmissionConfiguration kubeconfig holds a
 * client certificate, CN kube-apiserver-webhook-client, signed by the test CA), and `main.ts` runs with the
 * shipped settings plus components/webhook-client-auth's: the webhooks on their own listener, answering only that
 * certificate. Real creates reach the webhooks and are decided; a review forged by anyone else is refused 403 and
 * logged; the hooks' listener does not serve the webhooks at all.
 */
import assert from "node:assert/strict";
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import {
  applyObject,
  cluster,
  freePort,
  installManifests,
  kubectl,
  kubectlOk,
  shippedWebhooks,
  spawnLogged,
  tokenKubeconfig,
  untilRun,
} from "./cluster.ts";

const pki = (name: string) => Deno.readTextFileSync(`${cluster().dir}/${name}`);
const NS = "team-webhook-auth";

function client(as?: string): Deno.HttpClient {
  return Deno.createHttpClient({
    caCerts: [pki("ca.crt")],
    ...(as ? { cert: pki(`${as}.crt`), key: pki(`${as}.key`) } : {}),
  });
}

const forged = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "forged-1",
    kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "TenantCluster" },
    resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "tenantclusters" },
    name: "ghost",
    namespace: NS,
    operation: "DELETE",
    userInfo: { username: "mallory" },
    object: null,
    oldObject: { apiVersion: API, kind: "TenantCluster", metadata: { name: "ghost", namespace: NS } },
  },
};

async function post(base: string, as?: string): Promise<number> {
  const c = client(as);
  try {
    const res = await fetch(`${base}/webhooks/validate/tenantcluster`, {
      client: c,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(forged),
    });
    await res.body?.cancel();
    return res.status;
  } finally {
    c.close();
  }
}

Deno.test("the API server authenticates to the webhooks; a forged review is refused", async (t) => {
  await installManifests();
  const dir = cluster().dir;
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=1h"]))
    .trim();
  Deno.writeTextFileSync(
    `${dir}/webhook-auth-hooks.kubeconfig`,
    tokenKubeconfig(cluster().server, token, { caFile: `${dir}/ca.crt` }),
  );
  const [port, webhookPort] = [freePort(), freePort()];
  const logFile = `${dir}/webhook-auth-service.log`;
  // The Deployment's settings and components/webhook-client-auth's.
  const service = spawnLogged([Deno.execPath(), "run", "-A", "main.ts"], logFile, {
    HOST: "127.0.0.1",
    PORT: String(port),
    HOOK_WORKERS: "1",
    TLS_CERT_FILE: `${dir}/hook.crt`,
    TLS_KEY_FILE: `${dir}/hook.key`,
    TLS_CLIENT_CA_FILE: `${dir}/ca.crt`,
    WEBHOOK_PORT: String(webhookPort),
    WEBHOOK_TLS_CERT_FILE: `${dir}/hook.crt`,
    WEBHOOK_TLS_KEY_FILE: `${dir}/hook.key`,
    WEBHOOK_CLIENT_CA_FILE: `${dir}/ca.crt`,
    WEBHOOK_CLIENT_NAMES: "kube-apiserver-webhook-client",
    KUBECONFIG: `${dir}/webhook-auth-hooks.kubeconfig`,
  });
  const base = `https://127.0.0.1:${webhookPort}`;
  try {
    const probe = client();
    for (let i = 0; i < 100; i++) {
      try {
        const res = await fetch(`https://127.0.0.1:${port}/readyz`, { client: probe });
        await res.body?.cancel();
        if (res.ok) break;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    probe.close();
    await applyObject({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { "butler.butlerlabs.dev/team": "webhook-auth" } },
    });
    await applyObject({
      apiVersion: API,
      kind: "Team",
      metadata: { name: "webhook-auth" },
      spec: {
        access: { users: [{ name: "alice@example.com", role: "admin" }] },
        resourceLimits: { maxClusters: 1 },
      },
    });
    await applyObject(await shippedWebhooks(base));
    const tc = (name: string) =>
      JSON.stringify({
        apiVersion: API,
        kind: "TenantCluster",
        metadata: { name, namespace: NS },
        spec: { kubernetesVersion: "v1.31.0" },
      });

    await t.step(
      "a real create is admitted, and the next one refused by the webhook's decision",
      async () => {
        // The webhook configuration takes effect within seconds.
        const first = await untilRun(
          () => kubectl(["create", "-f", "-"], { stdin: tc("c1") }),
          (r) => r.code === 0,
        );
        assert.equal(first.code, 0, first.stderr);
        const second = await kubectl(["create", "-f", "-"], { stdin: tc("c2") });
        assert.notEqual(second.code, 0);
        assert.match(second.stderr, /team "webhook-auth" already has 1 cluster\(s\); team quota limits to 1/);
      },
    );
    await t.step("a forged review is refused: no certificate, or another client's", async () => {
      assert.equal(await post(base), 403);
      assert.equal(await post(base, "metacontroller"), 403);
      assert.equal(await post(base, "stranger"), 403);
      // Only the API server's certificate opens the webhooks (here the test plays the API server).
      assert.equal(await post(base, "webhook-client"), 200);
    });
    await t.step("the hooks' listener does not serve the webhooks", async () => {
      assert.equal(await post(`https://127.0.0.1:${port}`, "webhook-client"), 404);
    });
    await t.step("each refusal is logged with why", () => {
      const refusals = Deno.readTextFileSync(logFile).split("\n").filter((l) =>
        l.includes("admission review refused")
      );
      assert.equal(refusals.length, 3, refusals.join("\n"));
      assert.ok(refusals.some((l) => l.includes("no client certificate")));
      assert.ok(refusals.some((l) => l.includes(`\\"metacontroller\\" is not the API server's`)));
      assert.ok(refusals.some((l) => l.includes("not trusted")));
    });
  } finally {
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl(["delete", "team", "webhook-auth", "--ignore-not-found", "--wait=false"]);
    await kubectl(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
    try {
      service.kill("SIGTERM");
    } catch { /* gone */ }
    await service.status;
  }
});
