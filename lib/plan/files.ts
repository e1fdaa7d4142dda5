import { parseAllDocuments } from "yaml";
import type { Obj } from "./store.ts";

/**
 * The manifest files of a path: the file itself, or every `.yaml`, `.yml` and `.json` file below a directory
 * (sorted, recursively; `kustomization.yaml` and hidden files and folders such as `.github/` left out), or `-`
 * for standard input.
 */
export function manifestFiles(path: string): string[] {
  if (path === "-") return ["-"];
  if (!Deno.statSync(path).isDirectory) return [path];
  return [...Deno.readDirSync(path)].sort((a, b) => (a.name < b.name ? -1 : 1)).flatMap((e) => {
    if (e.name.startsWith(".")) return [];
    const child = `${path.replace(/\/$/, "")}/${e.name}`;
    if (e.isDirectory) return manifestFiles(child);
    return /\.(ya?ml|json)$/.test(e.name) && e.name !== "kustomization.yaml" ? [child] : [];
  });
}

/**
 * The parts of `manifests/` a plan runs: namespaces, CRDs, controllers, the admission policies and the admission
 * webhooks.
 */
export const INSTALL_PATHS: readonly string[] = [
  "manifests/namespace.yaml",
  "manifests/crds",
  "manifests/admission",
  "manifests/controllers",
  "manifests/admission-webhooks/webhooks.yaml",
];

/**
 * Reads the install a plan runs from the project directory `root` (ending in `/`).
 *
 * @example
 * ```ts
 * const install = readInstall(new URL("../../", import.meta.url).pathname);
 * ```
 */
export function readInstall(root: string): Obj[] {
  return INSTALL_PATHS.flatMap((p) => manifestFiles(`${root}${p}`)).flatMap((file) =>
    parseAllDocuments(Deno.readTextFileSync(file)).map((d) => d.toJS() as Obj).filter(Boolean)
  );
}
