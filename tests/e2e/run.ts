/**
 * `deno task test:e2e`: the real controller tier. Starts the test control plane (as `deno task test:api` does),
 * the hook service on loopback over HTTPS requiring client certificates, and the Metacontroller binary given in
 * `METACONTROLLER_BIN` (>= 4.16), installs `manifests/` with the controllers pointed at the hook service (the
 * Secrets cert-manager would write made from the test PKI), and runs every `tests/e2e/*.e2e.ts` lifecycle
 * against them. This project never builds Metacontroller: bring your own binary.
 *
 * @module
 */
import { freePort, ROOT } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION } from "../api/tools.ts";
import {
  endTier,
  hookServiceAccount,
  runTierTests,
  shippedSizing,
  startHookService,
  startMetacontroller,
  waitHttp,
} from "./stack.ts";

const metacontroller = Deno.env.get("METACONTROLLER_BIN");
if (!metacontroller) {
  console.error(
    "deno task test:e2e needs METACONTROLLER_BIN: the path of a Metacontroller (>= 4.16) binary, built from\n" +
      "its repository (github.com/metacontroller/metacontroller) outside this project. Nothing else is needed:\n" +
      "the Kubernetes control plane is built from Go modules as for `deno task test:api`.",
  );
  Deno.exit(2);
}

const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
console.log(`real controller tier: Kubernetes ${KUBERNETES_VERSION}, Metacontroller ${metacontroller}`);

Deno.env.set("BUTLER_TEST_CLUSTER", plane.dir); // for kubectl in the install helpers, as in the tests
const hooksKubeconfig = await hookServiceAccount(plane);
const [hookPort, webhookPort] = [freePort(), freePort()];
// As deployed: the shipped command line, Deno permissions and sizing (workers, queue, heap caps), HTTPS, and hook
// calls only with a client certificate from the test CA (Metacontroller's, which the install step puts where the
// controllers' clientTLS reads it). One addition: the test-only TEST_SHRINK_GRACE_SECONDS, which the shipped
// --allow-env leaves out on purpose: elastic growth unused for 20 s is released (the seed's 10 minutes otherwise).
console.log(
  `hook service as shipped: ${Object.entries(shippedSizing()).map(([k, v]) => `${k}=${v}`).join(" ")}`,
);
const hooks = await startHookService({
  plane,
  port: hookPort,
  webhookPort,
  kubeconfig: hooksKubeconfig,
  log: `${plane.dir}/hooks.log`,
  testEnv: { TEST_SHRINK_GRACE_SECONDS: "20" },
});
// Listening: it is ready once its admission cache can list, which Butler's RBAC, installed below, allows.
await waitHttp(`https://127.0.0.1:${hookPort}/healthz`, `${plane.dir}/ca.crt`);

// Measuring Metacontroller's own flags (its client rate limit, say): METACONTROLLER_ARGS="--client-go-qps=50".
const mc = startMetacontroller(
  metacontroller,
  plane.dir,
  `${plane.dir}/metacontroller.log`,
  Deno.env.get("METACONTROLLER_ARGS")?.split(/\s+/).filter(Boolean) ?? [],
);

// lifecycle.e2e.ts first: its first test installs what every other file uses.
const files = [...Deno.readDirSync(`${ROOT}/tests/e2e`)].map((e) => e.name).filter((n) =>
  n.endsWith(".e2e.ts")
)
  .sort((a, b) => Number(b === "lifecycle.e2e.ts") - Number(a === "lifecycle.e2e.ts") || (a < b ? -1 : 1))
  .map((n) => `tests/e2e/${n}`);
const status = await runTierTests({ plane, hookPort, webhookPort }, files);
await endTier(plane, status, { "hook service": hooks, Metacontroller: mc }, "hooks.log, metacontroller.log");
