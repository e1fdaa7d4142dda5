/**
 * kustomize renders of the base with a set of features, each once: a temporary kustomization that names the base
 * (or a feature's overlay) and the components, by paths relative to it, run through `kubectl kustomize`.
 *
 * @module
 */
import { parseAllDocuments } from "yaml";
import type { Feature } from "./features.ts";

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

/** `Kind/namespace/name`. */
export function objectId(o: Obj): string {
  return `${o.kind}/${o.metadata?.namespace ?? ""}/${o.metadata?.name}`;
}

function relative(from: string, to: string): string {
  const a = from.split("/").filter(Boolean);
  const b = to.split("/").filter(Boolean);
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
}

/** Objects by id, from YAML text. */
export function objectsOf(text: string): Map<string, Obj> {
  const objects = parseAllDocuments(text).map((d) => d.toJS() as Obj).filter((o) => o);
  return new Map(objects.map((o) => [objectId(o), o]));
}

/** Renders `features` (in their table order) over the base of the repository at `root`. */
export async function render(root: string, features: readonly Feature[]): Promise<Map<string, Obj>> {
  const overlays = features.filter((f) => f.overlay);
  if (overlays.length > 1) throw new Error(`two overlays in one render: ${overlays.map((f) => f.value)}`);
  const dir = await Deno.makeTempDir({ prefix: "butler-chart-" });
  try {
    const rel = relative(dir, root);
    const kustomization = {
      apiVersion: "kustomize.config.k8s.io/v1beta1",
      kind: "Kustomization",
      resources: [`${rel}/${overlays[0]?.overlay ?? "manifests"}`],
      components: features.filter((f) => f.component).map((f) =>
        `${rel}/manifests/components/${f.component}`
      ),
    };
    await Deno.writeTextFile(`${dir}/kustomization.yaml`, JSON.stringify(kustomization));
    const out = await new Deno.Command("kubectl", {
      args: ["kustomize", dir],
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    if (!out.success) throw new Error(`kubectl kustomize: ${new TextDecoder().decode(out.stderr)}`);
    return objectsOf(new TextDecoder().decode(out.stdout));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Renders each feature set once, a few at a time. */
export async function renderAll(
  root: string,
  sets: readonly (readonly Feature[])[],
): Promise<Map<string, Map<string, Obj>>> {
  const key = (s: readonly Feature[]) => s.map((f) => f.value).join("+");
  const unique = [...new Map(sets.map((s) => [key(s), s])).values()];
  const out = new Map<string, Map<string, Obj>>();
  for (let i = 0; i < unique.length; i += 4) {
    const batch = unique.slice(i, i + 4);
    const rendered = await Promise.all(batch.map((s) => render(root, s)));
    batch.forEach((s, j) => out.set(key(s), rendered[j]!));
  }
  return out;
}

/** The key {@linkcode renderAll} files a feature set under. */
export function setKey(features: readonly Feature[]): string {
  return features.map((f) => f.value).join("+");
}
