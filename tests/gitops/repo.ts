/**
 * The local git repository Argo CD syncs from, as a platform team's would be: a copy of `manifests/`, the
 * production overlay (`examples/kustomize/production`) and the Helm chart (`charts/butler`), an install folder on top of that overlay, and a folder of
 * platform objects (`platform/`, the examples). The install folder adds only what the test control plane needs:
 * no Service routes to the hook service here (it runs on loopback), so, as `deno task test:e2e` does, the
 * controllers' hook URLs and the webhooks' client configs point at it, with the test CA where cert-manager's
 * injector would put one. Those are kustomize patches over the production overlay, computed from its own
 * rendering: everything else is synced as shipped.
 *
 * @module
 */
import { parseAllDocuments, stringify } from "yaml";
import { kubectlOk, ROOT } from "../api/cluster.ts";
import { runCommand } from "../../lib/testing/mod.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const SERVICE_URL = "https://butler-hooks.butler-system.svc/";
const SERVICE_HOST = "butler-hooks.butler-system.svc";

/** Every string in `value` naming the hook Service, as a JSON pointer and its replacement. */
function pointers(value: unknown, at: string, hooks: string): { path: string; value: string }[] {
  if (typeof value === "string") {
    if (value.startsWith(SERVICE_URL)) {
      return [{ path: at, value: `${hooks}/${value.slice(SERVICE_URL.length)}` }];
    }
    if (value === SERVICE_HOST) return [{ path: at, value: new URL(hooks).host }];
    return [];
  }
  if (Array.isArray(value)) return value.flatMap((v, i) => pointers(v, `${at}/${i}`, hooks));
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) =>
      pointers(v, `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`, hooks)
    );
  }
  return [];
}

/**
 * The install folder's kustomization: the production overlay, with the Metacontroller controllers' hooks at
 * `hooks` and the webhooks at `webhooks` (both `https://host:port`), trusting `caBundle` (base64 PEM).
 */
export async function installKustomization(hooks: string, webhooks: string, caBundle: string): Promise<Obj> {
  const rendered = parseAllDocuments(await kubectlOk(["kustomize", "examples/kustomize/production"]))
    .map((d) => d.toJS() as Obj).filter(Boolean);
  const patches = pointingPatches(rendered, hooks, webhooks, caBundle);
  if (!patches.some((p) => p.target.kind === "ValidatingWebhookConfiguration")) {
    throw new Error("the production overlay no longer installs the webhook configuration");
  }
  if (patches.length < 2) {
    throw new Error("the production overlay's controllers no longer name the hook Service");
  }
  return {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources: ["../examples/kustomize/production"],
    patches,
  };
}

/** The kustomize patches that point the rendered objects' hook service references at loopback. */
export function pointingPatches(
  objects: readonly Obj[],
  hooks: string,
  webhooks: string,
  caBundle: string,
): Obj[] {
  const patches: Obj[] = [];
  for (const o of objects) {
    const group = o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : "";
    const target = { group, kind: o.kind, name: o.metadata.name };
    if (o.kind === "CompositeController" || o.kind === "DecoratorController") {
      const ops = pointers(o.spec, "/spec", hooks).map((p) => ({ op: "replace", ...p }));
      if (ops.length) patches.push({ target, patch: stringify(ops) });
    }
    if (o.kind === "ValidatingWebhookConfiguration") {
      const ops = (o.webhooks as Obj[]).map((w, i) => ({
        op: "replace",
        path: `/webhooks/${i}/clientConfig`,
        value: { url: `${webhooks}${w.clientConfig.service.path}`, caBundle },
      }));
      patches.push({ target, patch: stringify(ops) });
    }
  }
  return patches;
}

/** The runCommand environment for git: an author, and nothing of the user's own configuration. */
const GIT_ENV = {
  GIT_AUTHOR_NAME: "platform",
  GIT_AUTHOR_EMAIL: "platform@example.com",
  GIT_COMMITTER_NAME: "platform",
  GIT_COMMITTER_EMAIL: "platform@example.com",
  GIT_CONFIG_NOSYSTEM: "1",
  HOME: "/nonexistent",
  PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
};

/** A git repository in `dir` with a first commit of the install and an empty `platform/`. */
export async function makeRepo(dir: string, install: Obj): Promise<GitRepo> {
  await Deno.mkdir(dir, { recursive: true });
  await copy(`${ROOT}/manifests`, `${dir}/manifests`);
  await copy(`${ROOT}/examples/kustomize/production`, `${dir}/examples/kustomize/production`);
  await copy(`${ROOT}/charts`, `${dir}/charts`);
  await Deno.mkdir(`${dir}/install`);
  await Deno.writeTextFile(`${dir}/install/kustomization.yaml`, stringify(install));
  await Deno.mkdir(`${dir}/platform`);
  await Deno.writeTextFile(`${dir}/platform/.keep`, "");
  const repo = new GitRepo(dir);
  await repo.git("init", "-q", "-b", "main");
  await repo.commit("Butler, installed from the production overlay");
  return repo;
}

/** A working copy whose commits Argo CD fetches (`file://`). */
export class GitRepo {
  constructor(readonly dir: string) {}

  get url(): string {
    return `file://${this.dir}`;
  }

  async git(...args: string[]): Promise<string> {
    const r = await runCommand("git", ["-C", this.dir, ...args], { env: GIT_ENV });
    if (r.code !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
    return r.stdout.trim();
  }

  /** Commits everything in the working copy; returns the commit. */
  async commit(message: string): Promise<string> {
    await this.git("add", "-A");
    await this.git("commit", "-q", "--allow-empty", "-m", message);
    return await this.git("rev-parse", "HEAD");
  }
}

async function copy(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const e of Deno.readDir(from)) {
    if (e.isDirectory) await copy(`${from}/${e.name}`, `${to}/${e.name}`);
    else if (e.isFile) await Deno.copyFile(`${from}/${e.name}`, `${to}/${e.name}`);
  }
}
