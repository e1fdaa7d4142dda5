import assert from "node:assert/strict";
import { PLUGIN_NAMES, releaseLauncher, shimScript } from "./shim.ts";

const ROOT = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const text = (b: Uint8Array) => new TextDecoder().decode(b);

Deno.test("the plugin's launcher and its install", async (t) => {
  await t.step(
    "it runs cli/main.ts of the clone with the plugin's permissions, writing only under . and TMPDIR",
    () => {
      const script = shimScript("/src/it's here", "/usr/bin/deno");
      assert.match(script, /^#!\/bin\/sh\n/);
      assert.ok(script.includes(' --allow-write=.,"${TMPDIR:-/tmp}" '), script);
      assert.match(
        script,
        /--allow-read --allow-env --allow-net --allow-run --allow-write=\.,"\$\{TMPDIR:-\/tmp\}" '\/src\/it'\\''s here\/cli\/main\.ts' "\$@"/,
      );
      assert.doesNotMatch(script, /--allow-write[^=]|--allow-all|-A /);
    },
  );
  await t.step("without Deno it says what to do and exits 127", async () => {
    const child = new Deno.Command("/bin/sh", {
      args: ["-s", "--", "--help"],
      clearEnv: true,
      env: { PATH: "/nonexistent" },
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(shimScript(ROOT, "/nonexistent/deno")));
    await writer.close();
    const out = await child.output();
    assert.equal(out.code, 127);
    assert.match(
      text(out.stderr),
      /Deno is not installed: run 'npx -y deno@2\.9\.6 task install-plugin' in /,
    );
  });
  await t.step(
    "install-plugin writes both names; kubectl-butler answers; uninstall-plugin removes them",
    async () => {
      const dir = `/tmp/butler-plugin-test-${crypto.randomUUID()}`;
      const installer = (...extra: string[]) =>
        new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--allow-read",
            `--allow-write=${dir}`,
            "--allow-env",
            `${ROOT}/tools/install_plugin.ts`,
            "--dir",
            dir,
            ...extra,
          ],
          stdout: "piped",
          stderr: "piped",
        }).output();
      try {
        const installed = await installer();
        assert.ok(installed.success, text(installed.stderr));
        for (const name of PLUGIN_NAMES) {
          assert.match(
            text(installed.stdout),
            new RegExp(`installed ${dir}/${name}`),
          );
        }
        const help = await new Deno.Command(`${dir}/kubectl-butler`, {
          args: ["env", "migrate", "--help"],
          stdout: "piped",
        })
          .output();
        assert.equal(help.code, 0);
        assert.match(text(help.stdout), /Move TenantClusters to another environment/);
        const usage = await new Deno.Command(`${dir}/butleradm`, {
          args: ["env", "migrate"],
          stderr: "piped",
        }).output();
        assert.equal(usage.code, 2);
        assert.match(text(usage.stderr), /--to ENV is required/);
        const plan = await new Deno.Command(`${dir}/kubectl-butler`, {
          args: ["plan", "--help"],
          stdout: "piped",
        })
          .output();
        assert.equal(plan.code, 0);
        assert.match(text(plan.stdout), /^usage: main\.ts plan \[options\]/);
        // plan hands kubectl-validate its files in the temporary directory: the launcher lets it write there.
        const planned = await new Deno.Command(`${dir}/kubectl-butler`, {
          args: ["plan", `${ROOT}/examples/teams/payments.yaml`, "--now", "2026-11-24T00:00:00Z"],
          stdout: "piped",
          stderr: "piped",
        }).output();
        assert.doesNotMatch(text(planned.stderr), /NotCapable|Requires \w+ access/);
        assert.match(text(planned.stdout), /Team payments/);
        const removed = await installer("--uninstall");
        assert.ok(removed.success);
        for (const name of PLUGIN_NAMES) {
          assert.throws(() => Deno.statSync(`${dir}/${name}`), Deno.errors.NotFound);
        }
      } finally {
        await new Deno.Command("rm", { args: ["-rf", dir] }).output();
      }
    },
  );
});

Deno.test("the release archive's launcher runs cli/main.ts beside it, through a symlink as krew installs it", async () => {
  // The files are laid out by a shell (this suite writes nowhere): a store with the launcher and a cli/main.ts that
  // prints its arguments, and bin/kubectl-butler linking to it as krew's does.
  const script = `set -e
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/store/cli" "$d/bin"
echo '{}' > "$d/store/deno.json"
echo 'console.log(["ran", ...Deno.args].join(" "));' > "$d/store/cli/main.ts"
cat > "$d/store/kubectl-butler" <<'LAUNCHER'
${releaseLauncher()}LAUNCHER
chmod 755 "$d/store/kubectl-butler"
ln -s ../store/kubectl-butler "$d/bin/kubectl-butler"
"$d/bin/kubectl-butler" version "a b"
`;
  const child = new Deno.Command("/bin/sh", {
    args: ["-s"],
    env: { PATH: `${Deno.execPath().replace(/\/[^/]+$/, "")}:/usr/bin:/bin` },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(script));
  await writer.close();
  const out = await child.output();
  assert.equal(text(out.stderr), "");
  assert.equal(text(out.stdout), "ran version a b\n");
});
