/**
 * `deno task test:release`: the release's artifacts with the real tools, which this project never builds: helm
 * (`HELM_BIN`), krew and its validator (`KREW_BIN`, `KREW_VALIDATE_BIN`) and actionlint (`ACTIONLINT_BIN`), each
 * built from its Go module outside this project (docs/development.md). Starts the test control plane (as
 * `deno task test:api` does) for the chart's install, upgrade, rollback and uninstall, and runs every
 * `tests/release/*.release.ts`.
 *
 * @module
 */
import { ROOT } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION } from "../api/tools.ts";
import { TOOL_VARIABLES } from "./tools.ts";

const missing = TOOL_VARIABLES.filter((name) => !Deno.env.get(name));
if (missing.length) {
  console.error(
    `deno task test:release needs ${
      missing.join(", ")
    }: the paths of helm (helm.sh/helm/v3/cmd/helm), krew ` +
      "(sigs.k8s.io/krew/cmd/krew), krew's validator (sigs.k8s.io/krew/cmd/validate-krew-manifest) and actionlint " +
      "(github.com/rhysd/actionlint/cmd/actionlint), built from their Go modules outside this project.",
  );
  Deno.exit(2);
}

const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
const versions = await Promise.all(
  TOOL_VARIABLES.map(async (name) => {
    const args = name === "HELM_BIN"
      ? ["version", "--short"]
      : name === "ACTIONLINT_BIN"
      ? ["-version"]
      : ["version"];
    const out = await new Deno.Command(Deno.env.get(name)!, { args, stdout: "piped", stderr: "piped" })
      .output()
      .catch(() => undefined);
    return `${name}=${Deno.env.get(name)} (${
      new TextDecoder().decode(out?.stdout ?? new Uint8Array()).split("\n")[0]
    })`;
  }),
);
console.log(`release tier: Kubernetes ${KUBERNETES_VERSION}; ${versions.join("; ")}`);
const files = [...Deno.readDirSync(`${ROOT}/tests/release`)].map((e) => e.name).filter((n) =>
  n.endsWith(".release.ts")
)
  .sort().map((n) => `tests/release/${n}`);
const status = await new Deno.Command(Deno.execPath(), {
  args: ["test", "--allow-all", ...Deno.args, ...files],
  cwd: ROOT,
  env: { BUTLER_TEST_CLUSTER: plane.dir, DENO_CERT: `${plane.dir}/ca.crt` },
  stdout: "inherit",
  stderr: "inherit",
}).spawn().status;
await plane.stop();
if (status.success) await Deno.remove(plane.dir, { recursive: true });
else console.log(`control plane state and log kept in ${plane.dir}`);
Deno.exit(status.code);
