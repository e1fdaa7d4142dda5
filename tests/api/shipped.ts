/**
 * The hook service as the Deployment runs it: its args (Deno's permissions narrowed) with paths, ports and the API
 * server mapped onto this machine (/app -> the repository, /deno-dir -> the dependency cache, /etc/butler and the
 * ServiceAccount folder -> temporary folders, the API server -> the test control plane), its environment (heap
 * caps included), the control plane's PKI as its certificates, and the `butler-hooks` ServiceAccount's token.
 *
 * @module
 */
import { loadKustomization, type Manifest } from "../../lib/testing/mod.ts";
import {
  cluster,
  denoDir,
  freePort,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "./cluster.ts";

/** A file of the control plane's PKI (`ca.crt`, `metacontroller.crt`, ...). */
export const pki = (name: string): string => Deno.readTextFileSync(`${cluster().dir}/${name}`);

/** The hook Deployment's container, as `kubectl apply -k manifests/` ships it. */
export const container: Manifest = loadKustomization(`${ROOT}/manifests`).find((o) =>
  o.kind === "Deployment" && o.metadata.name === "butler-hooks"
)!.spec.template.spec.containers[0] as Manifest;
/** Its environment. */
export const shippedEnv: Record<string, string> = Object.fromEntries(
  container.env.map((e: Manifest) => [e.name, String(e.value)]),
);

/** A running service: its two listeners' URLs, its log, its process. */
export interface Started {
  hooks: string;
  webhooks: string;
  log: () => string;
  child: Deno.ChildProcess;
  stop: () => Promise<Deno.CommandStatus>;
}

/**
 * A folder with the service's certificates (`etc-butler/tls`), a ServiceAccount folder holding the CA and a
 * kubeconfig with a `butler-hooks` token for the test control plane, and `outside/` (the same files, at a path
 * the service may not read). `kubeconfig(server)` writes one for another server.
 */
export async function shippedServiceDir(): Promise<{ dir: string; kubeconfig: (server: string) => string }> {
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
  const kubeconfig = (server: string) =>
    tokenKubeconfig(server, token, { caFile: `${dir}/serviceaccount/ca.crt` });
  Deno.writeTextFileSync(`${dir}/serviceaccount/kubeconfig`, kubeconfig(cluster().server));
  return { dir, kubeconfig };
}

/**
 * Starts the Deployment's command line with its paths, ports and API server (`api`, host:port) mapped onto this
 * machine; `overrides` replaces environment values (after mapping).
 */
export async function startShipped(
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
      [`0.0.0.0:${shippedEnv.PORT}`, `127.0.0.1:${port}`],
      [`0.0.0.0:${shippedEnv.WEBHOOK_PORT}`, `127.0.0.1:${webhookPort}`],
      ["$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)", api],
    ]);
  const args = (container.args as string[]).map(mapped);
  const logFile = `${dir}/service-${port}.log`;
  const child = spawnLogged([Deno.execPath(), ...args], logFile, {
    ...Object.fromEntries(Object.entries(shippedEnv).map(([k, v]) => [k, mapped(v)])),
    HOST: "127.0.0.1",
    PORT: String(port),
    WEBHOOK_PORT: String(webhookPort),
    // The pod's ServiceAccount, as a kubeconfig in the ServiceAccount folder (the in-cluster files' path is fixed).
    KUBECONFIG: `${dir}/serviceaccount/kubeconfig`,
    ...overrides,
  });
  return {
    hooks: `https://127.0.0.1:${port}`,
    webhooks: `https://127.0.0.1:${webhookPort}`,
    log: () => Deno.readTextFileSync(logFile),
    child,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      return await child.status;
    },
  };
}

/** Waits (up to 15 s) for the service to answer `/readyz` with 200. */
export async function ready(s: Started): Promise<boolean> {
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

/** What `/readyz` of a started service answers now: its status and body. */
export async function readyz(s: Started): Promise<string> {
  const c = Deno.createHttpClient({ caCerts: [pki("ca.crt")] });
  try {
    const res = await fetch(`${s.hooks}/readyz`, { client: c });
    return `${res.status} ${await res.text()}`;
  } finally {
    c.close();
  }
}

/** An HTTPS client trusting the control plane's CA, presenting the client pair `as` (`metacontroller`, ...). */
export function client(as?: string): Deno.HttpClient {
  return Deno.createHttpClient({
    caCerts: [pki("ca.crt")],
    ...(as ? { cert: pki(`${as}.crt`), key: pki(`${as}.key`) } : {}),
  });
}

/** One JSON POST (as the client pair `as`); the status and the parsed body. */
export async function post(
  url: string,
  body: unknown,
  as?: string,
): Promise<{ status: number; body: Manifest }> {
  const c = client(as);
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
