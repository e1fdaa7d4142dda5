/**
 * `deno task argocd:health`: writes the Argo CD health checks from their sources in `manifests/argocd/health/`.
 * Argo CD wants each script whole (an argocd-cm key, or a file of its resource_customizations layout), so the part
 * every kind shares is written once (`prelude.lua`) and included where a source's first line says
 * `--#include prelude.lua`. Generated: `manifests/argocd/resource_customizations/butler.butlerlabs.dev/<Kind>/health.lua`
 * and `manifests/argocd/argocd-cm.yaml`; tests/argocd_test.ts fails when they are not current.
 *
 * @module
 */
import { stringify } from "yaml";

const SOURCES = "manifests/argocd/health";
const LAYOUT = "manifests/argocd/resource_customizations/butler.butlerlabs.dev";
const INCLUDE = /^--#include (\S+)\n/;

const HEADER =
  `# Argo CD health checks for Butler's kinds: merge these keys into your argocd-cm (a kustomize patch, or the
# Helm chart's configs.cm values). Each value is resource_customizations/butler.butlerlabs.dev/<Kind>/health.lua;
# tests/argocd_test.ts keeps them equal, and the API tier runs every script in gopher-lua, as Argo CD does.
`;

/** Every generated file (path relative to `root` -> content), from the sources under `root`. */
export function renderHealthChecks(root: string): Record<string, string> {
  const kinds = [...Deno.readDirSync(`${root}/${SOURCES}`)].map((e) => e.name)
    .filter((n) => n !== "prelude.lua" && n.endsWith(".lua")).map((n) => n.slice(0, -4)).sort();
  const out: Record<string, string> = {};
  const data: Record<string, string> = {};
  for (const kind of kinds) {
    const source = Deno.readTextFileSync(`${root}/${SOURCES}/${kind}.lua`);
    const script = source.replace(INCLUDE, (_, file) => Deno.readTextFileSync(`${root}/${SOURCES}/${file}`));
    out[`${LAYOUT}/${kind}/health.lua`] = script;
    data[`resource.customizations.health.butler.butlerlabs.dev_${kind}`] = script;
  }
  const cm = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: "argocd-cm",
      namespace: "argocd",
      labels: { "app.kubernetes.io/name": "argocd-cm", "app.kubernetes.io/part-of": "argocd" },
    },
    data,
  };
  out["manifests/argocd/argocd-cm.yaml"] = HEADER + stringify(cm, { lineWidth: 0 });
  return out;
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  for (const [path, content] of Object.entries(renderHealthChecks(root))) {
    Deno.writeTextFileSync(`${root}/${path}`, content);
  }
}
