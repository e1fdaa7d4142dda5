/**
 * kubectl butler through krew: the release's archive and manifest (deno task release plugin) pass krew's own
 * validator, which installs every platform the manifest names, and krew installs the plugin from them; the installed
 * plugin runs and reports this tree's version, and plan works offline from the archive alone.
 */
import assert from "node:assert/strict";
import { freePort, ROOT } from "../api/cluster.ts";
import { run, runOk, tool } from "./tools.ts";

const { version } = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`));
const denoDir = Deno.execPath().replace(/\/[^/]+$/, "");

Deno.test("kubectl butler from its krew manifest", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "butler-krew-" });
  const port = freePort();
  const server = Deno.serve({ hostname: "127.0.0.1", port, onListen: () => {} }, async (req) => {
    try {
      return new Response(await Deno.readFile(`${dir}/dist/${new URL(req.url).pathname.slice(1)}`));
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  // krew runs as a kubectl plugin: kubectl-krew on PATH.
  await Deno.mkdir(`${dir}/tools`);
  await Deno.symlink(tool("KREW_BIN"), `${dir}/tools/kubectl-krew`);
  const path = `${dir}/tools:${denoDir}:${Deno.env.get("PATH")}`;
  try {
    await t.step("deno task release plugin writes the archive and the manifest", async () => {
      await runOk(Deno.execPath(), [
        "task",
        "release",
        "plugin",
        `${dir}/dist`,
        `http://127.0.0.1:${port}`,
        "https://example.com/butler",
      ]);
      assert.ok(Deno.statSync(`${dir}/dist/kubectl-butler-v${version}.tar.gz`).isFile);
    });
    await t.step("krew's validator: the manifest is valid, and each of its platforms installs", async () => {
      const r = await run(tool("KREW_VALIDATE_BIN"), ["-manifest", `${dir}/dist/butler.yaml`], {
        env: { PATH: path },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /structural validation OK/);
      assert.match(r.stderr, /all 4 spec\.platforms installed fine/);
    });
    await t.step("kubectl krew install --manifest --archive, then kubectl butler version", async () => {
      const krewRoot = `${dir}/krew`;
      const env = { PATH: `${krewRoot}/bin:${path}`, KREW_ROOT: krewRoot, HOME: dir };
      await runOk("kubectl", [
        "krew",
        "install",
        `--manifest=${dir}/dist/butler.yaml`,
        `--archive=${dir}/dist/kubectl-butler-v${version}.tar.gz`,
      ], { env });
      const listed = await runOk("kubectl", ["plugin", "list"], { env });
      assert.ok(listed.includes(`${krewRoot}/bin/kubectl-butler`), listed);
      assert.equal(
        await runOk("kubectl", ["butler", "version"], { env, cwd: dir }),
        `kubectl butler ${version}\n`,
      );
      const plan = await run("kubectl", ["butler", "plan", `${ROOT}/examples/teams`], { env, cwd: dir });
      assert.match(plan.stdout, /Team platform-team/, plan.stderr);
    });
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
