/**
 * `deno task install-plugin [--dir DIR]`: installs `kubectl-butler` and `butleradm` (the same program) into DIR,
 * default `~/.local/bin`, as launchers of this clone's `cli/main.ts`; `deno task uninstall-plugin [--dir DIR]`
 * removes them. kubectl finds the plugin on PATH (`kubectl plugin list`).
 *
 * @module
 */
import { PLUGIN_NAMES, shimScript } from "../cli/shim.ts";

const args = [...Deno.args];
const uninstall = args.includes("--uninstall");
const at = args.indexOf("--dir");
const dir = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith("--dir="))?.slice(6) ??
  (Deno.env.get("HOME") ? `${Deno.env.get("HOME")}/.local/bin` : undefined);
if (!dir) {
  console.error("no directory: pass --dir DIR (HOME is not set)");
  Deno.exit(2);
}
const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
for (const name of PLUGIN_NAMES) {
  const path = `${dir}/${name}`;
  if (uninstall) {
    try {
      Deno.removeSync(path);
      console.log(`removed ${path}`);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
    }
    continue;
  }
  Deno.mkdirSync(dir, { recursive: true });
  Deno.writeTextFileSync(path, shimScript(root, Deno.execPath()), { mode: 0o755 });
  Deno.chmodSync(path, 0o755);
  console.log(`installed ${path}`);
}
if (!uninstall && !(Deno.env.get("PATH") ?? "").split(":").includes(dir)) {
  console.log(`${dir} is not on PATH: add it, then run "kubectl butler --help"`);
}
