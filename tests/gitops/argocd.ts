/**
 * Argo CD for the gitops tier: Redis (Debian's `redis-server`), the repo server and the application controller of
 * a binary built by hand from Argo CD's source (`ARGOCD_BIN`, one binary that is each component by
 * `ARGOCD_BINARY_NAME`, as Argo CD's image runs it), Argo CD's CRDs from that source (`ARGOCD_SRC`), and its
 * configuration as docs/install.md tells a user to set it: our `manifests/argocd/argocd-cm.yaml` merged into
 * `argocd-cm`, nothing else changed (custom health scripts then run with Argo CD's default Lua libraries).
 *
 * @module
 */
import { parse } from "yaml";
import { freePort, kubectlOk, ROOT, spawnLogged } from "../api/cluster.ts";

/** Where Argo CD comes from: its binary and its source tree (CRDs, and its Lua test harness). */
export interface ArgoCd {
  readonly bin: string;
  readonly src: string;
}

/** The Argo CD to run, from `ARGOCD_BIN` and `ARGOCD_SRC`; undefined (and why) when either is unset. */
export function argoCdFromEnv(): ArgoCd | string {
  const bin = Deno.env.get("ARGOCD_BIN");
  const src = Deno.env.get("ARGOCD_SRC");
  if (!bin || !src) {
    return "deno task test:gitops needs ARGOCD_BIN (a binary built by hand from github.com/argoproj/argo-cd that\n" +
      "runs the application controller and the repo server by ARGOCD_BINARY_NAME, as Argo CD's image does) and\n" +
      "ARGOCD_SRC (that source tree: its CRDs and its util/lua health test harness), besides METACONTROLLER_BIN.\n" +
      "This project never builds Argo CD: bring your own.";
  }
  return { bin, src };
}

type Obj = Record<string, unknown>;

/** Argo CD's CRDs, namespace, `argocd-cm` with our health checks, `argocd-secret` and the default AppProject. */
export async function installArgoCd(argo: ArgoCd): Promise<void> {
  for (const crd of ["application-crd.yaml", "appproject-crd.yaml"]) {
    await kubectlOk(["apply", "--server-side", "-f", `${argo.src}/manifests/crds/${crd}`]);
  }
  await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
  await kubectlOk(["create", "namespace", "argocd"]);
  const cm = parse(Deno.readTextFileSync(`${ROOT}/manifests/argocd/argocd-cm.yaml`)) as Obj;
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: "argocd-secret",
      namespace: "argocd",
      labels: { "app.kubernetes.io/part-of": "argocd" },
    },
    stringData: { "server.secretkey": crypto.randomUUID() },
  };
  // What the API server component creates on its first start, which this tier does not run.
  const project = {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "AppProject",
    metadata: { name: "default", namespace: "argocd" },
    spec: {
      sourceRepos: ["*"],
      destinations: [{ server: "*", namespace: "*" }],
      clusterResourceWhitelist: [{ group: "*", kind: "*" }],
    },
  };
  for (const o of [cm, secret, project]) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(o) });
  }
}

/** The running Argo CD processes. */
export interface ArgoCdProcesses {
  stop(): Promise<void>;
}

/**
 * Starts Redis, the repo server (with `kustomize` and `git` on its PATH) and the application controller (as the
 * test control plane's admin, in namespace argocd), each logging into `dir`.
 */
export function startArgoCd(
  argo: ArgoCd,
  plane: { readonly dir: string },
  kustomize: string,
): ArgoCdProcesses {
  const [redisPort, repoPort] = [freePort(), freePort()];
  const redis = spawnLogged(
    ["redis-server", "--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    `${plane.dir}/redis.log`,
    {},
  );
  // As Argo CD's image: its git wrappers (the repo server runs git-verify-wrapper.sh on every revision) beside
  // kustomize and git.
  const tools = `${plane.dir}/argocd-tools`;
  Deno.mkdirSync(tools, { recursive: true });
  for (const script of ["gpg-wrapper.sh", "git-verify-wrapper.sh"]) {
    Deno.copyFileSync(`${argo.src}/hack/${script}`, `${tools}/${script}`);
    Deno.chmodSync(`${tools}/${script}`, 0o755);
  }
  // helm too, as in Argo CD's image: Helm sources are rendered with it (HELM_BIN, built outside this project).
  const helm = Deno.env.get("HELM_BIN");
  if (helm) Deno.symlinkSync(helm, `${tools}/helm`);
  const path = [tools, kustomize.replace(/\/[^/]+$/, ""), Deno.env.get("PATH") ?? "/usr/bin:/bin"].join(":");
  // ARGOCD_FAKE_IN_CLUSTER: the in-cluster destination (https://kubernetes.default.svc) is KUBECONFIG's cluster, as
  // Argo CD's own local runs do; no GnuPG keyring here.
  const common = {
    PATH: path,
    HOME: plane.dir,
    KUBECONFIG: `${plane.dir}/kubeconfig`,
    ARGOCD_FAKE_IN_CLUSTER: "true",
    ARGOCD_GPG_ENABLED: "false",
  };
  const repo = spawnLogged(
    [
      argo.bin,
      `--port=${repoPort}`,
      `--metrics-port=${freePort()}`,
      `--redis=127.0.0.1:${redisPort}`,
      "--disable-tls",
      "--client-ca-path=",
      "--loglevel=info",
    ],
    `${plane.dir}/argocd-repo-server.log`,
    { ...common, ARGOCD_BINARY_NAME: "argocd-repo-server" },
  );
  const controller = spawnLogged(
    [
      argo.bin,
      `--repo-server=127.0.0.1:${repoPort}`,
      "--repo-server-plaintext",
      `--redis=127.0.0.1:${redisPort}`,
      `--metrics-port=${freePort()}`,
      "--namespace=argocd",
      "--loglevel=debug",
      "--self-heal-timeout-seconds=2",
      // Since Argo CD 3.0 each resource's health lives in Redis unless persisted: kept in the Application's status,
      // the tests read what Argo CD shows without its API server.
      "--persist-resource-health",
    ],
    `${plane.dir}/argocd-application-controller.log`,
    { ...common, ARGOCD_BINARY_NAME: "argocd-application-controller" },
  );
  return {
    async stop() {
      for (const p of [controller, repo, redis]) {
        try {
          p.kill("SIGTERM");
        } catch { /* gone */ }
        await p.status;
      }
    },
  };
}
