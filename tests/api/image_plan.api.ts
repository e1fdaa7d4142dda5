/**
 * `main.ts plan` runs in the image as the Dockerfile says: the files its COPY lines put in /app (less what
 * .dockerignore leaves out) are staged in a directory of their own, and the Dockerfile's `# plan:` command line runs
 * there with its container paths mapped onto this machine (/app, /deno-dir, the mounted folder, /tmp), under the
 * permissions it names and nothing else. It must judge a folder of manifests with nothing to download.
 */
import assert from "node:assert/strict";
import { denoDir, mapShipped } from "./cluster.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** `.dockerignore`'s patterns as regular expressions over paths (`**` any folders, `*` within one name). */
function ignored(): RegExp[] {
  return Deno.readTextFileSync(`${ROOT}.dockerignore`).split("\n").map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#")).map((pattern) => {
      const source = pattern.split("/").map((part) =>
        part === "**" ? "(?:.*/)?" : `${part.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}/`
      ).join("").replace(/\(\?:\.\*\/\)\?\//g, "(?:.*/)?");
      return new RegExp(`^${source.replace(/\/$/, "")}(?:/.*)?$`);
    });
}

function walk(path: string): string[] {
  return Deno.statSync(`${ROOT}${path}`).isDirectory
    ? [...Deno.readDirSync(`${ROOT}${path}`)].flatMap((e) => walk(`${path}/${e.name}`))
    : [path];
}

/** Copies what the Dockerfile's COPY lines put in /app into `dir`. */
function stageImage(dockerfile: string, dir: string): number {
  const skip = ignored();
  const copied = dockerfile.split("\n").filter((l) => l.startsWith("COPY ")).flatMap((l) =>
    l.slice(5).trim().split(/\s+/).slice(0, -1)
  );
  const files = copied.flatMap(walk).filter((f) => !skip.some((re) => re.test(f)));
  for (const f of files) {
    Deno.mkdirSync(`${dir}/${f}`.replace(/\/[^/]+$/, ""), { recursive: true });
    Deno.copyFileSync(`${ROOT}${f}`, `${dir}/${f}`);
  }
  return files.length;
}

Deno.test("main.ts plan runs in the image with the Dockerfile's command line", async () => {
  const dockerfile = Deno.readTextFileSync(`${ROOT}Dockerfile`);
  const line = /^# plan: docker run (.+) IMAGE (.+)$/m.exec(dockerfile);
  assert.ok(line, "the Dockerfile says how to run plan in the image");
  const mount = /-v "\$PWD\/clusters:(\/\S+):ro"/.exec(line[1]!)?.[1];
  assert.ok(mount, "a folder mounted read-only");
  const app = await Deno.makeTempDir({ prefix: "butler-image-" });
  const tmp = await Deno.makeTempDir({ prefix: "butler-image-tmp-" });
  try {
    assert.ok(stageImage(dockerfile, app) > 50);
    // /tmp first: the staged directories are below this machine's /tmp.
    const map: [string, string][] = [
      ["/tmp", tmp],
      ["/app", app],
      ["/deno-dir", await denoDir()],
      [mount, `${ROOT}examples/teams`],
    ];
    const args = line[2]!.split(" ").map((a) => mapShipped(a, map));
    assert.equal(args[0], "run");
    const out = await new Deno.Command(Deno.execPath(), {
      args,
      cwd: app,
      clearEnv: true,
      env: { TMPDIR: tmp, DENO_DIR: await denoDir(), NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, text);
    assert.match(
      text,
      /Result: everything is admitted, the controllers converge and every object is Ready\./,
    );
    assert.match(text, /5 object\(s\): 5 to create/);
  } finally {
    await Deno.remove(app, { recursive: true });
    await Deno.remove(tmp, { recursive: true });
  }
});
