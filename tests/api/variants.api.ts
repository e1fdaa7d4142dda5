/**
 * Every documented install variant: the base, each overlay of `examples/kustomize/`, each component of
 * `manifests/components/` over the base, and the base with every component (but the one that removes the webhooks).
 *
 * - Rendered: every object carries `app.kubernetes.io/part-of=butler`, so each `-l` selector the README and docs/
 *   use (install check, certificate rotation, uninstall, runbook) reaches every object of the kinds it names.
 * - Installed on a real API server of its own (the uninstall removes CRDs the shared one's tests need): the docs'
 *   selectors find every object of their kinds; then docs/install.md's uninstall block, run as written with
 *   `OVERLAY` naming the variant and Butler objects holding Metacontroller's finalizers, removes exactly what the
 *   variant installed and the objects, and nothing else.
 * - The production example needs no CRD the base does not; copied elsewhere by docs/install.md's block, or referenced
 *   at a tag as docs/install.md shows, it builds to the example's objects (a tagged local clone stands for the remote).
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { parseAllDocuments } from "yaml";
import { ROOT } from "./cluster.ts";
import { startControlPlane } from "./run.ts";
import { controlPlaneBinary, operatorCrds } from "./tools.ts";
import { type CommandRun, runCommand } from "../../lib/testing/mod.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const LABEL = "app.kubernetes.io/part-of";
const COMPONENTS = [...Deno.readDirSync(`${ROOT}/manifests/components`)].filter((e) => e.isDirectory)
  .map((e) => e.name).sort();
const OVERLAYS = [...Deno.readDirSync(`${ROOT}/examples/kustomize`)].filter((e) => e.isDirectory)
  .map((e) => `examples/kustomize/${e.name}`).sort();

/** A kustomization directory of its own (under the system's temp dir) over the base with `components`. */
function generated(name: string, components: readonly string[]): string {
  const dir = Deno.makeTempDirSync({ prefix: `butler-variant-${name}-` });
  const to = (p: string) => relative(dir, `${ROOT}/${p}`);
  Deno.writeTextFileSync(
    `${dir}/kustomization.yaml`,
    [
      "apiVersion: kustomize.config.k8s.io/v1beta1",
      "kind: Kustomization",
      "resources:",
      `  - ${to("manifests")}`,
      "components:",
      ...components.map((c) => `  - ${to(`manifests/components/${c}`)}`),
      "",
    ].join("\n"),
  );
  return dir;
}

/** Every documented variant, by name, and the kustomization directory that renders it (absolute). */
const VARIANTS: { readonly name: string; readonly dir: string; readonly uninstall: boolean }[] = [
  { name: "manifests", dir: `${ROOT}/manifests`, uninstall: true },
  ...OVERLAYS.map((o) => ({ name: o, dir: `${ROOT}/${o}`, uninstall: true })),
  ...COMPONENTS.map((c) => ({ name: `manifests + ${c}`, dir: generated(c, [c]), uninstall: false })),
  {
    name: "manifests + every component",
    dir: generated("all", COMPONENTS.filter((c) => c !== "without-admission-webhooks")),
    uninstall: true,
  },
];

// The generated kustomizations go with the test process.
globalThis.addEventListener("unload", () => {
  for (const v of VARIANTS.filter((x) => !x.dir.startsWith(ROOT))) {
    Deno.removeSync(v.dir, { recursive: true });
  }
});

