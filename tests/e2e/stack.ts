/**
 * What the real controller tiers (`test:e2e`, `test:scale`, `test:gitops`) share: the hook service and the reporter
 * started as their Deployments ship them (command line, Deno permissions and sizing read from the manifests, paths
 * and ports mapped onto this machine), Metacontroller started from `METACONTROLLER_BIN`, the Secrets cert-manager
 * would write, the install of `manifests/` pointed at them, and running a tier's test files and ending it.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import { cpuSeconds } from "../load/proc.ts";
import { loadKustomization } from "../../lib/testing/mod.ts";
import {
  denoDir,
  freePort,
  installOperatorCrds,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "../api/cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** The Deployment's variables that size the service: what the tiers measure is what ships. */
const SIZING = [
  "HOOK_WORKERS",
  "HOOK_QUEUE_LIMIT",
  "HOOK_QUEUE_BYTES",
  "HOOK_DEADLINE_SECONDS",
  "BODY_LIMIT_BYTES",
  "DENO_V8_FLAGS",
  "SHUTDOWN_DRAIN_SECONDS",
  "SHUTDOWN_TIMEOUT_SECONDS",
  "TLS_RELOAD_SECONDS",
];

/** The hook container of the shipped Deployment (of the source tree at `root`: another release's, say). */
function shippedContainer(root = ROOT): Obj {
  return loadKustomization(`${root}/manifests`).find((o) =>
    o.kind === "Deployment" && o.metadata.name === "butler-hooks"
  )!.spec.template.spec.containers[0];
}

/** A container's literal environment (`value`, not `valueFrom`), by name. */
function literalEnv(container: Obj): Record<string, string> {
  return Object.fromEntries(
    ((container.env ?? []) as { name: string; value?: string }[]).filter((e) => e.value !== undefined)
      .map((e) => [e.name, e.value!]),
  );
}

/** The shipped sizing variables (workers, queue, deadline, body limit, V8 heap caps, drain), by name. */
export function shippedSizing(root = ROOT): Record<string, string> {
  return Object.fromEntries(
    Object.entries(literalEnv(shippedContainer(root))).filter(([name]) => SIZING.includes(name)),
  );
}

/** Where one hook service process listens and logs, and how it reaches the API server. */
export interface HookServiceOptions {
  /** The test control plane's state directory (its PKI) and URL. */
  readonly plane: { readonly dir: string; readonly server: string };
  /** Hook port (8443 in the Pod) and webhook port (9443). */
  readonly port: number;
  readonly webhookPort: number;
  readonly kubeconfig: string;
  readonly log: string;
  /** Test-only variables, added to the shipped `--allow-env` too. */
  readonly testEnv?: Record<string, string>;
  /** The source tree to run, as its manifests ship it (default: this one; `test:upgrade` runs a release's). */
  readonly root?: string;
}

/**
 * Starts one hook service process with the shipped command line (Deno's permissions as the Deployment narrows
 * them) and sizing, HTTPS with the test PKI, hook calls only with a client certificate of the test CA.
 */
export async function startHookService(options: HookServiceOptions): Promise<Deno.ChildProcess> {
  const { plane, port, webhookPort } = options;
  const testEnv = options.testEnv ?? {};
  const root = options.root ?? ROOT;
  const cache = await denoDir();
  const args = (shippedContainer(root).args as string[]).map((a) =>
    mapShipped(a, [
      ["/etc/butler", plane.dir],
      ["/var/run/secrets/kubernetes.io/serviceaccount", plane.dir],
      ["/deno-dir", cache],
      ["/app", root],
      ["0.0.0.0:8443", `127.0.0.1:${port}`],
      ["0.0.0.0:9443", `127.0.0.1:${webhookPort}`],
      ["$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)", new URL(plane.server).host],
    ]).replace(/^--allow-env=.*/, (flag) => [flag, ...Object.keys(testEnv)].join(","))
  );
  return spawnLogged([Deno.execPath(), ...args], options.log, {
    ...shippedSizing(root),
    PORT: String(port),
    WEBHOOK_PORT: String(webhookPort),
    HOST: "127.0.0.1",
    TLS_CERT_FILE: `${plane.dir}/hook.crt`,
    TLS_KEY_FILE: `${plane.dir}/hook.key`,
    TLS_CLIENT_CA_FILE: `${plane.dir}/ca.crt`,
    HOOK_CLIENT_NAMES: "metacontroller",
    WEBHOOK_TLS_CERT_FILE: `${plane.dir}/hook.crt`,
    WEBHOOK_TLS_KEY_FILE: `${plane.dir}/hook.key`,
    // The test control plane presents its webhook client certificate: admission is authenticated and writes its
    // ledger (race-free quotas), as with components/webhook-client-auth.
    WEBHOOK_CLIENT_CA_FILE: `${plane.dir}/ca.crt`,
    WEBHOOK_CLIENT_NAMES: "kube-apiserver-webhook-client",
    KUBECONFIG: options.kubeconfig,
    ...testEnv,
  }, root);
}

