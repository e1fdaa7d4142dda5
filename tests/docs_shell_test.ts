/**
 * Every shell block of the README and docs/ runs in the shell it names: each `sh` block parses with `sh -n` (a
 * POSIX shell, dash here: no bash arrays), each `bash` block with `bash -n`; the blocks marked `<!-- runs
 * offline ... -->` need no cluster and are run as written, with a HOME of their own. And the README's way to stop
 * `task start` matches the command line `task start` runs.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;
const FILES = [
  "README.md",
  ...[...Deno.readDirSync(`${root}docs`)].filter((e) => e.name.endsWith(".md")).map((e) => `docs/${e.name}`)
    .sort(),
];

interface Block {
  readonly where: string;
  readonly shell: "sh" | "bash";
  readonly script: string;
  readonly offline: boolean;
}

function blocks(): Block[] {
  return FILES.flatMap((file) => {
    const text = Deno.readTextFileSync(`${root}${file}`);
    return [...text.matchAll(/(<!-- runs offline[^>]*-->\n)?^```(sh|bash|shell)\n([\s\S]*?)^```$/gm)].map((
      m,
    ) => ({
      where: `${file}:${text.slice(0, m.index).split("\n").length}`,
      shell: m[2] === "bash" ? "bash" : "sh",
      script: m[3]!,
      offline: m[1] !== undefined,
    }));
  });
}

async function shell(name: string, args: string[], stdin: string, cwd = root) {
  const child = new Deno.Command(name, { args, cwd, stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin));
  await writer.close();
  const out = await child.output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
}

Deno.test("every shell block of the docs parses in the shell it names", async (t) => {
  const all = blocks();
  assert.ok(all.length >= 14, `${all.length} shell blocks`);
  for (const b of all) {
    await t.step(`${b.where} (${b.shell})`, async () => {
      const r = await shell(b.shell, ["-n"], b.script);
      assert.equal(r.code, 0, r.stderr);
    });
  }
});

Deno.test("the offline shell blocks run as written", async (t) => {
  const offline = blocks().filter((b) => b.offline);
  assert.ok(offline.length >= 1);
  for (const b of offline) {
    await t.step(b.where, async () => {
      // A HOME of its own, and its ~/.local/bin on PATH, as a user's shell would have it.
      const wrapped =
        `set -e\nHOME=$(mktemp -d)\nexport HOME PATH="$HOME/.local/bin:$PATH"\ntrap 'rm -rf "$HOME"' EXIT\n${b.script}`;
      const r = await shell(b.shell, ["-s"], wrapped);
      assert.equal(r.code, 0, `${r.stdout}\n${r.stderr}`);
    });
  }
});

Deno.test("the README's way to stop task start matches what task start runs", () => {
  const readme = Deno.readTextFileSync(`${root}README.md`);
  const pattern = /pkill -f '([^']+)'/.exec(readme)?.[1];
  assert.ok(pattern, "the README says how to stop the service");
  const tasks = JSON.parse(Deno.readTextFileSync(`${root}deno.json`)).tasks as Record<string, string>;
  // What ps shows for it: the deno binary's path, then the task's words.
  const commandLine = `/root/.npm/_npx/0/node_modules/deno/${tasks.start}`;
  assert.match(commandLine, new RegExp(pattern));
  assert.doesNotMatch(`/x/deno ${tasks.plan}`, new RegExp(pattern), "plan is not stopped with it");
});
