/**
 * The Helm chart with a real helm: `helm lint --strict`, `helm template` equal to the kustomize render of every
 * documented variant (each overlay in examples/kustomize/, the base, each feature alone and all at once), the
 * values schema refusing unknown keys and wrong types, and install, upgrade, rollback and uninstall on the test
 * control plane.
 */
import assert from "node:assert/strict";
import { cluster, installOperatorCrds, kubectl, kubectlOk, ROOT } from "../api/cluster.ts";
import { FEATURES, render } from "../../tools/chart/mod.ts";
import { KUBERNETES_VERSION } from "../api/tools.ts";
import { renderDiff, run, runOk, tool } from "./tools.ts";

const CHART = `${ROOT}/charts/butler`;
const { version } = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`));

/**
 * Each documented kustomize variant and the values that render it with Helm (docs/install.md). A new overlay in
 * examples/kustomize/ fails the first step until it is named here.
 */
const OVERLAY_VALUES: Record<string, string[]> = {
  "manifests": [],
  "examples/kustomize/production": [
    "networkPolicy.enabled=true",
    "reporter.enabled=true",
    "networkPolicy.apiServerCIDR=10.0.0.0/24",
    "networkPolicy.egressCIDR=10.0.0.0/24",
  ],
  "examples/kustomize/production-monitoring": [
    "monitoring.enabled=true",
    "networkPolicy.enabled=true",
    "reporter.enabled=true",
    "networkPolicy.apiServerCIDR=10.0.0.0/24",
    "networkPolicy.egressCIDR=10.0.0.0/24",
  ],
  "examples/kustomize/ipv6": ["reporter.enabled=true", "ipv6.enabled=true"],
  "examples/kustomize/large-pools": ["largePools.enabled=true"],
  "examples/kustomize/without-admission-webhooks": ["admissionWebhooks.enabled=false"],
};

function helm(args: string[], env: Record<string, string> = {}) {
  return run(tool("HELM_BIN"), args, { env: { HELM_CACHE_HOME: "/tmp/butler-helm/cache", ...env } });
}

async function template(values: string[]): Promise<string> {
  return await runOk(tool("HELM_BIN"), [
    "template",
    "butler",
    CHART,
    `--kube-version=${KUBERNETES_VERSION}`,
    ...values.flatMap((v) => ["--set", v]),
  ]);
}

Deno.test("the chart with a real helm: lint, and helm template equal to kustomize", async (t) => {
  await t.step("helm lint --strict", async () => {
    const r = await helm(["lint", "--strict", CHART]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  });
  await t.step(
    "every documented overlay: helm template with its values renders what kustomize does",
    async () => {
      const overlays = [...Deno.readDirSync(`${ROOT}/examples/kustomize`)].map((e) =>
        `examples/kustomize/${e.name}`
      );
      assert.deepEqual(
        overlays.filter((o) => !(o in OVERLAY_VALUES)),
        [],
        "every overlay has its chart values",
      );
      for (const [dir, values] of Object.entries(OVERLAY_VALUES)) {
        const kustomized = await runOk("kubectl", ["kustomize", dir]);
        const diff = renderDiff(await template(values), kustomized);
        assert.deepEqual(diff, [], `${dir} (--set ${values.join(",")})`);
      }
    },
  );
  await t.step(
    "each feature alone, and every feature at once, as kustomize renders its component",
    async () => {
      const on = (f: (typeof FEATURES)[number]) => `${f.value}=${f.on}`;
      const sets = [...FEATURES.map((f) => [f]), FEATURES.filter((f) => f.on)];
      for (const set of sets) {
        const objects = [...(await render(ROOT, set)).values()];
        const diff = renderDiff(
          await template(set.map(on)),
          objects.map((o) => JSON.stringify(o)).join("\n---\n"),
        );
        assert.deepEqual(diff, [], set.map(on).join(","));
      }
    },
  );
  await t.step("an image of one's own reaches every container", async () => {
    const out = await template(["image.repository=registry.example.com/p/butler-hooks", "image.tag=1.2.3"]);
    const images = [...out.matchAll(/image: (.*)/g)].map((m) => m[1]);
    assert.ok(images.length >= 1);
    for (const image of images) assert.equal(image, '"registry.example.com/p/butler-hooks:1.2.3"');
    const withReporter = await template(["reporter.enabled=true", "image.tag=1.2.3"]);
    assert.deepEqual([...new Set([...withReporter.matchAll(/image: (.*)/g)].map((m) => m[1]))], [
      '"butler-hooks:1.2.3"',
    ]);
  });
  await t.step("the schema refuses unknown keys and wrong types, naming them", async () => {
    const cases: [string[], RegExp][] = [
      [["--set", "bogus=1"], /additional properties 'bogus' not allowed/],
      [["--set", "reporter.replicas=3"], /additional properties 'replicas' not allowed/],
      [["--set", "reporter.enabled=yes"], /\/reporter\/enabled': got string, want boolean/],
      [["--set", "networkPolicy.apiServerCIDR=everyone"], /apiServerCIDR.*does not match pattern/s],
      [["--set", "image.repository="], /repository.*minLength|length must be >= 1/s],
    ];
    for (const [args, message] of cases) {
      const r = await helm(["template", "butler", CHART, `--kube-version=${KUBERNETES_VERSION}`, ...args]);
      assert.notEqual(r.code, 0, args.join(" "));
      assert.match(r.stderr, message, args.join(" "));
    }
  });
});

Deno.test("the chart on the test control plane: install, upgrade, rollback, uninstall", async (t) => {
  const kubeconfig = cluster().kubeconfig;
  const h = (...args: string[]) => helm([...args, `--kubeconfig=${kubeconfig}`]);
  await kubectlOk(["apply", "--server-side", "-f", "tests/api/crds/"]);
  await installOperatorCrds();
  const exists = async (what: string) =>
    (await kubectl(["get", ...what.split(" "), "-o", "name"])).code === 0;

  await t.step("install: every object, owned by the release", async () => {
    const r = await h("install", "butler", CHART, "--namespace", "default");
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /STATUS: deployed/);
    // NOTES.txt: what to do next.
    assert.match(
      r.stdout,
      new RegExp(`Butler ${version.replaceAll(".", "\\.")} is installed in namespace butler-system`),
    );
    assert.match(r.stdout, /kubectl -n butler-system rollout status deployment\/butler-hooks/);
    assert.match(r.stdout, /The reporter is off/);
    const d = JSON.parse(
      await kubectlOk(["get", "deployment", "butler-hooks", "-n", "butler-system", "-o", "json"]),
    );
    assert.equal(d.metadata.labels["app.kubernetes.io/managed-by"], "Helm");
    assert.equal(d.metadata.annotations["meta.helm.sh/release-name"], "butler");
    assert.equal(d.spec.template.spec.containers[0].image, `butler-hooks:${version}`);
    assert.ok(await exists("crd/networkpools.butler.butlerlabs.dev"));
    assert.ok(await exists("validatingwebhookconfiguration/butler-admission"));
    assert.ok(!await exists("deployment/butler-reporter -n butler-system"));
  });
  await t.step(
    "upgrade: components turned on are installed; NOTES.txt warns of the placeholder CIDR",
    async () => {
      const r = await h(
        "upgrade",
        "butler",
        CHART,
        "--namespace",
        "default",
        "--set",
        "reporter.enabled=true,networkPolicy.enabled=true",
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /REVISION: 2/);
      assert.match(r.stdout, /WARNING: networkPolicy\.apiServerCIDR is still the placeholder/);
      assert.doesNotMatch(r.stdout, /The reporter is off/);
      assert.ok(await exists("deployment/butler-reporter -n butler-system"));
      assert.ok(await exists("networkpolicy/butler-hooks-from-apiserver -n butler-system"));
    },
  );
  await t.step("rollback: revision 1 again, the component removed", async () => {
    const r = await h("rollback", "butler", "1", "--namespace", "default");
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!await exists("deployment/butler-reporter -n butler-system"));
    assert.ok(!await exists("networkpolicy/butler-hooks-from-apiserver -n butler-system"));
    const history = await h("history", "butler", "--namespace", "default", "-o", "json");
    assert.deepEqual(JSON.parse(history.stdout).map((r: { revision: number }) => r.revision), [1, 2, 3]);
  });
  await t.step(
    "uninstall: everything but the CRDs and the namespace, which hold Butler's objects",
    async () => {
      const r = await h("uninstall", "butler", "--namespace", "default");
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /These resources were kept due to the resource policy:/);
      assert.ok(await exists("crd/networkpools.butler.butlerlabs.dev"));
      assert.ok(await exists("namespace/butler-system"));
      assert.ok(!await exists("deployment/butler-hooks -n butler-system"));
      assert.ok(!await exists("validatingwebhookconfiguration/butler-admission"));
      assert.ok(!await exists("clusterrole/butler-platform-admin"));
    },
  );
  await t.step(
    "docs/install.md's Helm one-liner, as written (the chart packaged here for the OCI reference)",
    async () => {
      const install = Deno.readTextFileSync(`${ROOT}/docs/install.md`);
      const block = install.match(/<!-- test:release runs this block -->\s*```sh\n([\s\S]*?)```/)?.[1];
      assert.ok(block, "docs/install.md marks its Helm block");
      const dir = await Deno.makeTempDir({ prefix: "butler-oneliner-" });
      try {
        await runOk(tool("HELM_BIN"), ["package", CHART, "--destination", dir]);
        await Deno.mkdir(`${dir}/bin`);
        await Deno.symlink(tool("HELM_BIN"), `${dir}/bin/helm`);
        const script = block.replace('"oci://$REGISTRY/charts/butler"', `"${dir}/butler-$VERSION.tgz"`)
          .replace(/VERSION=[0-9.]+/, `VERSION=${version}`);
        assert.notEqual(script, block);
        const r = await run("bash", ["-euc", script], {
          env: {
            PATH: `${dir}/bin:${Deno.env.get("PATH")}`,
            KUBECONFIG: kubeconfig,
            HELM_CACHE_HOME: `${dir}/cache`,
          },
        });
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, /STATUS: deployed/);
        assert.ok(
          await exists("deployment/butler-hooks -n butler-system"),
          "installed over the kept CRDs and namespace",
        );
        assert.ok(await exists("deployment/butler-reporter -n butler-system"));
        const again = await h("uninstall", "butler", "--namespace", "default");
        assert.equal(again.code, 0, again.stderr);
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    },
  );
});
