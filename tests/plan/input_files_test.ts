/**
 * Class: what `plan` opens. A pull request controls the folder `plan` reads, links and special files included:
 * only regular files inside the folder given are read (through links too), each bounded; a link out of it, into a
 * hidden folder, to a device, a named pipe, a folder or nowhere, and a file over the bound, are each reported by
 * name, never opened, and the rest is read.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_FILE_BYTES, readInputFiles } from "../../lib/plan/mod.ts";
import { planCli, ROOT } from "./helpers.ts";

const CANARY = "canary-outside-the-root";
const OBJECT = (name: string, value = "v") =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: default}\ndata: {k: ${value}}\n`;

/** The kinds of entry a repository can hold, and whether plan may read it. */
const ENTRIES = {
  regular: true,
  linkInside: true,
  linkOutside: false,
  linkHidden: false,
  linkDevZero: false,
  linkProcEnviron: false,
  linkFolder: false,
  linkBroken: false,
  fifo: false,
  oversized: false,
} as const;
type Entry = keyof typeof ENTRIES;

/** `ln -s`: the unit tests' write permission is scoped, which `Deno.symlinkSync` does not take. */
function link(target: string, path: string): void {
  const out = new Deno.Command("ln", { args: ["-s", target, path] }).outputSync();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
}

/** Builds `entries` in a new root (and a file outside it holding the canary); returns the root. */
function build(entries: readonly Entry[]): string {
  // Under tests/fixtures: the only place the unit tests may write (removed after each case).
  const base = Deno.makeTempDirSync({ dir: `${ROOT}tests/fixtures`, prefix: ".plan-files-" });
  Deno.mkdirSync(`${base}/outside`);
  Deno.writeTextFileSync(`${base}/outside/cred.yaml`, OBJECT("cred", CANARY));
  const root = `${base}/root`;
  Deno.mkdirSync(`${root}/.git`, { recursive: true });
  Deno.writeTextFileSync(`${root}/.git/config.yaml`, OBJECT("git", CANARY));
  Deno.writeTextFileSync(`${root}/target.yaml`, OBJECT("target"));
  entries.forEach((e, i) => {
    const path = `${root}/e${i}-${e}.yaml`;
    const make: Record<Entry, () => void> = {
      regular: () => Deno.writeTextFileSync(path, OBJECT(`c${i}`)),
      linkInside: () => link(`${root}/target.yaml`, path),
      linkOutside: () => link(`${base}/outside/cred.yaml`, path),
      linkHidden: () => link(`${root}/.git/config.yaml`, path),
      linkDevZero: () => link("/dev/zero", path),
      linkProcEnviron: () => link("/proc/self/environ", path),
      linkFolder: () => link(`${base}/outside`, path),
      linkBroken: () => link(`${base}/nowhere`, path),
      fifo: () => new Deno.Command("mkfifo", { args: [path] }).outputSync(),
      // Sparse: the size is what counts, no time is spent writing it.
      oversized: () =>
        Deno.truncateSync((Deno.writeTextFileSync(path, OBJECT(`big${i}`)), path), MAX_FILE_BYTES + 1),
    };
    make[e]();
  });
  return base;
}

Deno.test("plan reads only regular files inside the folder given, and reports every other entry", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(fc.constantFrom(...(Object.keys(ENTRIES) as Entry[])), { minLength: 1, maxLength: 8 }),
      async (entries) => {
        const base = build(entries);
        try {
          const files = await readInputFiles([`${base}/root`]);
          for (const f of files) assert.equal(f.text?.includes(CANARY) ?? false, false, f.path);
          entries.forEach((e, i) => {
            const file = files.find((f) => f.path.endsWith(`/e${i}-${e}.yaml`));
            assert.ok(file, `e${i}-${e} is reported`);
            assert.equal(file.text !== undefined, ENTRIES[e], `${e}: ${file.problem}`);
            if (!ENTRIES[e]) assert.match(file.problem ?? "", /^(not read|cannot be read)/);
          });
          // A link given as the argument itself is held to the folder it is in.
          const outside = await readInputFiles([`${base}/root/target.yaml`]);
          assert.ok(outside[0]?.text);
        } finally {
          Deno.removeSync(base, { recursive: true });
        }
      },
    ),
    { numRuns: 15, seed: 57 },
  );
});

Deno.test("main.ts plan: every entry that is no regular file inside the folder is reported, the rest planned", async () => {
  const entries = Object.keys(ENTRIES) as Entry[];
  const base = build(entries);
  try {
    const run = await planCli(["--now", "2026-11-24T00:00:00Z", `${base}/root`]);
    assert.equal(run.code, 2, run.stderr);
    assert.equal(run.stdout.includes(CANARY), false);
    assert.equal(run.stderr, "");
    entries.forEach((e, i) => {
      const line = run.stdout.split("\n").findIndex((l) => l.includes(`e${i}-${e}.yaml`));
      assert.ok(line >= 0, `${e} is in the plan:\n${run.stdout}`);
      assert.equal(run.stdout.split("\n")[line]!.trimStart().startsWith("x "), !ENTRIES[e], e);
    });
  } finally {
    Deno.removeSync(base, { recursive: true });
  }
});
