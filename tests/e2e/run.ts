/**
 * `deno task test:e2e`: the real controller tier. Starts the test control plane (as `deno task test:api` does),
 * the hook service on loopback over HTTPS requiring client certificates, and the Metacontroller binary given in
 * `METACONTROLLER_BIN` (>= 4.16), installs `manifests/` with the controllers pointed at the hook service (the
 * Secrets cert-manager would write made from the test PKI), and runs every `tests/e2e/*.e2e.ts` lifecycle
 * against them. This project never builds Metacontroller: bring your own binary.
 *
 * @module
 */
import { loadKustomization } from "../../lib/testing/mod.ts";
import { denoDir, freePort, mapShipped, ROOT, spawnLogged, tokenKubeconfig } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION } from "../api/tools.ts";

const metacontroller = Deno.env.get("METACONTROLLER_BIN");
if (!metacontroller) {
  console.error(
    "deno task test:e2e needs METACONTROLLER_BIN: the path of a Metacontroller (>= 4.16) binary, built from\n" +
      "its repository (github.com/metacontroller/metacontroller) outside this project. Nothing else is needed:\n" +
      "the Kubernetes control plane is built from Go modules as for `deno task test:api`.",
  );
  Deno.exit(2);
}

async function waitHttp(url: string, client: Deno.HttpClient): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      const res = await fetch(url, { client });
      await res.body?.cancel();
      if (res.ok) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not answer`);
}

const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
console.log(`real controller tier: Kubernetes ${KUBERNETES_VERSION}, Metacontroller ${metacontroller}`);

/** kubectl against the test control plane as its admin. */
async function kubectl(...args: string[]): Promise<string> {
  const out = await new Deno.Command("kubectl", { args: [`--kubeconfig=${plane.dir}/kubeconfig`, ...args] })
    .output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) throw new Error(`kubectl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return text;
}

// The hook service acts as its own ServiceAccount, as deployed: its writes (capacity Events, the quota ledger
// the admission webhooks keep) meet the shipped RBAC and ledger policy once the install step applies them.
await kubectl("create", "namespace", "butler-system");
await kubectl("create", "serviceaccount", "butler-hooks", "-n", "butler-system");
const hooksToken = (await kubectl("create", "token", "butler-hooks", "-n", "butler-system", "--duration=24h"))
  .trim();
const hooksKubeconfig = `${plane.dir}/hooks.kubeconfig`;
Deno.writeTextFileSync(
  hooksKubeconfig,
  tokenKubeconfig(plane.server, hooksToken, { caFile: `${plane.dir}/ca.crt` }),
);
const hookPort = freePort();
// As deployed: HTTPS, and hook calls only with a client certificate from the test CA (Metacontroller's, which
// the install step puts where the controllers' clientTLS reads it), and the shipped command line: Deno's
// permissions as the Deployment narrows them, its paths, ports and API server mapped onto this machine. One
// addition: the test-only TEST_SHRINK_GRACE_SECONDS, which the shipped --allow-env leaves out on purpose.
const container =
  loadKustomization(`${ROOT}/manifests`).find((o) =>
    o.kind === "Deployment" && o.metadata.name === "butler-hooks"
  )!.spec.template.spec.containers[0];