async function ok(
  cmd: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
) {
  const r: CommandRun = await runCommand(cmd, args, options);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")} (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const renders = new Map<string, Obj[]>();
async function render(dir: string): Promise<Obj[]> {
  if (!renders.has(dir)) {
    renders.set(
      dir,
      parseAllDocuments(await ok("kubectl", ["kustomize", dir])).map((d) => d.toJS()).filter(Boolean),
    );
  }
  return renders.get(dir)!;
}

const id = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;

/** The resource names kubectl takes for a kind (`crds` is the one short name the docs use). */
function resourceOf(kind: string): string {
  const plural = kind.toLowerCase().replace(/y$/, "ie") + "s";
  return plural === "customresourcedefinitions" ? "crds" : plural;
}

/** The short names the docs use, as kubectl resolves them. */
const SHORT_NAMES: Readonly<Record<string, string>> = {
  crd: "crds",
  deploy: "deployments",
  ns: "namespaces",
};

/** Each `kubectl ... <resources> ... -l app.kubernetes.io/part-of=butler` of the README and docs/, with where. */
function docSelectors(): { where: string; resources: string[] }[] {
  const pages = ["README.md", ...[...Deno.readDirSync(`${ROOT}/docs`)].map((e) => `docs/${e.name}`)]
    .filter((p) => p.endsWith(".md"));
  const gap = String.raw`(?:\s|\\\n)+`;
  const pattern = new RegExp(
    String
      .raw`kubectl${gap}(?:-n${gap}\S+${gap})?(?:get|delete|annotate|wait|label)${gap}(?:--\S+${gap})*([a-z][a-z,.]*)${gap}(?:--\S+${gap})*-l${gap}${
      LABEL.replace(/\./g, "\\.")
    }=butler`,
    "g",
  );
  return pages.flatMap((page) =>
    [...Deno.readTextFileSync(`${ROOT}/${page}`).matchAll(pattern)].map((m) => ({
      where: `${page}: ${m[0].replace(/\s+/g, " ")}`,
      resources: m[1]!.split(",").map((r) => SHORT_NAMES[r] ?? r.replace(/\.butler\.butlerlabs\.dev$/, "")),
    }))
  );
}

Deno.test("every object of every documented variant carries the label the docs' selectors select on", async (t) => {
  const selectors = docSelectors();
  // The install check, the certificate rotation, the uninstall (two) and its final check, and the runbook.
  assert.ok(selectors.length >= 6, JSON.stringify(selectors));
  const kinds = new Set<string>();
  for (const v of VARIANTS) {
    await t.step(v.name, async () => {
      const objects = await render(v.dir);
      assert.ok(objects.length >= 45, `${objects.length} objects`);
      assert.deepEqual(objects.filter((o) => o.metadata.labels?.[LABEL] !== "butler").map(id), []);
      for (const o of objects) kinds.add(resourceOf(o.kind));
    });
  }
  await t.step("each selector names kinds Butler installs", () => {
    for (const s of selectors) {
      for (const r of s.resources) assert.ok(kinds.has(r), `${s.where}: Butler installs no ${r}`);
    }
  });
});

Deno.test("the production example needs nothing the base does not; monitoring is its own example", async () => {
  const groups = async (dir: string) =>
    new Set((await render(dir)).map((o) => o.apiVersion.includes("/") ? o.apiVersion.split("/")[0] : ""));
  const base = await groups(`${ROOT}/manifests`);
  const BUILT_IN = new Set(["", "apps", "policy", "networking.k8s.io", "rbac.authorization.k8s.io"]);
  const extra = [...await groups(`${ROOT}/examples/kustomize/production`)].filter((g) =>
    !base.has(g) && !BUILT_IN.has(g)
  );
  assert.deepEqual(extra, [], "the production example asks for CRDs the base does not need");
  assert.ok((await groups(`${ROOT}/examples/kustomize/production-monitoring`)).has("monitoring.coreos.com"));
});

/** A git repository of this working tree's manifests/ and examples/, tagged: what kustomize fetches remotely. */
async function taggedClone(tag: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "butler-remote-" });
  await ok("cp", ["-r", `${ROOT}/manifests`, `${ROOT}/examples`, dir]);
  const git = (...args: string[]) =>
    ok("git", [
      "-c",
      "user.name=t",
      "-c",
      "user.email=t@example.com",
      "-c",
      "init.defaultBranch=main",
      ...args,
    ], {
      cwd: dir,
    });
  await git("init", "-q");
  await git("add", "-A");
  await git("commit", "-q", "-m", "release");
  await git("tag", tag);
  return dir;
}

/** Objects as comparable text, order aside. */
const canonical = (objects: Obj[]) => objects.map((o) => JSON.stringify(o)).sort();

