/**
 * `deno task test:api`: the real API server tier. Builds (once, cached) the test control plane and
 * kubectl-validate from Go modules, starts kube-apiserver with etcd and the namespace/garbage-collector
 * controllers on loopback, runs every `tests/api/*.api.ts` test against it, and stops it. The exit code is the
 * test run's.
 *
 * @module
 */
import {
  controlPlaneBinary,
  kubectlValidateBinary,
  KUBERNETES_VERSION,
  KUBERNETES_VERSIONS,
} from "./tools.ts";
import { ROOT } from "./cluster.ts";

/** A running test control plane: its state directory, its URL, and how to stop it. */
export interface ControlPlane {
  readonly dir: string;
  readonly server: string;
  /** The process's ID (etcd and kube-apiserver run in it), for CPU and memory figures. */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the control plane in a new state directory, or restarts the one in `options.dir` (same etcd data, PKI
 * and URL); resolves once it is ready.
 */
export async function startControlPlane(
  bin: string,
  options: { controllers?: boolean; dir?: string } = {},
): Promise<ControlPlane> {
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "butler-test-cluster-" });
  await Deno.remove(`${dir}/ready`).catch(() => {}); // a restart's previous one
  const child = new Deno.Command(bin, {
    args: ["-dir", dir, ...(options.controllers ? ["-controllers"] : [])],
    stdin: "piped", // our exit closes it, which stops the control plane
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = await Deno.open(`${dir}/control-plane.log`, { append: true, create: true });
  const logging = child.stderr.pipeTo(log.writable).catch(() => {});
  const started = Date.now();
  let exited = false;
  child.status.then(() => exited = true);
  while (true) {
    try {
      const server = Deno.readTextFileSync(`${dir}/ready`).trim();
      console.log(
        `control plane ready at ${server} in ${((Date.now() - started) / 1000).toFixed(1)} s (${dir})`,
      );
      return {
        dir,
        server,
        pid: child.pid,
        stop: async () => {
          try {
            child.kill("SIGTERM");
          } catch { /* already gone */ }
          await child.status;
          await logging;
        },
      };
    } catch { /* not ready yet */ }
    if (exited || Date.now() - started > 180_000) {
      await logging;
      const tail = Deno.readTextFileSync(`${dir}/control-plane.log`).split("\n").slice(-30).join("\n");
      throw new Error(`the control plane did not become ready:\n${tail}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * What the tier runs on the oldest Kubernetes we claim: the install, every CRD with its CEL rules and every
 * policy (the examples, the corpus, fixture statuses), and the admission tests.
 */
export const OLDEST_FILES: readonly string[] = [
  "manifests.api.ts",
  "examples.api.ts",
  "schema_corpus.api.ts",
  "meta_corpus.api.ts",
  "kinds.api.ts",
  "status.api.ts",
  "admission.api.ts",
  "webhooks.api.ts",
  "pools.api.ts",
  "quota.api.ts",
  "conformance.api.ts",
  "forgery.api.ts",
  "webhook_auth.api.ts",
];

if (import.meta.main) {
  const [plane, validate] = [await controlPlaneBinary(), await kubectlValidateBinary()];
  const oldest = KUBERNETES_VERSION === KUBERNETES_VERSIONS.oldest;
  console.log(
    `real API server tier: Kubernetes ${KUBERNETES_VERSION}${oldest ? " (the oldest we claim)" : ""}`,
  );
  const cp = await startControlPlane(plane, { controllers: true });
  const files = [...Deno.readDirSync(`${ROOT}/tests/api`)].map((e) => e.name)
    .filter((n) => n.endsWith(".api.ts") && (!oldest || OLDEST_FILES.includes(n)))
    .sort().map((n) => `tests/api/${n}`);
  const test = new Deno.Command(Deno.execPath(), {
    args: ["test", "--allow-all", ...Deno.args, ...files],
    cwd: ROOT,
    env: {
      BUTLER_TEST_CLUSTER: cp.dir,
      BUTLER_TEST_KUBERNETES: KUBERNETES_VERSION,
      KUBECTL_VALIDATE: validate,
      DENO_CERT: `${cp.dir}/ca.crt`,
    },
    stdout: "inherit",
    stderr: "inherit",
  }).spawn();
  const status = await test.status;
  await cp.stop();
  if (status.success) await Deno.remove(cp.dir, { recursive: true });
  else console.log(`control plane state and log kept in ${cp.dir}`);
  Deno.exit(status.code);
}
