/**
 * The real API server tier's view of its cluster: the control plane started by `tests/api/run.ts` (its state
 * directory in `BUTLER_TEST_CLUSTER`), kubectl against it, impersonation, and kubectl-validate.
 *
 * @module
 */
import { parse, parseAllDocuments } from "yaml";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { createKubeCache, createKubeClient, type KubeClient } from "../../lib/kube/mod.ts";
import { ADMISSION_CACHE } from "../../lib/api/mod.ts";
import { type CommandRun, runCommand } from "../../lib/testing/mod.ts";
import { operatorCrds } from "./tools.ts";

/** Files the control plane wrote: kubeconfig, its CA, and a serving pair for the hook service (127.0.0.1). */
export interface Cluster {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly caFile: string;
  readonly hookCertFile: string;
  readonly hookKeyFile: string;
  readonly server: string;
}

/** The cluster of this test run; fails with what to run when the tier was started another way. */
export function cluster(): Cluster {
  const dir = Deno.env.get("BUTLER_TEST_CLUSTER");
  if (!dir) {
    throw new Error("BUTLER_TEST_CLUSTER is not set: run the real API server tier with `deno task test:api`");
  }
  return {
    dir,
    kubeconfig: `${dir}/kubeconfig`,
    caFile: `${dir}/ca.crt`,
    hookCertFile: `${dir}/hook.crt`,
    hookKeyFile: `${dir}/hook.key`,
    server: Deno.readTextFileSync(`${dir}/ready`).trim(),
  };
}

/** The repository root, with no trailing slash. */
export const ROOT: string = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** What a command printed and how it ended. */
export type Run = CommandRun;

/** Who kubectl acts as: the admin by default, or an impersonated user with groups. */
export interface As {
  readonly user: string;
  readonly groups?: readonly string[];
}

/** Runs kubectl against the test cluster (never the user's own kubeconfig). */
export function kubectl(
  args: readonly string[],
  options: { stdin?: string; as?: As } = {},
): Promise<Run> {
  const as = options.as
    ? [`--as=${options.as.user}`, ...(options.as.groups ?? []).map((g) => `--as-group=${g}`)]
    : [];
  return runCommand("kubectl", [`--kubeconfig=${cluster().kubeconfig}`, ...as, ...args], {
    cwd: ROOT,
    ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
  });
}