const shipped = container.args as string[];
// And its sizing as shipped (workers, queue, deadline, body limit, V8 heap caps, drain): what this tier measures
// is what the Deployment runs. Paths and ports are mapped below instead.
const SIZING = [
  "HOOK_WORKERS",
  "HOOK_QUEUE_LIMIT",
  "HOOK_DEADLINE_SECONDS",
  "BODY_LIMIT_BYTES",
  "DENO_V8_FLAGS",
  "SHUTDOWN_DRAIN_SECONDS",
  "SHUTDOWN_TIMEOUT_SECONDS",
  "TLS_RELOAD_SECONDS",
];
const sizing = Object.fromEntries(
  (container.env as { name: string; value?: string }[])
    .filter((e) => SIZING.includes(e.name) && e.value !== undefined)
    .map((e) => [e.name, e.value!]),
);
console.log(`hook service as shipped: ${Object.entries(sizing).map(([k, v]) => `${k}=${v}`).join(" ")}`);
const cache = await denoDir();
const args = shipped.map((a) =>
  mapShipped(a, [
    ["/etc/butler", plane.dir],
    ["/var/run/secrets/kubernetes.io/serviceaccount", plane.dir],
    ["/deno-dir", cache],
    ["/app", ROOT],
    ["0.0.0.0:8443", `127.0.0.1:${hookPort}`],
    ["0.0.0.0:9443", `127.0.0.1:${freePort()}`],
    ["$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)", new URL(plane.server).host],
  ]).replace(/^--allow-env=.*/, (flag) => `${flag},TEST_SHRINK_GRACE_SECONDS`)
);
const hooks = spawnLogged(
  [Deno.execPath(), ...args],
  `${plane.dir}/hooks.log`,
  {
    ...sizing,
    PORT: String(hookPort),
    HOST: "127.0.0.1",
    TLS_CERT_FILE: `${plane.dir}/hook.crt`,
    TLS_KEY_FILE: `${plane.dir}/hook.key`,
    TLS_CLIENT_CA_FILE: `${plane.dir}/ca.crt`,
    KUBECONFIG: hooksKubeconfig,
    // Tests only: elastic growth unused for 20 s is released (the seed's 10 minutes otherwise).
    TEST_SHRINK_GRACE_SECONDS: "20",
  },
);
const probe = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(`${plane.dir}/ca.crt`)] });
await waitHttp(`https://127.0.0.1:${hookPort}/readyz`, probe);
probe.close();

const mc = spawnLogged(
  [
    metacontroller,
    "--discovery-interval=2s",
    `--metrics-address=127.0.0.1:${freePort()}`,
    `--health-probe-bind-address=127.0.0.1:${freePort()}`,
    "--zap-log-level=4",
    // Measuring Metacontroller's own flags (its client rate limit, say): METACONTROLLER_ARGS="--client-go-qps=50".
    ...(Deno.env.get("METACONTROLLER_ARGS")?.split(/\s+/).filter(Boolean) ?? []),
  ],
  `${plane.dir}/metacontroller.log`,
  { KUBECONFIG: `${plane.dir}/kubeconfig` },
);

const test = new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    "--allow-all",
    ...Deno.args,
    // lifecycle.e2e.ts first: its first test installs what every other file uses.
    ...[...Deno.readDirSync(`${ROOT}/tests/e2e`)].map((e) => e.name).filter((n) => n.endsWith(".e2e.ts"))
      .sort((a, b) => Number(b === "lifecycle.e2e.ts") - Number(a === "lifecycle.e2e.ts") || (a < b ? -1 : 1))
      .map((n) => `tests/e2e/${n}`),
  ],
  cwd: ROOT,
  env: {
    BUTLER_TEST_CLUSTER: plane.dir,
    DENO_CERT: `${plane.dir}/ca.crt`,
    BUTLER_HOOKS_URL: `https://127.0.0.1:${hookPort}`,
  },
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await test.status;
/** CPU seconds a process has used (user + system, from /proc), or undefined once it is gone. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}
const cpu = [["hook service", hooks.pid], ["Metacontroller", mc.pid]] as const;
console.log(
  `CPU used: ${cpu.map(([name, pid]) => `${name} ${cpuSeconds(pid)?.toFixed(1) ?? "?"} s`).join(", ")}`,
);
for (const child of [mc, hooks]) {
  try {
    child.kill("SIGKILL");
  } catch { /* already gone */ }
  await child.status;
}
await plane.stop();
if (status.success) await Deno.remove(plane.dir, { recursive: true });
else console.log(`control plane state and logs (hooks.log, metacontroller.log) kept in ${plane.dir}`);
Deno.exit(status.code);