Deno.test("the production example, used from elsewhere at a release, builds to its own objects", async (t) => {
  const install = Deno.readTextFileSync(`${ROOT}/docs/install.md`);
  // The release the docs install is this one: one version, in deno.json.
  const version = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`)).version as string;
  const repo = await taggedClone(`v${version}`);
  const remote = `file://${repo}`;
  const inPlace = await render(`${ROOT}/examples/kustomize/production`);
  try {
    await t.step("copied by docs/install.md's block", async () => {
      const block = /<!-- test:api runs this block -->\s*```sh\n([\s\S]*?)```/.exec(install)?.[1];
      assert.ok(block, "docs/install.md shows how to copy an example");
      assert.match(block, /^BUTLER=https:\/\/\S+/m);
      const script = block.replace(/^BUTLER=\S+/m, `BUTLER=${remote}`);
      const cwd = await Deno.makeTempDir({ prefix: "butler-copy-" });
      await Deno.symlink(`${ROOT}/examples`, `${cwd}/examples`);
      await ok("bash", ["-euo", "pipefail", "-c", script], { cwd });
      const copy = Deno.readTextFileSync(`${cwd}/butler/kustomization.yaml`);
      const paths = copy.split("\n").filter((l) => !l.trimStart().startsWith("#") && l.includes("../"));
      assert.deepEqual(paths, [], "no path into this repository is left");
      assert.deepEqual(canonical(await render(`${cwd}/butler`)), canonical(inPlace));
    });
    await t.step("referenced at a tag, with the image set on top", async () => {
      const yaml = /<!-- test:api renders this kustomization -->\s*```yaml\n([\s\S]*?)```/.exec(install)?.[1];
      assert.ok(yaml, "docs/install.md shows a kustomization that references the example");
      const url = /^ {2}- (https:\/\/\S+)\/\/examples\/kustomize\/production\?ref=(\S+)$/m.exec(yaml);
      assert.ok(url, yaml);
      const dir = await Deno.makeTempDir({ prefix: "butler-reference-" });
      Deno.writeTextFileSync(`${dir}/kustomization.yaml`, yaml.replace(url[1]!, remote));
      // What it must equal: the example in place with the same images setting.
      const local = await Deno.makeTempDir({ prefix: "butler-reference-local-" });
      Deno.writeTextFileSync(
        `${local}/kustomization.yaml`,
        yaml.replace(url[0]!, `  - ${relative(local, `${ROOT}/examples/kustomize/production`)}`),
      );
      const referenced = await render(dir);
      assert.deepEqual(canonical(referenced), canonical(await render(local)));
      const images = referenced.flatMap((o) => o.spec?.template?.spec?.containers ?? []).map((c: Obj) =>
        c.image
      );
      assert.ok(
        images.length >= 2 &&
          images.every((i: string) => i === `registry.example.com/platform/butler-hooks:${version}`),
      );
    });
  } finally {
    await Deno.remove(repo, { recursive: true });
  }
});

/** Butler objects as the controllers would leave them running: each holding Metacontroller's finalizer. */
function butlerObjects(teamUid?: string): Obj[] {
  const api = "butler.butlerlabs.dev/v1alpha1";
  const fin = (controller: string) => [`metacontroller.io/${controller}`];
  // As the Team controller makes its children: labelled with the team, and owned by it.
  const owned = {
    labels: { "butler.butlerlabs.dev/team": "gone", "app.kubernetes.io/managed-by": "butler" },
    ...(teamUid
      ? { ownerReferences: [{ apiVersion: api, kind: "Team", name: "gone", uid: teamUid, controller: true }] }
      : {}),
  };
  return [
    {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-gone", ...owned },
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "butler-team-gone-member", ...owned },
      rules: [],
    },
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "gone-kubeconfig", namespace: "butler-system" },
      stringData: { kubeconfig: "apiVersion: v1" },
    },
    {
      apiVersion: api,
      kind: "NetworkPool",
      metadata: {
        name: "gone-pool",
        namespace: "butler-system",
        finalizers: fin("decoratorcontroller-butler-networkpool"),
      },
      spec: { cidr: "10.99.0.0/24" },
    },
    {
      apiVersion: api,
      kind: "ProviderConfig",
      metadata: {
        name: "gone",
        namespace: "butler-system",
        finalizers: fin("decoratorcontroller-butler-providerconfig"),
      },
      spec: {
        provider: "harvester",
        credentialsRef: { name: "gone-kubeconfig" },
        harvester: { networkName: "default/vlan99" },
        network: { mode: "ipam", poolRefs: [{ name: "gone-pool", priority: 0 }] },
      },
    },
    {
      apiVersion: api,
      kind: "TenantCluster",
      metadata: {
        name: "web",
        namespace: "team-gone",
        finalizers: fin("compositecontroller-butler-tenantcluster"),
      },
      spec: { providerConfigRef: { name: "gone" }, kubernetesVersion: "v1.31.0" },
    },
    {
      apiVersion: api,
      kind: "IPAllocation",
      metadata: {
        name: "web-lb",
        namespace: "team-gone",
        finalizers: fin("decoratorcontroller-butler-ipallocation"),
      },
      spec: { poolRef: { name: "gone-pool", namespace: "butler-system" }, type: "loadbalancer", count: 4 },
    },
  ];
}