/** kubectl that must succeed; returns stdout. */
export async function kubectlOk(
  args: readonly string[],
  options: { stdin?: string; as?: As } = {},
): Promise<string> {
  const r = await kubectl(args, options);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

/** Applies one object (or a `List`) server-side as the test field manager, as the admin or impersonating `as`. */
export function applyObject(obj: unknown, options: { as?: As; fieldManager?: string } = {}): Promise<string> {
  return kubectlOk(
    ["apply", "--server-side", `--field-manager=${options.fieldManager ?? "butler-tests"}`, "-f", "-"],
    { stdin: JSON.stringify(obj), ...(options.as ? { as: options.as } : {}) },
  );
}

/** Reads one object as JSON, or `undefined` when it does not exist. */
export async function getObject(
  resource: string,
  name: string,
  namespace?: string,
): Promise<Record<string, unknown> | undefined> {
  const r = await kubectl(["get", resource, name, ...(namespace ? ["-n", namespace] : []), "-o", "json"]);
  if (r.code !== 0) {
    if (/NotFound|not found/.test(r.stderr)) return undefined;
    throw new Error(`kubectl get ${resource} ${name}: ${r.stderr}`);
  }
  return JSON.parse(r.stdout);
}

/** Creates namespaces that do not exist yet. */
export async function ensureNamespaces(names: readonly string[]): Promise<void> {
  for (const name of names) {
    // A team's namespace carries the label its Team controller puts on it (the ledger policy looks for it).
    const team = name.startsWith("team-")
      ? `  labels: { butler.butlerlabs.dev/team: ${name.slice(5)} }\n`
      : "";
    const yaml = `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n${team}`;
    await kubectlOk(["apply", "--server-side", "--field-manager=butler-tests", "-f", "-"], { stdin: yaml });
  }
}

/** Runs kubectl-validate (path in `KUBECTL_VALIDATE`) with our CRDs and the test Metacontroller CRDs. */
export async function kubectlValidate(paths: readonly string[]): Promise<Run> {
  const bin = Deno.env.get("KUBECTL_VALIDATE");
  if (!bin) {
    throw new Error("KUBECTL_VALIDATE is not set: run the real API server tier with `deno task test:api`");
  }
  return runCommand(bin, [
    ...paths,
    "--local-crds",
    `${ROOT}/manifests/crds`,
    "--local-crds",
    `${ROOT}/tests/api/crds`,
    "--local-crds",
    await operatorCrds("cert-manager"),
    "--local-crds",
    await operatorCrds("prometheus-operator"),
    "--local-crds",
    await operatorCrds("cluster-api"),
    "--version",
    "1.30",
    "--output",
    "json",
  ], { cwd: ROOT, env: { NO_COLOR: "1" } });
}

/** Every YAML file below a directory, sorted. */
export function yamlFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${dir}/${entry.name}`;
    // A hidden folder (examples/ci/.github) holds no manifests.
    if (entry.name.startsWith(".")) continue;
    if (entry.isDirectory) out.push(...yamlFiles(path));
    // A kustomization (examples/kustomize/) is a recipe, not an object to apply.
    else if (/\.ya?ml$/.test(entry.name) && entry.name !== "kustomization.yaml") out.push(path);
  }
  return out.sort();
}

/**
 * An example that must be refused, with the message its `# expect:` line gives. `refusedBy` names the
 * ValidatingAdmissionPolicy its `# refused-by:` line says refuses it; such an example passes the CRD schema, so
 * only a real API server (not kubectl-validate) can refuse it.
 */
export interface InvalidExample {
  readonly path: string;
  readonly expect: string;
  readonly refusedBy?: string;
  readonly object: { kind: string; metadata: { name: string; namespace?: string } };
}

/** The examples under `examples/invalid/`, each with its expected message. */
export function invalidExamples(): InvalidExample[] {
  return yamlFiles(`${ROOT}/examples/invalid`).map((path) => {
    const text = Deno.readTextFileSync(path);
    const expect = /^# expect: (.+)$/m.exec(text)?.[1];
    if (!expect) throw new Error(`${path}: no "# expect: <message>" line`);
    const refusedBy = /^# refused-by: ValidatingAdmissionPolicy (\S+)$/m.exec(text)?.[1];
    return { path, expect, refusedBy, object: parse(text) };
  });
}

/**
 * Runs `attempt` until `done` holds for its result or `timeoutMs` passes, and returns the last result: a new
 * admission policy or webhook configuration takes effect within seconds, not at once.
 */
export async function untilRun(
  attempt: () => Promise<Run>,
  done: (r: Run) => boolean,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<Run> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const r = await attempt();
    if (done(r) || Date.now() > deadline) return r;
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 250));
  }
}

/** Waits until the policy that refuses `example` refuses it (a server-side dry run). */
async function awaitPolicy(example: InvalidExample): Promise<void> {
  const mark = `ValidatingAdmissionPolicy '${example.refusedBy}'`;
  const r = await untilRun(
    () => kubectl(["create", "--dry-run=server", "-f", example.path]),
    (r) => r.stderr.includes(mark),
  );
  if (!r.stderr.includes(mark)) {
    throw new Error(`${example.refusedBy} never refused ${example.path}: ${r.stderr || "accepted"}`);
  }
}

/** Serves `fetch` over HTTPS on a free local port with the test CA's hook certificate, as the API server reaches webhooks. */
/** The hook service as deployed (every route), admission reading and writing through `kube`. */
export function hookService(kube: KubeClient): ReturnType<typeof createApp> {
  return createApp({
    bodyLimitBytes: 1 << 24,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    kube,
  });
}

/**
 * The hook service (every route, admission reading this cluster with the kube client) served over TLS on a free
 * loopback port, for webhook configurations to call. With `replicas`, that many instances, each with its own watch
 * cache, behind the one address, which alternates between them as the Service balances the Deployment's pods.
 */
