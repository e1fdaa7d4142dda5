/**
 * The install steps of `test:upgrade`, as docs/install.md documents them, pointed at the loopback fleet: a release's
 * kustomize render applied (or its CRDs left out, for a rollback), Helm's adoption of a kustomize install and its
 * `helm upgrade --install`, and leaving Helm for a previous kustomize release.
 *
 * @module
 */
import { cluster, kubectlOk, ROOT } from "../api/cluster.ts";
import { pointAtLoopback } from "../e2e/stack.ts";
import { FEATURES, render } from "../../tools/chart/mod.ts";
import type { Fleet } from "./fleet.ts";
import type { Obj } from "./tenants.ts";

/** The components every step installs (docs/install.md's table: the Cluster API claims need theirs). */
const COMPONENTS = FEATURES.filter((f) => f.value === "clusterApiIpam.enabled");

/** An object's identity alone, for `kubectl label|annotate|delete -f -`. */
function reference(o: Obj): string {
  const { name, namespace } = o.metadata;
  return JSON.stringify({
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: { name, ...(namespace ? { namespace } : {}) },
  });
}

/** `Kind/namespace/name`. */
export const idOf = (o: Obj): string => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** A release's kustomize install (base and components) as it renders, pointed at the fleet. */
export async function kustomizeObjects(root: string, fleet: Fleet): Promise<Obj[]> {
  const rendered = [...(await render(root, COMPONENTS)).values()].map((o) => JSON.stringify(o)).join(
    "\n---\n",
  );
  return pointAtLoopback(rendered, cluster().dir, fleet.hooks, fleet.webhooks);
}

/** `kubectl apply --server-side` of objects (`--force-conflicts`: taking fields back from Helm). */
export async function apply(objects: Obj[], force = false): Promise<void> {
  await kubectlOk(["apply", "--server-side", ...(force ? ["--force-conflicts"] : []), "-f", "-"], {
    stdin: objects.map((o) => JSON.stringify(o)).join("\n"),
  });
  await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
}

/**
 * Deletes what `installed` has and `next` does not (docs/install.md: what a version no longer ships), but never a
 * CRD or the namespace, which hold Butler's objects.
 */
export async function removeDropped(installed: Obj[], next: Obj[]): Promise<string[]> {
  const keep = new Set(next.map(idOf));
  const dropped = installed.filter((o) =>
    !keep.has(idOf(o)) && !["CustomResourceDefinition", "Namespace"].includes(o.kind)
  );
  if (dropped.length) {
    await kubectlOk(["delete", "-f", "-", "--ignore-not-found"], {
      stdin: dropped.map(reference).join("\n"),
    });
  }
  return dropped.map(idOf);
}

/** The Helm release of the upgrade: its name, and the namespace its record lives in. */
export const RELEASE = { name: "butler", namespace: "default" };

/** docs/install.md#moving-a-kustomize-install-to-helm: the installed objects labelled and annotated as Helm's. */
export async function adoptIntoHelm(installed: Obj[]): Promise<void> {
  const refs = installed.map(reference).join("\n");
  await kubectlOk(["label", "-f", "-", "--overwrite", "app.kubernetes.io/managed-by=Helm"], { stdin: refs });
  await kubectlOk([
    "annotate",
    "-f",
    "-",
    "--overwrite",
    `meta.helm.sh/release-name=${RELEASE.name}`,
    `meta.helm.sh/release-namespace=${RELEASE.namespace}`,
  ], { stdin: refs });
}

/** helm, as the test cluster's admin, with its caches in `dir`; fails with its output. */
async function helm(
  bin: string,
  dir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<string> {
  const out = await new Deno.Command(bin, {
    args: [...args, "--namespace", RELEASE.namespace, `--kubeconfig=${cluster().kubeconfig}`],
    env: {
      HELM_CACHE_HOME: `${dir}/helm-cache`,
      HELM_CONFIG_HOME: `${dir}/helm-config`,
      HELM_DATA_HOME: `${dir}/helm-data`,
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`helm ${args[0]} failed:\n${text}`);
  return text;
}

/** `helm upgrade --install` of `chart` with the Cluster API component, pointed at the fleet (a post-renderer). */
export async function helmUpgrade(bin: string, fleet: Fleet, dir: string, chart: string): Promise<string> {
  const renderer = `${dir}/post-render.sh`;
  await Deno.writeTextFile(
    renderer,
    `#!/bin/sh\nexec '${Deno.execPath()}' run --allow-all '${ROOT}/tests/upgrade/post_render.ts'\n`,
    { mode: 0o755 },
  );
  await Deno.chmod(renderer, 0o755);
  return await helm(bin, dir, [
    "upgrade",
    "--install",
    RELEASE.name,
    chart,
    "--set",
    "clusterApiIpam.enabled=true",
    "--post-renderer",
    renderer,
  ], {
    BUTLER_TEST_CLUSTER: cluster().dir,
    BUTLER_HOOKS_URL: fleet.hooks,
    BUTLER_WEBHOOKS_URL: fleet.webhooks,
  });
}

/** `helm rollback` to the revision before the last (the previous release's chart). */
export async function helmRollback(bin: string, dir: string): Promise<string> {
  const history = JSON.parse(await helm(bin, dir, ["history", RELEASE.name, "-o", "json"])) as {
    revision: number;
  }[];
  const previous = history.at(-2)?.revision;
  if (previous === undefined) throw new Error("the release has no previous revision");
  return await helm(bin, dir, ["rollback", RELEASE.name, String(previous)]);
}

/** docs/install.md#rollback (back from Helm to a kustomize release): Helm forgets its release, deleting nothing. */
export async function leaveHelm(): Promise<void> {
  await kubectlOk(["delete", "secret", "-n", RELEASE.namespace, "-l", `owner=helm,name=${RELEASE.name}`]);
}
