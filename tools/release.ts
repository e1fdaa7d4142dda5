/**
 * `deno task release <command>`: what the release workflow (examples/ci/.github/workflows/release.yaml) runs, and
 * docs/release.md by hand.
 *
 *   prepare VERSION DATE          sets deno.json's version and gives CHANGELOG.md's Unreleased section that version
 *                                 and date (then run deno task chart)
 *   check TAG                     the tag is v + deno.json's version, and CHANGELOG.md has its dated section
 *   notes                         prints CHANGELOG.md's section of this version (the release's notes)
 *   sbom OUT                      a CycloneDX SBOM of deno.lock
 *   plugin DIR URI_BASE HOMEPAGE  the plugin's archive and its krew manifest (butler.yaml) in DIR
 *   chart-image IMAGE             sets charts/butler's default image repository (the image the release pushed)
 *
 * @module
 */
import { archiveName, localModules } from "./release/archive.ts";
import { changelogSection, releaseChangelog, releaseProblems } from "./release/changelog.ts";
import { krewManifest } from "./release/krew.ts";
import { lockSbom } from "./release/sbom.ts";
import { releaseLauncher } from "../cli/shim.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const { version } = JSON.parse(Deno.readTextFileSync(`${root}/deno.json`));
const changelog = Deno.readTextFileSync(`${root}/CHANGELOG.md`);
const [command, ...args] = Deno.args;

function usage(message: string): never {
  console.error(
    `${message}\nusage: deno task release prepare VERSION DATE | check TAG | notes | sbom OUT | plugin DIR URI_BASE HOMEPAGE | chart-image IMAGE`,
  );
  Deno.exit(2);
}

async function run(cmd: string, cmdArgs: string[], cwd = root): Promise<string> {
  const out = await new Deno.Command(cmd, { args: cmdArgs, cwd, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${cmdArgs.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/** Writes the archive into `dir` (reproducibly: sorted, owner 0, the commit's time) and returns its path. */
async function pluginArchive(dir: string): Promise<string> {
  const info = JSON.parse(await run(Deno.execPath(), ["info", "--json", "cli/main.ts"]));
  const manifests = (await run("git", ["ls-files", "manifests"])).split("\n").filter(Boolean);
  const stage = await Deno.makeTempDir({ prefix: "butler-plugin-" });
  try {
    for (const path of [...localModules(info, root), "deno.lock", "LICENSE", ...manifests]) {
      await Deno.mkdir(`${stage}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
      await Deno.copyFile(`${root}/${path}`, `${stage}/${path}`);
    }
    await Deno.writeTextFile(`${stage}/kubectl-butler`, releaseLauncher(), { mode: 0o755 });
    await Deno.chmod(`${stage}/kubectl-butler`, 0o755);
    const epoch = (await run("git", ["log", "-1", "--format=%ct"])).trim();
    const archive = `${dir}/${archiveName(version)}`;
    await run("tar", [
      "--sort=name",
      `--mtime=@${epoch}`,
      "--owner=0",
      "--group=0",
      "--numeric-owner",
      "-czf",
      archive,
      "-C",
      stage,
      ".",
    ]);
    return archive;
  } finally {
    await Deno.remove(stage, { recursive: true });
  }
}

async function sha256(path: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

if (command === "prepare") {
  const [next, date] = args;
  if (!next || !/^\d+\.\d+\.\d+$/.test(next) || !date) {
    usage("prepare needs VERSION (X.Y.Z) and DATE (YYYY-MM-DD)");
  }
  Deno.writeTextFileSync(`${root}/CHANGELOG.md`, releaseChangelog(changelog, next, date));
  const config = Deno.readTextFileSync(`${root}/deno.json`);
  Deno.writeTextFileSync(`${root}/deno.json`, config.replace(/("version": )"[^"]*"/, `$1"${next}"`));
  console.log(`deno.json ${next}, CHANGELOG.md [${next}] - ${date}: now run deno task chart`);
} else if (command === "check") {
  if (!args[0]) usage("check needs the tag");
  const problems = releaseProblems(args[0], version, changelog);
  for (const p of problems) console.error(`release ${args[0]}: ${p}`);
  if (problems.length) Deno.exit(1);
  console.log(`release ${args[0]}: version ${version}, CHANGELOG section present`);
} else if (command === "notes") {
  const section = changelogSection(changelog, version);
  if (section === undefined) usage(`CHANGELOG.md has no section for ${version}`);
  console.log(section);
} else if (command === "sbom") {
  if (!args[0]) usage("sbom needs the output file");
  const lock = JSON.parse(Deno.readTextFileSync(`${root}/deno.lock`));
  const epoch = Deno.env.get("SOURCE_DATE_EPOCH") ?? (await run("git", ["log", "-1", "--format=%ct"])).trim();
  const timestamp = new Date(Number(epoch) * 1000).toISOString().replace(/\.000Z$/, "Z");
  Deno.writeTextFileSync(
    args[0],
    JSON.stringify(lockSbom(lock, { name: "butler", version, timestamp }), null, 2) + "\n",
  );
  console.log(`${args[0]}: CycloneDX SBOM of deno.lock`);
} else if (command === "plugin") {
  const [dir, uriBase, homepage] = args;
  if (!dir || !uriBase || !homepage) usage("plugin needs DIR URI_BASE HOMEPAGE");
  await Deno.mkdir(dir, { recursive: true });
  const archive = await pluginArchive(await Deno.realPath(dir));
  const sum = await sha256(archive);
  const uri = `${uriBase.replace(/\/$/, "")}/${archiveName(version)}`;
  Deno.writeTextFileSync(`${dir}/butler.yaml`, krewManifest({ version, uri, sha256: sum, homepage }));
  console.log(`${archive} (sha256 ${sum}) and ${dir}/butler.yaml`);
} else if (command === "chart-image") {
  if (!args[0] || !/^[a-z0-9][a-z0-9./_:-]*$/.test(args[0])) usage("chart-image needs an image repository");
  const path = `${root}/charts/butler/values.yaml`;
  const values = Deno.readTextFileSync(path);
  const set = values.replace(
    /^( {2}repository: ).*$/m,
    (_m, head: string) => `${head}${JSON.stringify(args[0])}`,
  );
  if (set === values && !values.includes(`repository: ${JSON.stringify(args[0])}`)) {
    throw new Error(`${path}: no image repository`);
  }
  Deno.writeTextFileSync(path, set);
  console.log(`${path}: image.repository ${args[0]}`);
} else {
  usage(command ? `unknown command ${command}` : "no command");
}
