/**
 * The shipped command line, run: the hook Deployment's args (Deno's permissions narrowed) with its paths and
 * ports mapped onto this machine (/app → the repository, /deno-dir → the dependency cache, /etc/butler and the
 * ServiceAccount folder → temporary folders, the API server → the test control plane). Under those permissions the
 * service answers hooks and an admission review that reads the API; a file outside the allowed paths cannot be
 * read, and an API server it was not given cannot be reached.
 */
import assert from "node:assert/strict";
import { loadKustomization, type Manifest } from "../../lib/testing/mod.ts";
import {
  cluster,
  denoDir,
  freePort,
  installManifests,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "./cluster.ts";

const pki = (name: string) => Deno.readTextFileSync(`${cluster().dir}/${name}`);

const container = loadKustomization(`${ROOT}/manifests`).find((o) =>
  o.kind === "Deployment" && o.metadata.name === "butler-hooks"
)!.spec.template.spec.containers[0] as Manifest;
const env = Object.fromEntries(container.env.map((e: Manifest) => [e.name, String(e.value)]));

interface Started {
  hooks: string;
  webhooks: string;
  log: () => string;
  child: Deno.ChildProcess;
  stop: () => Promise<void>;
}

/**
 * Starts the Deployment's command line with its paths, ports and API server mapped onto this machine; `overrides`
 * replaces environment values (after mapping).
 */
async function startShipped(
  dir: string,
  api: string,
  overrides: Record<string, string> = {},
): Promise<Started> {
  const [port, webhookPort, cache] = [freePort(), freePort(), await denoDir()];
  const mapped = (text: string) =>
    mapShipped(text, [
      ["/etc/butler", `${dir}/etc-butler`],
      ["/var/run/secrets/kubernetes.io/serviceaccount", `${dir}/serviceaccount`],
      ["/deno-dir", cache],
      ["/app", ROOT],
      [`0.0.0.0:${env.PORT}`, `127.0.0.1:${port}`],
      [`0.0.0.0:${env.WEBHOOK_PORT}`, `127.0.0.1:${webhookPort}`],
      ["$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)", api],
    ]);
  const args = (container.args as string[]).map(mapped);
  const logFile = `${dir}/service-${port}.log`;
  const child = spawnLogged([Deno.execPath(), ...args], logFile, {
    ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, mapped(v)])),
    HOST: "127.0.0.1",
    PORT: String(port),
    WEBHOOK_PORT: String(webhookPort),
    // The pod's ServiceAccount, as a kubeconfig in the ServiceAccount folder (the in-cluster files' path is fixed).
    KUBECONFIG: `${dir}/serviceaccount/kubeconfig`,
    ...overrides,
  });
  const started: Started = {
    hooks: `https://127.0.0.1:${port}`,
    webhooks: `https://127.0.0.1:${webhookPort}`,
    log: () => Deno.readTextFileSync(logFile),
    child,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      await child.status;
    },
  };
  return started;
}

async function ready(s: Started): Promise<boolean> {
  const c = Deno.createHttpClient({ caCerts: [pki("ca.crt")] });
  try {
    for (let i = 0; i < 150; i++) {
      try {
        const res = await fetch(`${s.hooks}/readyz`, { client: c });
        await res.body?.cancel();
        if (res.ok) return true;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  } finally {
    c.close();
  }
}

async function post(url: string, body: unknown, as?: string): Promise<{ status: number; body: Manifest }> {
  const c = Deno.createHttpClient({
    caCerts: [pki("ca.crt")],
    ...(as ? { cert: pki(`${as}.crt`), key: pki(`${as}.key`) } : {}),
  });
  try {
    const res = await fetch(url, {
      client: c,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() };
  } finally {
    c.close();
  }
}

/** A ProviderConfig delete: the webhook lists the TenantClusters that use it, a read of the API. */
const providerDelete = {
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "permissions-1",
    kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
    resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
    name: "unused",
    namespace: "butler-system",
    operation: "DELETE",
    userInfo: { username: "admin" },
    object: null,
    oldObject: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "ProviderConfig",
      metadata: { name: "unused", namespace: "butler-system" },
      spec: { provider: "harvester", credentialsRef: { name: "c" } },
    },
  },
};

Deno.test("the shipped command line: narrowed permissions that are enough, and hold", async (t) => {
  await installManifests();
  const dir = await Deno.makeTempDir();
  Deno.mkdirSync(`${dir}/etc-butler/tls`, { recursive: true });
  Deno.mkdirSync(`${dir}/serviceaccount`);
  Deno.mkdirSync(`${dir}/outside`);
  for (const [from, to] of [["hook.crt", "tls.crt"], ["hook.key", "tls.key"], ["ca.crt", "ca.crt"]]) {
    Deno.copyFileSync(`${cluster().dir}/${from}`, `${dir}/etc-butler/tls/${to}`);
    Deno.copyFileSync(`${cluster().dir}/${from}`, `${dir}/outside/${to}`);
  }
  Deno.copyFileSync(`${cluster().dir}/ca.crt`, `${dir}/serviceaccount/ca.crt`);
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=1h"]))
    .trim();
  const api = new URL(cluster().server).host;
  const kubeconfig = (server: string) =>
    tokenKubeconfig(server, token, { caFile: `${dir}/serviceaccount/ca.crt` });
  Deno.writeTextFileSync(`${dir}/serviceaccount/kubeconfig`, kubeconfig(cluster().server));
  const unlisted = `127.0.0.1:${freePort()}`;
  Deno.writeTextFileSync(`${dir}/serviceaccount/other-api.kubeconfig`, kubeconfig(`https://${unlisted}`));

  const service = await startShipped(dir, api);
  try {
    await t.step(
      "it starts, and answers a hook call (in its worker) and a review that reads the API",
      async () => {
        assert.ok(await ready(service), service.log());
        const hook = await post(`${service.hooks}/hooks/team/customize`, {
          controller: {},
          parent: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", metadata: { name: "t" } },
        }, "metacontroller");
        assert.equal(hook.status, 200, JSON.stringify(hook.body));
        assert.ok(Array.isArray(hook.body.relatedResources));
        const review = await post(`${service.webhooks}/webhooks/validate/providerconfig`, providerDelete);
        assert.equal(review.status, 200, service.log());
        assert.equal(review.body.response.allowed, true, JSON.stringify(review.body));
        assert.doesNotMatch(service.log(), /NotCapable|Requires \w+ access/);
      },
    );
  } finally {
    await service.stop();
  }

  await t.step("a file outside the allowed paths cannot be read: the service does not start", async () => {
    const outside = await startShipped(dir, api, { TLS_CERT_FILE: `${dir}/outside/tls.crt` });
    const status = await outside.child.status;
    assert.notEqual(status.code, 0);
    assert.match(outside.log(), new RegExp(`Requires read access to \\\\?"${dir}/outside/tls.crt`));
  });

  await t.step(
    "an API server it was not given is not reached: the review fails, the log says why",
    async () => {
      const other = await startShipped(dir, api, {
        KUBECONFIG: `${dir}/serviceaccount/other-api.kubeconfig`,
      });
      try {
        assert.ok(await ready(other), other.log());
        const review = await post(`${other.webhooks}/webhooks/validate/providerconfig`, providerDelete);
        assert.notEqual(review.body.response?.allowed, true, JSON.stringify(review.body));
        assert.match(other.log(), new RegExp(`Requires net access to \\\\?"${unlisted}`));
      } finally {
        await other.stop();
      }
    },
  );
  await Deno.remove(dir, { recursive: true });
});
