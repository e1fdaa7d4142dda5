/**
 * `deno task test:upgrade`: an upgrade with live tenants and back (tests/upgrade/upgrade.upgrade.ts), from the
 * previous release to this tree. The previous release is the newest `v*` tag below deno.json's version
 * (BUTLER_UPGRADE_FROM=vX.Y.Z, or any git commit, to choose), its tree taken with `git archive`. Needs METACONTROLLER_BIN, as
 * `test:e2e` does, and HELM_BIN (helm, built from its Go module outside this project).
 *
 * @module
 */
import { ROOT } from "../api/cluster.ts";
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION } from "../api/tools.ts";
import { endTier, hookServiceAccount, runTierTests, startMetacontroller } from "../e2e/stack.ts";

const metacontroller = Deno.env.get("METACONTROLLER_BIN");
const helm = Deno.env.get("HELM_BIN");
if (!metacontroller || !helm) {
  console.error(
    "deno task test:upgrade needs METACONTROLLER_BIN (a Metacontroller >= 4.16 binary, as test:e2e) and HELM_BIN\n" +
      "(helm, from helm.sh/helm/v3/cmd/helm), both built outside this project.",
  );
  Deno.exit(2);
}

async function git(args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** `1.2.3` as comparable numbers. */
const parts = (v: string) => v.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
const below = (a: string, b: string) => {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! < y[i]!;
  return false;
};

const { version } = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`));
const tags = (await git(["tag", "--list", "v*"])).split("\n").filter((t) => /^v\d+\.\d+\.\d+$/.test(t));
const from = Deno.env.get("BUTLER_UPGRADE_FROM") ??
  tags.filter((t) => below(t, version)).sort((a, b) => below(a, b) ? 1 : -1)[0];
if (!from) {
  console.error(`no release tag below ${version}: tag the previous release (docs/release.md)`);
  Deno.exit(2);
}
const old = await Deno.makeTempDir({ prefix: `butler-${from}-` });
const archive = await new Deno.Command("git", { args: ["archive", from], cwd: ROOT, stdout: "piped" })
  .output();
if (!archive.success) throw new Error(`git archive ${from} failed`);
const untar = new Deno.Command("tar", { args: ["-x", "-C", old], stdin: "piped" }).spawn();
const writer = untar.stdin.getWriter();
await writer.write(archive.stdout);
await writer.close();
if (!(await untar.status).success) throw new Error("tar -x failed");
// The release's dependencies, from its own frozen lockfile.
const cached = await new Deno.Command(Deno.execPath(), {
  args: ["cache", "--frozen", "main.ts", "worker.ts"],
  cwd: old,
}).output();
if (!cached.success) throw new Error(`deno cache of ${from} failed`);

const plane = await startControlPlane(await controlPlaneBinary(), { controllers: true });
console.log(
  `upgrade tier: ${from} (${old}) -> ${version}; Kubernetes ${KUBERNETES_VERSION}, Metacontroller ${metacontroller}, helm ${helm}`,
);
Deno.env.set("BUTLER_TEST_CLUSTER", plane.dir);
await hookServiceAccount(plane);
const mc = startMetacontroller(metacontroller, plane.dir, `${plane.dir}/metacontroller.log`);
const status = await runTierTests({ plane, hookPort: 0, webhookPort: 0 }, [
  "tests/upgrade/upgrade.upgrade.ts",
], {
  BUTLER_UPGRADE_FROM: from,
  BUTLER_UPGRADE_FROM_DIR: old,
  HELM_BIN: helm,
});
if (status.success) await Deno.remove(old, { recursive: true });
await endTier(plane, status, { Metacontroller: mc }, "upgrade/hooks-*.log, metacontroller.log");
