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
import { freePort, installOperatorCrds, kubectlOk, ROOT } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION, kustomizeBinary } from "../api/tools.ts";
import {
  applyCertManagerSecrets,
  endTier,
  hookServiceAccount,
  runTierTests,
  startHookService,
  startMetacontroller,
  waitHttp,
} from "../e2e/stack.ts";
import { argoCdFromEnv, installArgoCd, startArgoCd } from "./argocd.ts";
import { startStandIn } from "./stand_in.ts";

const metacontroller = Deno.env.get("METACONTROLLER_BIN");
const argo = argoCdFromEnv();
if (!metacontroller || typeof argo === "string" || !Deno.env.get("HELM_BIN")) {
  console.error(
    typeof argo === "string"
      ? argo
      : !metacontroller
      ? "deno task test:gitops needs METACONTROLLER_BIN as test:e2e does."
      : "deno task test:gitops needs HELM_BIN (helm, from helm.sh/helm/v3/cmd/helm): Argo CD renders the chart with it.",
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
await applyCertManagerSecrets(plane.dir);
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

const files = [...Deno.readDirSync(`${ROOT}/tests/gitops`)].map((e) => e.name).filter((n) =>
  n.endsWith(".gitops.ts")
)
  .sort().map((n) => `tests/gitops/${n}`);
const status = await runTierTests({ plane, hookPort, webhookPort }, files, { ARGOCD_SRC: argo.src });
console.log(`stand-in wrote the status of: ${[...new Set(standIn.wrote)].sort().join(", ")}`);
await standIn.stop();
await argocd.stop();
await endTier(
  plane,
  status,
  { "hook service": hooks, Metacontroller: mc },
  "hooks.log, metacontroller.log, argocd-*.log, redis.log",
);