export async function serveAdmission(replicas = 1): Promise<Deno.HttpServer<Deno.NetAddr>> {
  await installManifests();
  // The webhooks read and write as their own ServiceAccount, with the shipped RBAC and ledger policy.
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=2h"]))
    .trim();
  // As shipped: the kinds admission reads come from a watch cache.
  const caches = Array.from({ length: replicas }, () =>
    createKubeCache({
      client: createKubeClient({ server: cluster().server, token: () => token }),
      collections: ADMISSION_CACHE,
    }));
  const services = caches.map((kube) => hookService(kube));
  let turn = 0;
  const server = serveHookTls((req, info) => services[turn++ % replicas]!.app.fetch(req, info));
  // Shutting the server down stops the caches' watches too, so a test leaves nothing running.
  const shutdown = server.shutdown.bind(server);
  return Object.assign(server, {
    shutdown: async () => {
      await shutdown();
      for (const kube of caches) await kube.stop();
    },
  });
}

export function serveHookTls(fetch: Deno.ServeHandler): Deno.HttpServer<Deno.NetAddr> {
  const { hookCertFile, hookKeyFile } = cluster();
  return Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(hookCertFile),
    key: Deno.readTextFileSync(hookKeyFile),
    onListen: () => {},
  }, fetch);
}

/** A free TCP port on loopback (closed again before it is used). */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/**
 * A kubeconfig of one cluster and one user with a bearer token, the cluster's CA a file (`caFile`) or inline
 * (`caData`, base64 PEM).
 */
export function tokenKubeconfig(
  server: string,
  token: string,
  ca: { caFile: string } | { caData: string },
): string {
  const authority = "caFile" in ca
    ? `certificate-authority: "${ca.caFile}"`
    : `certificate-authority-data: ${ca.caData}`;
  return `apiVersion: v1\nkind: Config\nclusters: [{name: t, cluster: {server: "${server}", ${authority}}}]\n` +
    `users: [{name: u, user: {token: "${token}"}}]\ncontexts: [{name: t, context: {cluster: t, user: u}}]\n` +
    `current-context: t\n`;
}

/** The dependency cache of the Deno running the tests (the image's /deno-dir). */
export async function denoDir(): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" }).output();
  return (JSON.parse(new TextDecoder().decode(out.stdout)) as { denoDir: string }).denoDir;
}

/**
 * A shipped command line's text with container paths (and other words) mapped onto this machine: each `from` is
 * replaced where it stands as a whole path (after `=` or `,`, or alone) or as a whole entry.
 */
export function mapShipped(text: string, map: readonly (readonly [string, string])[]): string {
  return map.reduce(
    (acc, [from, to]) =>
      acc.replaceAll(
        new RegExp(`(^|[=,])${from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?=[/,]|$)`, "g"),
        `$1${to}`,
      ),
    text,
  );
}

/**
 * Starts a process in the repository root (or `cwd`) whose output is appended to a log file (a restarted process
 * adds to its log). A pipe nobody reads would fill up and block the process on its next log line (Metacontroller
 * logs a lot at level 4).
 */
export function spawnLogged(
  argv: string[],
  log: string,
  env: Record<string, string>,
  cwd: string = ROOT,
): Deno.ChildProcess {
  return new Deno.Command("bash", {
    args: ["-c", 'exec "$@" >> "$LOG" 2>&1', "bash", ...argv],
    cwd,
    env: { ...env, LOG: log },
    stdin: "null",
  }).spawn();
}

/** The admin token of the test cluster (from its kubeconfig). */
function adminToken(): string {
  const config = parse(Deno.readTextFileSync(cluster().kubeconfig)) as {
    users: { user: { token: string } }[];
  };
  return config.users[0]!.user.token;
}

/**
 * One request to the API server as the admin (or impersonating `as`). The CA is trusted through `DENO_CERT`,
 * which `run.ts` sets. Returns the status and the parsed body.
 */
