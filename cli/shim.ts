/**
 * The launcher a plugin install writes: a small shell script, named as kubectl finds plugins (`kubectl-butler`)
 * and `butleradm`, that runs this clone's `cli/main.ts` with the plugin's permissions. Pure: the text only.
 *
 * @module
 */

/** The names the plugin is installed under: kubectl's plugin name, and the one admission's messages use. */
export const PLUGIN_NAMES = ["kubectl-butler", "butleradm"] as const;

/**
 * What the plugin may do: read kubeconfigs and the files they name, read the environment (KUBECONFIG, HOME),
 * reach API servers, run the credential plugins kubeconfigs name (and kubectl-validate for `plan`), and write only
 * under the directory it is run from (`pool show --svg FILE`) and the temporary directory `tmp` (`plan` hands
 * kubectl-validate its files there).
 *
 * @example
 * ```ts
 * pluginPermissions("/tmp"); // [..., "--allow-write=.,/tmp"]
 * ```
 */
export function pluginPermissions(tmp: string): string[] {
  return ["--allow-read", "--allow-env", "--allow-net", "--allow-run", `--allow-write=.,${tmp}`];
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The launcher script for a clone at `root`, run with the Deno at `deno` (or the first `deno` on PATH when that
 * one is gone). Without either it says how to get one, and exits 127 as a shell does for a missing command.
 *
 * @example
 * ```ts
 * shimScript("/src/butler", "/usr/local/bin/deno"); // "#!/bin/sh\n..."
 * ```
 */
export function shimScript(root: string, deno: string): string {
  return `#!/bin/sh
# Butler's kubectl plugin, from ${root} (npx -y deno@2.9.6 task install-plugin; uninstall-plugin removes it).
DENO=${quote(deno)}
if [ ! -x "$DENO" ]; then
  DENO="$(command -v deno)" || {
    echo "\${0##*/}: Deno is not installed: run 'npx -y deno@2.9.6 task install-plugin' in ${root} again" >&2
    exit 127
  }
fi
exec "$DENO" run --quiet --no-prompt --frozen --config ${quote(`${root}/deno.json`)} ${
    pluginPermissions('"\${TMPDIR:-/tmp}"').join(" ")
  } ${quote(`${root}/cli/main.ts`)} "$@"
`;
}

/**
 * The launcher a release archive carries (krew installs it as `kubectl-butler`): it finds the directory it was
 * unpacked in through krew's symlink, and runs that directory's `cli/main.ts` with the plugin's permissions under
 * the Deno on PATH, or under Deno 2.9.6 through npx when there is none.
 *
 * @example
 * ```ts
 * Deno.writeTextFileSync("kubectl-butler", releaseLauncher());
 * ```
 */
export function releaseLauncher(): string {
  return `#!/bin/sh
# Butler's kubectl plugin (a release archive, as krew installs it): runs cli/main.ts beside this script with Deno.
self=$0
while [ -L "$self" ]; do
  link=$(readlink "$self")
  case $link in /*) self=$link ;; *) self=$(dirname "$self")/$link ;; esac
done
root=$(cd "$(dirname "$self")" && pwd) || exit 1
if command -v deno >/dev/null 2>&1; then
  DENO=deno
elif command -v npx >/dev/null 2>&1; then
  DENO="npx -y deno@2.9.6"
else
  echo "\${0##*/}: needs Deno 2.9.6 (deno on PATH) or Node.js (npx on PATH)" >&2
  exit 127
fi
exec $DENO run --quiet --no-prompt --frozen --config "$root/deno.json" ${
    pluginPermissions('"\${TMPDIR:-/tmp}"').join(" ")
  } "$root/cli/main.ts" "$@"
`;
}
