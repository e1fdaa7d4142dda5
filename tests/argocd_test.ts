/**
 * The Argo CD health checks ship in two forms that must say the same: one script per kind in Argo CD's
 * `resource_customizations` layout (with its tests), and the argocd-cm keys users merge. Both are generated from
 * `manifests/argocd/health/` (`deno task argocd:health`). Every kind of ours has one.
 * (The scripts themselves run in gopher-lua in the API tier: tests/api/argocd_health.api.ts.)
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { loadKustomization } from "../lib/testing/mod.ts";
import { renderHealthChecks } from "../tools/argocd_health.ts";

const ROOT = new URL("..", import.meta.url).pathname;
const DIR = `${ROOT}manifests/argocd/resource_customizations/butler.butlerlabs.dev`;

Deno.test("Argo CD health checks: one per kind, the same script in both forms, every test input present", () => {
  const crdKinds = loadKustomization(`${ROOT}manifests`)
    .filter((m) => m.kind === "CustomResourceDefinition" && m.spec?.group === "butler.butlerlabs.dev")
    .map((m) => m.spec.names.kind as string)
    .sort();
  const kinds = [...Deno.readDirSync(DIR)].filter((e) => e.isDirectory).map((e) => e.name).sort();
  assert.deepEqual(kinds, crdKinds);
  const cm = parse(Deno.readTextFileSync(`${ROOT}manifests/argocd/argocd-cm.yaml`)) as {
    data: Record<string, string>;
  };
  assert.deepEqual(
    Object.keys(cm.data).sort(),
    kinds.map((k) => `resource.customizations.health.butler.butlerlabs.dev_${k}`),
  );
  for (const kind of kinds) {
    const script = Deno.readTextFileSync(`${DIR}/${kind}/health.lua`);
    assert.equal(cm.data[`resource.customizations.health.butler.butlerlabs.dev_${kind}`], script, kind);
    // Argo CD runs custom scripts without the string library.
    assert.doesNotMatch(script, /\bstring\.|:\s*(format|sub|find|gsub|match|len|lower|upper)\(/, kind);
    const { tests } = parse(Deno.readTextFileSync(`${DIR}/${kind}/health_test.yaml`)) as {
      tests: { healthStatus: { status: string }; inputPath: string }[];
    };
    assert.ok(tests.length >= 2, kind);
    for (const c of tests) {
      const obj = parse(Deno.readTextFileSync(`${DIR}/${kind}/${c.inputPath}`)) as { kind: string };
      assert.equal(obj.kind, kind, c.inputPath);
    }
  }
});

Deno.test("the Argo CD health checks are generated from manifests/argocd/health (deno task argocd:health)", () => {
  const root = ROOT.replace(/\/$/, "");
  const generated = renderHealthChecks(root);
  assert.ok(Object.keys(generated).length >= 7);
  for (const [path, content] of Object.entries(generated)) {
    assert.equal(Deno.readTextFileSync(`${root}/${path}`), content, `${path} is not current`);
  }
});
