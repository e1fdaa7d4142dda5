/**
 * `deno task test:gitops`: Butler synced by a real Argo CD. Starts the test control plane (as `deno task test:api`
 * does), the hook service as shipped on loopback and the Metacontroller binary of `METACONTROLLER_BIN` (as
 * `deno task test:e2e` does), and Argo CD's repo server and application controller from `ARGOCD_BIN` with Redis,
 * configured as docs/install.md says (`argocd.ts`), then runs every `tests/gitops/*.gitops.ts`: Applications sync
 * the production overlay and the platform objects from a local git repository (`repo.ts`), and Argo CD's own Lua
 * test harness judges our health checks. What the control plane lacks (kubelet, deployment controller,
 * cert-manager) is played by `stand_in.ts`. This project never builds Argo CD or Metacontroller: bring both.
 *
 * @module
 */
import { installOperatorCrds, kubectlOk, ROOT } from "../api/cluster.ts";
import { freePort } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION, kustomizeBinary } from "../api/tools.ts";
import { cpuSeconds } from "../load/proc.ts";
import {
  hookServiceAccount,
  startHookService,
  startMetacontroller,
  tlsSecret,
  waitHttp,
} from "../e2e/stack.ts";
import { argoCdFromEnv, installArgoCd, startArgoCd } from "./argocd.ts";
import { startStandIn } from "./stand_in.ts";

const metacontroller = Deno.env.get("METACONTROLLER_BIN");
const argo = argoCdFromEnv();
if (!metacontroller || typeof argo === "string") {
  console.error(
    typeof argo === "string" ? argo : "deno task test:gitops needs METACONTROLLER_BIN as test:e2e does.",
  );
  Deno.exit(2);
}

try {
  await new Deno.Command("redis-server", { args: ["--version"], stdout: "null", stderr: "null" }).output();
} catch {
  console.error("deno task test:gitops needs redis-server on PATH (Debian: apt-get install redis-server).");
  Deno.exit(2);
}

const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
console.log(
  `gitops tier: Kubernetes ${KUBERNETES_VERSION}, Metacontroller ${metacontroller}, Argo CD ${argo.bin}`,
);
Deno.env.set("BUTLER_TEST_CLUSTER", plane.dir);

// What exists before Argo CD's first sync: the CRDs of the operators the overlay uses (cert-manager,
// prometheus-operator) and Metacontroller's, the hook service's ServiceAccount (its token is the service's
// kubeconfig), and the Secrets cert-manager would issue.
await kubectlOk(["apply", "--server-side", "-f", "tests/api/crds/"]);
await installOperatorCrds();
const hooksKubeconfig = await hookServiceAccount(plane);
for (
  const secret of [
    tlsSecret(plane.dir, "butler-hooks-tls", "hook", true),
    tlsSecret(plane.dir, "butler-metacontroller-client-tls", "metacontroller", false),
  ]
) {
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(secret) });
}
const [hookPort, webhookPort] = [freePort(), freePort()];
const hooks = await startHookService({
  plane,
  port: hookPort,
  webhookPort,
  kubeconfig: hooksKubeconfig,
  log: `${plane.dir}/hooks.log`,
});
await waitHttp(`https://127.0.0.1:${hookPort}/readyz`, `${plane.dir}/ca.crt`);
const mc = startMetacontroller(metacontroller, plane.dir, `${plane.dir}/metacontroller.log`);
await installArgoCd(argo);
const argocd = startArgoCd(argo, plane, await kustomizeBinary());
const standIn = startStandIn("butler-system");

const test = new Deno.Command(Deno.execPath(), {
  args: [
    "test",
    "--allow-all",
    ...Deno.args,
    ...[...Deno.readDirSync(`${ROOT}/tests/gitops`)].map((e) => e.name).filter((n) =>
      n.endsWith(".gitops.ts")
    )
      .sort().map((n) => `tests/gitops/${n}`),
  ],
  cwd: ROOT,
  env: {
    BUTLER_TEST_CLUSTER: plane.dir,
    DENO_CERT: `${plane.dir}/ca.crt`,
    BUTLER_HOOKS_URL: `https://127.0.0.1:${hookPort}`,
    BUTLER_WEBHOOKS_URL: `https://127.0.0.1:${webhookPort}`,
    ARGOCD_SRC: argo.src,
  },
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await test.status;
console.log(`stand-in wrote the status of: ${[...new Set(standIn.wrote)].sort().join(", ")}`);
const cpu = [["hook service", hooks.pid], ["Metacontroller", mc.pid]] as const;
console.log(
  `CPU used: ${cpu.map(([name, pid]) => `${name} ${cpuSeconds(pid)?.toFixed(1) ?? "?"} s`).join(", ")}`,
);
await standIn.stop();
await argocd.stop();
for (const child of [mc, hooks]) {
  try {
    child.kill("SIGKILL");
  } catch { /* already gone */ }
  await child.status;
}
await plane.stop();
if (status.success) await Deno.remove(plane.dir, { recursive: true });
else {
  console.log(
    `control plane state and logs (hooks.log, metacontroller.log, argocd-*.log, redis.log) kept in ${plane.dir}`,
  );
}
Deno.exit(status.code);