/**
 * The reporter's ServiceAccount and its RBAC as the reporter component ships them, with a kubeconfig of its token
 * in the plane's directory (which the reporter's `--allow-read` is mapped to). Returns the kubeconfig's path.
 */
export async function reporterServiceAccount(
  plane: { readonly dir: string; readonly server: string },
): Promise<string> {
  const dir = `${ROOT}/manifests/components/reporter`;
  await kubectlOk(["apply", "--server-side", "-f", `${dir}/serviceaccount.yaml`, "-f", `${dir}/rbac.yaml`]);
  const token =
    (await kubectlOk(["create", "token", "butler-reporter", "-n", "butler-system", "--duration=24h"])).trim();
  const kubeconfig = `${plane.dir}/reporter.kubeconfig`;
  Deno.writeTextFileSync(kubeconfig, tokenKubeconfig(plane.server, token, { caFile: `${plane.dir}/ca.crt` }));
  return kubeconfig;
}

/** Where one reporter replica runs: its name (the Pod's, for the tenant leases), metrics port, identity and log. */
export interface ReporterOptions {
  readonly plane: { readonly dir: string };
  readonly name: string;
  readonly port: number;
  readonly kubeconfig: string;
  readonly log: string;
  /** Test-only settings over the shipped ones (shorter periods), among the variables the shipped `--allow-env` names. */
  readonly env?: Record<string, string>;
}

/**
 * Starts one reporter replica (`main.ts reporter`) with the command line and environment of the reporter
 * component's Deployment: Deno's permissions, heap caps, lease, heartbeat and resync periods as they ship.
 */
export async function startReporter(options: ReporterOptions): Promise<Deno.ChildProcess> {
  const deployment = parseAllDocuments(
    Deno.readTextFileSync(`${ROOT}/manifests/components/reporter/deployment.yaml`),
  ).map((d) => d.toJS() as Obj).find((o) => o?.kind === "Deployment")!;
  const container = deployment.spec.template.spec.containers[0];
  const cache = await denoDir();
  const args = (container.args as string[]).map((a) =>
    mapShipped(a, [
      ["/var/run/secrets/kubernetes.io/serviceaccount", options.plane.dir],
      ["/deno-dir", cache],
      ["/app", ROOT],
    ])
  );
  return spawnLogged([Deno.execPath(), ...args], options.log, {
    ...literalEnv(container),
    POD_NAMESPACE: "butler-system",
    HOSTNAME: options.name,
    HOST: "127.0.0.1",
    PORT: String(options.port),
    KUBECONFIG: options.kubeconfig,
    ...options.env,
  });
}