Deno.test("docs/install.md's uninstall removes exactly what each documented variant installed", async (t) => {
  const install = Deno.readTextFileSync(`${ROOT}/docs/install.md`);
  const block = /<!-- test:api and test:scale run this block -->\s*```sh\n([\s\S]*?)```/.exec(install)?.[1];
  assert.ok(block, "docs/install.md marks its uninstall block");
  const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
  const env = { KUBECONFIG: `${plane.dir}/kubeconfig` };
  const kubectl = (args: readonly string[], stdin?: string) =>
    runCommand(
      "kubectl",
      [`--kubeconfig=${plane.dir}/kubeconfig`, ...args],
      stdin === undefined ? {} : { stdin },
    );
  const kubectlOk = async (args: readonly string[], stdin?: string) => {
    const r = await kubectl(args, stdin);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")}: ${r.stderr}`);
    return r.stdout;
  };
  const applyAll = (objects: readonly Obj[]) =>
    kubectlOk(["apply", "--server-side", "-f", "-"], objects.map((o) => JSON.stringify(o)).join("\n"));
  try {
    // What the cluster holds before Butler: the operators' CRDs, and objects of others the uninstall must keep.
    const monitoring = await operatorCrds("prometheus-operator");
    const capi = await operatorCrds("cluster-api");
    await kubectlOk([
      "apply",
      "--server-side",
      "-f",
      `${ROOT}/tests/api/crds/`,
      "-f",
      await operatorCrds("cert-manager"),
      ...["servicemonitors", "podmonitors", "prometheusrules"].flatMap((r) => [
        "-f",
        `${monitoring}/monitoring.coreos.com_${r}.yaml`,
      ]),
      "-f",
      `${capi}/ipam.cluster.x-k8s.io_ipaddressclaims.yaml`,
      "-f",
      `${capi}/ipam.cluster.x-k8s.io_ipaddresses.yaml`,
    ]);
    await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
    const others = (await kubectlOk(["get", "crd", "-o", "name"])).trim().split("\n").sort();
    await applyAll([
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "bystander", namespace: "default" } },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "bystander" },
        rules: [],
      },
    ]);
    const selectors = docSelectors();

    for (const v of VARIANTS.filter((x) => x.uninstall)) {
      await t.step(v.name, async () => {
        const rendered = await render(v.dir);
        // The variant as `kubectl apply -k` installs it, and Butler objects made while no webhook service answers
        // (the webhook configuration comes with the second apply, as it stays once installed).
        await applyAll(rendered.filter((o) => o.kind !== "ValidatingWebhookConfiguration"));
        await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
        const [namespace, role, ...rest] = butlerObjects();
        await applyAll([namespace!, role!]);
        await eventually(async () =>
          (await kubectl(
            ["apply", "--server-side", "-f", "-"],
            rest.map((o) => JSON.stringify(o)).join("\n"),
          )).code === 0
        );
        await applyAll([
          {
            apiVersion: "butler.butlerlabs.dev/v1alpha1",
            kind: "Team",
            metadata: { name: "gone", finalizers: ["metacontroller.io/compositecontroller-butler-team"] },
            spec: { access: { users: [{ name: "gone@example.com", role: "admin" }] } },
          },
        ]);
        const team = JSON.parse(await kubectlOk(["get", "team", "gone", "-o", "json"]));
        // The Team's children, as its controller makes them: owned by it.
        await applyAll(butlerObjects(team.metadata.uid).slice(0, 2));
        await kubectlOk(["apply", "--server-side", "-k", v.dir]);

        // The docs' selectors find every object of the kinds they name, on the API server.
        for (const s of selectors) {
          const want = rendered.filter((o) => s.resources.includes(resourceOf(o.kind))).map((o) =>
            `${resourceOf(o.kind)}/${o.metadata.name}`
          ).sort();
          const got = await kubectlOk([
            "get",
            s.resources.join(","),
            "-A",
            "-l",
            `${LABEL}=butler`,
            "-o",
            "json",
          ]);
          const names = (JSON.parse(got).items as Obj[]).map((o) =>
            `${resourceOf(o.kind)}/${o.metadata.name}`
          ).sort();
          assert.deepEqual(names, want, s.where);
        }

        const run = await runCommand("bash", ["-euo", "pipefail", "-c", block], {
          cwd: ROOT,
          env: { ...env, OVERLAY: v.dir },
        });
        assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
        assert.match(run.stderr, /No resources found/);

        // Nothing of it is left, the Team's children included (the Butler objects go with their CRDs, checked
        // below); the others' objects stay.
        let left = "";
        await eventually(async () => {
          const all = [...rendered, ...butlerObjects().filter((o) => !o.apiVersion.startsWith("butler."))]
            .map((o) => JSON.stringify(o)).join("\n");
          const r = await kubectl(["get", "-f", "-", "--ignore-not-found", "-o", "name"], all);
          left = `${r.stdout.trim()} ${r.stderr.trim()}`.trim();
          return left === "";
        }, 120).catch((err) => {
          throw new Error(`${err.message}: left ${left}`);
        });
        assert.deepEqual((await kubectlOk(["get", "crd", "-o", "name"])).trim().split("\n").sort(), others);
        await kubectlOk(["get", "configmap/bystander", "-n", "default"]);
        await kubectlOk(["get", "clusterrole/bystander"]);
      });
    }
  } finally {
    await plane.stop();
    await Deno.remove(plane.dir, { recursive: true }).catch(() => {});
  }
});

async function eventually(check: () => Promise<boolean>, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${seconds} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
