/**
 * The hook service as `load:admission` runs it against the test control plane: `main.ts` with the Deployment's
 * worker, queue and heap settings, its HTTPS webhook listener, and its own ServiceAccount's token (the shipped
 * RBAC and ledger policy), in one of the two install variants.
 *
 * @module
 */
import { parse } from "yaml";
import { freePort, kubectlOk, ROOT, tokenKubeconfig } from "../api/cluster.ts";

/**
 * The install variants: `base`, the base install (nothing authenticates the API server to the webhooks, so
 * admission writes no quota ledger and the controllers hold quotas), and `webhook-client-auth`, the component of
 * that name (the API server presents its client certificate, the service answers only it and reserves in the
 * team's ledger).
 */
export const VARIANTS = ["base", "webhook-client-auth"] as const;
/** One of {@linkcode VARIANTS}. */
export type Variant = typeof VARIANTS[number];

/** The test control plane, as tests/api/cluster.ts's `cluster()` describes it. */
export interface Plane {
  readonly dir: string;
  readonly server: string;
  readonly caFile: string;
  readonly hookCertFile: string;
  readonly hookKeyFile: string;
}

/** A running service. */
export interface AdmissionService {
  readonly pid: number;
  /** The webhook listener's URL. */
  readonly webhookBase: string;
  /** A client for the webhook listener as the API server calls it (with its certificate where it must). */
  readonly client: Deno.HttpClient;
  readonly inspectorPort: number;
  /** The Deployment's memory limit. */
  readonly memoryLimit: string;
  /** The service's reads from memory and from the API so far, from its metrics. */
  cacheReads(): Promise<string>;
  /** The service's count of cached TenantClusters, from its metrics. */
  cachedClusters(): Promise<number>;
  stop(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** The shipped container's environment the service's sizing comes from, and its memory limit. */
function shipped(): { env: Record<string, string>; memoryLimit: string } {
  const deployment = parse(Deno.readTextFileSync(`${ROOT}/manifests/hooks/deployment.yaml`)) as Obj;
  const container = deployment.spec.template.spec.containers[0];
  const env = Object.fromEntries(
    (container.env as { name: string; value?: string }[])
      .filter((e) =>
        ["HOOK_WORKERS", "HOOK_QUEUE_LIMIT", "HOOK_QUEUE_BYTES", "DENO_V8_FLAGS"].includes(e.name)
      )
      .map((e) => [e.name, e.value ?? ""]),
  );
  return { env, memoryLimit: String(container.resources.limits.memory) };
}

/** What components/webhook-client-auth adds to the Deployment's environment, with the test PKI's CA. */
function clientAuthEnv(plane: Plane): Record<string, string> {
  const component = parse(
    Deno.readTextFileSync(`${ROOT}/manifests/components/webhook-client-auth/kustomization.yaml`),
  ) as Obj;
  const added = (component.patches as { patch: string }[]).flatMap((p) =>
    (parse(p.patch) as { value: { name: string; value: string } }[]).map((op) => op.value)
  );
  return Object.fromEntries(
    added.map((e) => [e.name, e.name === "WEBHOOK_CLIENT_CA_FILE" ? plane.caFile : e.value]),
  );
}

/**
 * Starts the service in `variant` and waits for its webhook listener. With `inspect`, its V8 inspector listens on
 * `inspectorPort`; with `profileDir`, it writes V8 tick logs there.
 */
export async function startAdmissionService(
  plane: Plane,
  variant: Variant,
  options: { inspect?: boolean; profileDir?: string } = {},
): Promise<AdmissionService> {
  const { env, memoryLimit } = shipped();
  const webhookPort = freePort();
  const inspectorPort = freePort();
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=2h"]))
    .trim();
  const kubeconfig = await Deno.makeTempFile({ suffix: ".kubeconfig" });
  Deno.writeTextFileSync(kubeconfig, tokenKubeconfig(plane.server, token, { caFile: plane.caFile }));
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...(options.inspect ? [`--inspect=127.0.0.1:${inspectorPort}`] : []),
      "--allow-net",
      "--allow-env",
      "--allow-read",
      `${ROOT}/main.ts`,
    ],
    ...(options.profileDir ? { cwd: options.profileDir } : {}),
    env: {
      ...env,
      ...(options.profileDir ? { DENO_V8_FLAGS: `${env.DENO_V8_FLAGS},--prof` } : {}),
      HOST: "127.0.0.1",
      PORT: String(freePort()),
      WEBHOOK_PORT: String(webhookPort),
      WEBHOOK_TLS_CERT_FILE: plane.hookCertFile,
      WEBHOOK_TLS_KEY_FILE: plane.hookKeyFile,
      ...(variant === "webhook-client-auth" ? clientAuthEnv(plane) : {}),
      KUBECONFIG: kubeconfig,
      NO_COLOR: "1",
    },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let hookPort = 0;
  for (let seen = ""; !seen.includes("admission webhooks listening");) {
    const { value, done } = await lines.read();
    if (done) throw new Error(`the service (${variant}) exited before listening`);
    seen += value;
    hookPort = Number(/"port":(\d+),"routes"/.exec(seen)?.[1] ?? hookPort);
  }
  (async () => {
    while (!(await lines.read()).done) { /* drain */ }
  })();
  const pem = (name: string) => Deno.readTextFileSync(`${plane.dir}/${name}`);
  const client = Deno.createHttpClient({
    caCerts: [pem("ca.crt")],
    // The API server's own certificate (tests/apiserver): the only caller the authenticated listener answers.
    ...(variant === "webhook-client-auth"
      ? { cert: pem("webhook-client.crt"), key: pem("webhook-client.key") }
      : {}),
  });
  const metrics = async () => await (await fetch(`http://127.0.0.1:${hookPort}/metrics`)).text();
  return {
    pid: child.pid,
    webhookBase: `https://127.0.0.1:${webhookPort}`,
    client,
    inspectorPort,
    memoryLimit,
    async cacheReads() {
      return [...(await metrics()).matchAll(/butler_admission_cache_reads_total\{source="(\w+)"\} (\d+)/g)]
        .map((m) => `${m[1]} ${m[2]}`).join(", ");
    },
    async cachedClusters() {
      return Number(
        /butler_admission_cache_objects\{resource="tenantclusters"\} (\d+)/.exec(await metrics())?.[1] ?? -1,
      );
    },
    async stop() {
      client.close();
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(kubeconfig).catch(() => {});
    },
  };
}