/** Waits until `url` answers 2xx (tried every 100 ms for `seconds`). */
export async function waitHttp(url: string, caFile: string, seconds = 10): Promise<void> {
  const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(caFile)] });
  try {
    for (let i = 0; i < seconds * 10; i++) {
      try {
        const res = await fetch(url, { client });
        await res.body?.cancel();
        if (res.ok) return;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${url} did not answer`);
  } finally {
    client.close();
  }
}

/**
 * Starts Metacontroller (`bin`) as the test control plane's admin, with probes on free ports, level-4 logs and
 * `extraArgs` (its client rate limit, say).
 */
export function startMetacontroller(
  bin: string,
  planeDir: string,
  log: string,
  extraArgs: readonly string[] = [],
): Deno.ChildProcess {
  return spawnLogged(
    [
      bin,
      "--discovery-interval=2s",
      `--metrics-address=127.0.0.1:${freePort()}`,
      `--health-probe-bind-address=127.0.0.1:${freePort()}`,
      "--zap-log-level=4",
      ...extraArgs,
    ],
    log,
    { KUBECONFIG: `${planeDir}/kubeconfig` },
  );
}

/**
 * Namespace butler-system and the hook service's ServiceAccount, with a kubeconfig of its token: the service acts
 * as deployed, so its writes (capacity Events, the quota ledger the webhooks keep) meet the shipped RBAC and
 * ledger policy once the install applies them. Returns the kubeconfig's path.
 */
export async function hookServiceAccount(
  plane: { readonly dir: string; readonly server: string },
): Promise<string> {
  await kubectlOk(["create", "namespace", "butler-system"]);
  await kubectlOk(["create", "serviceaccount", "butler-hooks", "-n", "butler-system"]);
  const token =
    (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=24h"]))
      .trim();
  const kubeconfig = `${plane.dir}/hooks.kubeconfig`;
  Deno.writeTextFileSync(kubeconfig, tokenKubeconfig(plane.server, token, { caFile: `${plane.dir}/ca.crt` }));
  return kubeconfig;
}

/** A kubernetes.io/tls Secret as cert-manager writes it, from the test PKI's files. */
function tlsSecret(dir: string, name: string, pair: string, withCa: boolean): Obj {
  const file = (f: string) => btoa(Deno.readTextFileSync(`${dir}/${f}`));
  return {
    apiVersion: "v1",
    kind: "Secret",
    type: "kubernetes.io/tls",
    metadata: { name, namespace: "butler-system" },
    data: {
      "tls.crt": file(`${pair}.crt`),
      "tls.key": file(`${pair}.key`),
      ...(withCa ? { "ca.crt": file("ca.crt") } : {}),
    },
  };
}

/**
 * The Secrets the shipped Certificates would make cert-manager write (the hook service's serving pair with its CA,
 * Metacontroller's client pair), from the test PKI in `planeDir`. Expects namespace butler-system to exist.
 */
export async function applyCertManagerSecrets(planeDir: string): Promise<void> {
  for (
    const secret of [
      tlsSecret(planeDir, "butler-hooks-tls", "hook", true),
      tlsSecret(planeDir, "butler-metacontroller-client-tls", "metacontroller", false),
    ]
  ) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(secret) });
  }
}

/**
 * `kubectl apply -k manifests/` as a user would, with the controllers' hooks pointed at `hooks` and the admission
 * webhooks at `webhooks` (both `https://host:port`), the test CA where cert-manager would inject one, and the
 * Secrets cert-manager would write made from the test PKI. Expects namespace butler-system to exist
 * ({@linkcode hookServiceAccount} makes it).
 */
export async function installButler(planeDir: string, hooks: string, webhooks: string): Promise<void> {
  await kubectlOk(["apply", "--server-side", "-f", "tests/api/crds/"]);
  await installOperatorCrds();
  await applyCertManagerSecrets(planeDir);
  const objects = pointAtLoopback(await kubectlOk(["kustomize", "manifests/"]), planeDir, hooks, webhooks);
  await kubectlOk(["apply", "--server-side", "--validate=strict", "-f", "-"], {
    stdin: objects.map((o) => JSON.stringify(o)).join("\n"),
  });
  await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
}

/**
 * A rendered install with the controllers' hooks pointed at `hooks` and the admission webhooks at `webhooks` (both
 * `https://host:port`), the test CA where cert-manager would inject one: what the Services are on a cluster.
 */
export function pointAtLoopback(rendered: string, planeDir: string, hooks: string, webhooks: string): Obj[] {
  const pointed = rendered.replaceAll("https://butler-hooks.butler-system.svc/", `${hooks}/`);
  if (pointed === rendered) throw new Error("the rendered controllers no longer name the hook Service");
  const caBundle = btoa(Deno.readTextFileSync(`${planeDir}/ca.crt`));
  const objects = parseAllDocuments(pointed).map((d) => d.toJS() as Obj).filter(Boolean);
  for (const config of objects.flatMap((o) => o.spec?.endpointConfigs ?? [])) {
    if (config.host === "butler-hooks.butler-system.svc") config.host = new URL(hooks).host;
  }
  const configurations = objects.filter((o) => o.kind === "ValidatingWebhookConfiguration");
  if (configurations.length > 1) throw new Error("the install no longer has one webhook configuration");
  for (const vwc of configurations) {
    delete vwc.metadata.annotations["cert-manager.io/inject-ca-from"];
    for (const w of vwc.webhooks) {
      w.clientConfig = { url: `${webhooks}${w.clientConfig.service.path}`, caBundle };
    }
  }
  return objects;
}

/** A tier's stack as its test files reach it: the control plane, and the hook service's two listeners. */
export interface TierStack {
  readonly plane: { readonly dir: string };
  readonly hookPort: number;
  readonly webhookPort: number;
}

/**
 * Runs `files` (under the repository) with `deno test`, the tier's own arguments passed on, against `stack`
 * (`BUTLER_TEST_CLUSTER`, `BUTLER_HOOKS_URL`, `BUTLER_WEBHOOKS_URL`, and `env`).
 */
export async function runTierTests(
  stack: TierStack,
  files: readonly string[],
  env: Record<string, string> = {},
): Promise<Deno.CommandStatus> {
  return await new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", ...Deno.args, ...files],
    cwd: ROOT,
    env: {
      BUTLER_TEST_CLUSTER: stack.plane.dir,
      DENO_CERT: `${stack.plane.dir}/ca.crt`,
      BUTLER_HOOKS_URL: `https://127.0.0.1:${stack.hookPort}`,
      BUTLER_WEBHOOKS_URL: `https://127.0.0.1:${stack.webhookPort}`,
      ...env,
    },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
}

/**
 * Ends a tier: prints the CPU each of `children` used, kills them, stops the control plane, removes its state when
 * the tests passed (else says where it and `logs` are kept), and exits with the tests' code.
 */
export async function endTier(
  plane: { readonly dir: string; stop(): Promise<unknown> },
  status: Deno.CommandStatus,
  children: Readonly<Record<string, Deno.ChildProcess>>,
  logs: string,
): Promise<never> {
  const cpu = Object.entries(children).map(([name, c]) =>
    `${name} ${cpuSeconds(c.pid)?.toFixed(1) ?? "?"} s`
  );
  console.log(`CPU used: ${cpu.join(", ")}`);
  for (const child of Object.values(children)) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
  }
  await plane.stop();
  if (status.success) await Deno.remove(plane.dir, { recursive: true });
  else console.log(`control plane state and logs (${logs}) kept in ${plane.dir}`);
  Deno.exit(status.code);
}
