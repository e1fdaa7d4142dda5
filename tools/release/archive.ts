/**
 * The files of the plugin's release archive: the launcher, the license, deno.json and deno.lock, every local
 * module `cli/main.ts` loads (as `deno info` lists them), and manifests/ (which `plan` reads).
 *
 * @module
 */

/** The local modules of `deno info --json` output under `root`, as paths relative to it. */
export function localModules(info: { modules: { specifier: string }[] }, root: string): string[] {
  const prefix = `file://${root}/`;
  return info.modules.map((m) => m.specifier).filter((s) => s.startsWith(prefix)).map((s) =>
    s.slice(prefix.length)
  )
    .filter((p) => !/(_test|_bench)\.ts$|^tests\/|^lib\/testing\//.test(p)).sort();
}

/** The archive's name for `version`. */
export function archiveName(version: string): string {
  return `kubectl-butler-v${version}.tar.gz`;
}