export async function api(
  method: string,
  path: string,
  body?: unknown,
  options: { as?: As; contentType?: string } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const headers = new Headers({
    authorization: `Bearer ${adminToken()}`,
    accept: "application/json",
    "content-type": options.contentType ?? "application/json",
  });
  if (options.as) {
    headers.set("impersonate-user", options.as.user);
    for (const g of options.as.groups ?? []) headers.append("impersonate-group", g);
  }
  const res = await fetch(`${cluster().server}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : {} };
}

let installed: Promise<void> | undefined;

/**
 * The CRDs of the operators the shipped objects belong to (no operator runs): cert-manager's, which the base
 * needs, prometheus-operator's ServiceMonitor and PrometheusRule, which the monitoring component needs, and
 * Cluster API's IPAddressClaim and IPAddress, which the cluster-api-ipam component serves.
 */
export async function installOperatorCrds(): Promise<void> {
  const monitoring = await operatorCrds("prometheus-operator");
  const capi = await operatorCrds("cluster-api");
  await kubectlOk([
    "apply",
    "--server-side",
    "-f",
    await operatorCrds("cert-manager"),
    "-f",
    `${monitoring}/monitoring.coreos.com_servicemonitors.yaml`,
    "-f",
    `${monitoring}/monitoring.coreos.com_podmonitors.yaml`,
    "-f",
    `${monitoring}/monitoring.coreos.com_prometheusrules.yaml`,
    "-f",
    `${capi}/ipam.cluster.x-k8s.io_ipaddressclaims.yaml`,
    "-f",
    `${capi}/ipam.cluster.x-k8s.io_ipaddresses.yaml`,
  ]);
  await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
}

/**
 * Installs the test Metacontroller CRDs and `kubectl apply --server-side -k manifests/` (strict field validation),
 * then waits for every CRD to be established and every shipped admission policy to answer (a new policy binding
 * takes effect within seconds, not at once; an example the policy refuses shows when it does). Idempotent and
 * done once per test process.
 */
export function installManifests(): Promise<void> {
  installed ??= (async () => {
    await kubectlOk(["apply", "--server-side", "--validate=strict", "-f", "tests/api/crds/"]);
    await installOperatorCrds();
    // The base, all but its webhook configuration: no hook service runs in the test cluster, so each test that
    // needs the webhooks serves them itself (serveAdmission, as the webhook's ServiceAccount) and registers them
    // pointing at its own server (shippedWebhooks). Their RBAC and the ledger policy are installed as shipped.
    const rendered = await runCommand("kubectl", ["kustomize", `${ROOT}/manifests`], {});
    if (rendered.code !== 0) throw new Error(rendered.stderr);
    const objects = parseAllDocuments(rendered.stdout).map((d) => d.toJS())
      .filter((o) => o && o.kind !== "ValidatingWebhookConfiguration");
    await kubectlOk(["apply", "--server-side", "--validate=strict", "-f", "-"], {
      stdin: objects.map((o) => JSON.stringify(o)).join("\n"),
    });
    await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
    const refused = invalidExamples().filter((e) => e.refusedBy);
    // A namespaced example is refused by its policy only in a namespace that exists (else: NotFound first).
    await ensureNamespaces([...new Set(refused.flatMap((e) => e.object.metadata.namespace ?? []))]);
    await Promise.all(refused.map(awaitPolicy));
  })();
  return installed;
}

/**
 * The base's admission webhook objects (manifests/admission-webhooks) as `kubectl kustomize manifests/` renders
 * them: each webhook pointed at `base` (the test's TLS server) with the test CA, when given.
 */
// deno-lint-ignore no-explicit-any
export async function shippedAdmissionObjects(base?: string): Promise<Record<string, any>[]> {
  const out = await new Deno.Command("kubectl", { args: ["kustomize", `${ROOT}/manifests`] }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  const dir = `${ROOT}/manifests/admission-webhooks`;
  const ours = new Set(
    [...Deno.readDirSync(dir)].flatMap((f) =>
      parseAllDocuments(Deno.readTextFileSync(`${dir}/${f.name}`)).map((d) => {
        const o = d.toJS() as { kind: string; metadata: { name: string } };
        return `${o.kind}/${o.metadata.name}`;
      })
    ),
  );
  const docs = parseAllDocuments(new TextDecoder().decode(out.stdout)).map((d) => d.toJS())
    // deno-lint-ignore no-explicit-any
    .filter((d: any) => ours.has(`${d.kind}/${d.metadata.name}`));
  const caBundle = btoa(Deno.readTextFileSync(cluster().caFile));
  for (const d of docs.filter((d) => d.kind === "ValidatingWebhookConfiguration")) {
    delete d.metadata.annotations; // cert-manager's CA injection: the test CA instead
    if (base) {
      for (const w of d.webhooks) w.clientConfig = { url: `${base}${w.clientConfig.service.path}`, caBundle };
    }
  }
  return docs;
}

/** The shipped ValidatingWebhookConfiguration, each webhook pointed at `base` instead of the in-cluster Service. */
export async function shippedWebhooks(base: string): Promise<Record<string, unknown>> {
  return (await shippedAdmissionObjects(base)).find((d) => d.kind === "ValidatingWebhookConfiguration")!;
}
