/**
 * The Go tools of the real API server tier, built from Go modules once and cached: the test control plane
 * (`tests/apiserver`, kube-apiserver + etcd + the namespace and garbage collector controllers in one binary),
 * `kubectl-validate`, `kustomize`, and the Argo CD health script runner (`tests/luahealth`, gopher-lua). The cache key of the control plane is a hash of its sources, so a change rebuilds it.
 *
 * @module
 */

/**
 * The Kubernetes versions the test control plane is built in, each from its own module file in tests/apiserver
 * (same main.go): the newest we test, and the oldest we claim (docs/install.md's requirement).
 */
export const KUBERNETES_VERSIONS = { newest: "1.35.4", oldest: "1.30.14" } as const;
const MODFILES: Record<string, string> = { "1.35.4": "go.mod", "1.30.14": "go130.mod" };

/**
 * Kubernetes version of this run's control plane: `BUTLER_TEST_KUBERNETES` (one of {@linkcode KUBERNETES_VERSIONS}),
 * else the newest.
 */
export const KUBERNETES_VERSION: string = (() => {
  const wanted = Deno.env.get("BUTLER_TEST_KUBERNETES") ?? KUBERNETES_VERSIONS.newest;
  if (!MODFILES[wanted]) {
    throw new Error(
      `BUTLER_TEST_KUBERNETES=${wanted}: the test control plane is built in ${
        Object.keys(MODFILES).join(" or ")
      }`,
    );
  }
  return wanted;
})();
/** Pinned kubectl-validate release. */
export const KUBECTL_VALIDATE_VERSION = "v0.0.4";
/** Pinned kustomize release: the command docs/install.md tells users to run. */
export const KUSTOMIZE_VERSION = "v5.7.1";

const root = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");

