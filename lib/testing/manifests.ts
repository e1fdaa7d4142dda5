import { parseAllDocuments } from "yaml";

/** A rendered manifest object (loosely typed: tests look into it). */
// deno-lint-ignore no-explicit-any
export type Manifest = Record<string, any> & {
  apiVersion: string;
  kind: string;
  // deno-lint-ignore no-explicit-any
  metadata: { name: string; namespace?: string; [key: string]: any };
};

/**
 * Renders a kustomization the way `kubectl kustomize` does for what this project uses: the `resources` list,
 * followed recursively into directories that hold their own `kustomization.yaml`. Fails loudly on anything it
 * does not understand, so a feature the project starts using cannot be silently ignored by tests.
 */
export function loadKustomization(dir: string): Manifest[] {
  const text = Deno.readTextFileSync(`${dir}/kustomization.yaml`);
  const docs = parseAllDocuments(text);
  const k = docs[0]?.toJS() as { resources?: string[]; [key: string]: unknown };
  // A Component that only adds resources reads like a kustomization.
  const supported = new Set(["apiVersion", "kind", "resources", "labels", "images"]);
  for (const key of Object.keys(k)) {
    if (!supported.has(key)) throw new Error(`${dir}/kustomization.yaml: unsupported field ${key}`);
  }
  return (k.resources ?? []).flatMap((entry) => {
    const path = `${dir}/${entry}`;
    if (Deno.statSync(path).isDirectory) return loadKustomization(path);
    return parseAllDocuments(Deno.readTextFileSync(path)).map((d) => {
      if (d.errors.length) throw new Error(`${path}: ${d.errors[0]!.message}`);
      return d.toJS() as Manifest;
    }).filter((m) => m !== null);
  });
}

/** Runs `kubectl kustomize` on a directory, or returns `undefined` when kubectl is not installed. */
export function kubectlKustomize(
  dir: string,
): { ok: boolean; objects: Manifest[]; stderr: string } | undefined {
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command("kubectl", { args: ["kustomize", dir], stdout: "piped", stderr: "piped" })
      .outputSync();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return undefined;
    throw err;
  }
  const stderr = new TextDecoder().decode(out.stderr);
  if (!out.success) return { ok: false, objects: [], stderr };
  const objects = parseAllDocuments(new TextDecoder().decode(out.stdout)).map((d) => d.toJS() as Manifest);
  return { ok: true, objects, stderr };
}

/** `Kind/namespace/name` of a manifest, for set comparisons. */
export function manifestId(m: Manifest): string {
  return `${m.kind}/${m.metadata.namespace ?? ""}/${m.metadata.name}`;
}