/** Where built tools are kept between runs: `BUTLER_TEST_CACHE`, else `~/.cache/butler-test`. */
export function cacheDir(): string {
  return Deno.env.get("BUTLER_TEST_CACHE") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/butler-test`;
}

async function sha256(paths: string[]): Promise<string> {
  const parts = paths.map((p) => Deno.readFileSync(`${root}/${p}`));
  const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    all.set(p, offset);
    offset += p.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  return Array.from(digest.slice(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

async function go(args: string[], cwd: string, env: Record<string, string> = {}): Promise<void> {
  const child = new Deno.Command("go", { args, cwd, env, stdout: "inherit", stderr: "inherit" }).spawn();
  const status = await child.status;
  if (!status.success) throw new Error(`go ${args.join(" ")} failed (exit ${status.code})`);
}

/** Builds (or finds in the cache) the test control plane binary and returns its path. */
export async function controlPlaneBinary(): Promise<string> {
  const modfile = MODFILES[KUBERNETES_VERSION]!;
  const sum = modfile.replace(/\.mod$/, ".sum");
  const key = await sha256([
    `tests/apiserver/${modfile}`,
    `tests/apiserver/${sum}`,
    "tests/apiserver/main.go",
  ]);
  const bin = `${cacheDir()}/butler-test-apiserver-${KUBERNETES_VERSION}-${key}`;
  if (!exists(bin)) {
    console.log(`building the test control plane (Kubernetes ${KUBERNETES_VERSION}) into ${bin}`);
    await go(["build", "-trimpath", `-modfile=${modfile}`, "-o", bin, "."], `${root}/tests/apiserver`);
  }
  return bin;
}

/**
 * Builds (or finds in the cache) `tests/luahealth`, which runs an Argo CD health script in gopher-lua the way Argo
 * CD does, and returns its path.
 */
export async function luaHealthBinary(): Promise<string> {
  const key = await sha256(["tests/luahealth/go.mod", "tests/luahealth/go.sum", "tests/luahealth/main.go"]);
  const bin = `${cacheDir()}/butler-luahealth-${key}`;
  if (!exists(bin)) {
    console.log(`building the Argo CD health script runner into ${bin}`);
    await go(["build", "-trimpath", "-o", bin, "."], `${root}/tests/luahealth`);
  }
  return bin;
}

/** Installs (or finds in the cache) the pinned kubectl-validate and returns its path. */
export async function kubectlValidateBinary(): Promise<string> {
  const dir = `${cacheDir()}/kubectl-validate-${KUBECTL_VALIDATE_VERSION}`;
  const bin = `${dir}/kubectl-validate`;
  if (!exists(bin)) {
    console.log(`installing kubectl-validate ${KUBECTL_VALIDATE_VERSION} into ${dir}`);
    await go(["install", `sigs.k8s.io/kubectl-validate@${KUBECTL_VALIDATE_VERSION}`], root, { GOBIN: dir });
  }
  return bin;
}

/** Installs (or finds in the cache) the kustomize command from its Go module and returns its path. */
export async function kustomizeBinary(): Promise<string> {
  const dir = `${cacheDir()}/kustomize-${KUSTOMIZE_VERSION}`;
  const bin = `${dir}/kustomize`;
  if (!exists(bin)) {
    console.log(`installing kustomize ${KUSTOMIZE_VERSION} into ${dir}`);
    await go(["install", `sigs.k8s.io/kustomize/kustomize/v5@${KUSTOMIZE_VERSION}`], root, { GOBIN: dir });
  }
  return bin;
}

/** Builds (or finds in the cache) `tests/promql`, Prometheus's PromQL parser as a command, and returns its path. */
export async function promqlBinary(): Promise<string> {
  const key = await sha256(["tests/promql/go.mod", "tests/promql/go.sum", "tests/promql/main.go"]);
  const bin = `${cacheDir()}/butler-promql-${key}`;
  if (!exists(bin)) {
    console.log(`building the PromQL parser into ${bin}`);
    await go(["build", "-trimpath", "-o", bin, "."], `${root}/tests/promql`);
  }
  return bin;
}

/**
 * Builds (or finds in the cache) `tests/grafana`, a strict check of a dashboard against Grafana's dashboard model
 * (the Grafana Foundation SDK's types), and returns its path.
 */
export async function grafanaBinary(): Promise<string> {
  const key = await sha256(["tests/grafana/go.mod", "tests/grafana/go.sum", "tests/grafana/main.go"]);
  const bin = `${cacheDir()}/butler-grafana-${key}`;
  if (!exists(bin)) {
    console.log(`building the Grafana dashboard check into ${bin}`);
    await go(["build", "-trimpath", "-o", bin, "."], `${root}/tests/grafana`);
  }
  return bin;
}

/**
 * The CRDs of the operators our optional objects belong to, at the versions the README pins, from their Go
 * modules (the module proxy is the one registry the suite may use): cert-manager's Certificate and Issuer,
 * prometheus-operator's ServiceMonitor and PrometheusRule, MetalLB's IPAddressPool and L2Advertisement (in the
 * tenant), and Cluster API's IPAddressClaim and IPAddress (the cluster-api-ipam component). Returns the
 * directories holding them.
 */
export const OPERATOR_CRDS = {
  "cert-manager": { module: "github.com/cert-manager/cert-manager", version: "v1.19.1", dir: "deploy/crds" },
  "prometheus-operator": {
    module: "github.com/prometheus-operator/prometheus-operator",
    version: "v0.85.0",
    dir: "example/prometheus-operator-crd",
  },
  metallb: { module: "go.universe.tf/metallb", version: "v0.14.9", dir: "config/crd/bases" },
  "cluster-api": { module: "sigs.k8s.io/cluster-api", version: "v1.14.2", dir: "core/config/crd/bases" },
} as const;

/** Downloads (or finds in the module cache) an operator's module and returns the directory of its CRDs. */
export async function operatorCrds(name: keyof typeof OPERATOR_CRDS): Promise<string> {
  const { module, version, dir } = OPERATOR_CRDS[name];
  return `${await goModuleDir(module, version)}/${dir}`;
}

/** Downloads (or finds in the module cache) a Go module at a version and returns its directory. */
export async function goModuleDir(module: string, version: string): Promise<string> {
  const out = await new Deno.Command("go", {
    args: ["mod", "download", "-json", `${module}@${version}`],
    cwd: root,
    env: { GOFLAGS: "-mod=mod" },
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`go mod download ${module}@${version} failed`);
  return (JSON.parse(new TextDecoder().decode(out.stdout)) as { Dir: string }).Dir;
}
