/** `deno task ledger` refuses what it does not understand instead of opening it as a file. */
import assert from "node:assert/strict";

const TOOL = new URL("../tools/ledger.ts", import.meta.url).pathname;

async function run(...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-read", "--allow-env", TOOL, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("ledger tool: an unknown option or a second file is a usage error (exit 2)", async () => {
  const bogus = await run("--bogus");
  assert.equal(bogus.code, 2);
  assert.match(bogus.stderr, /^unknown option --bogus\nusage: deno task ledger/);
  const two = await run("a.yaml", "b.yaml");
  assert.equal(two.code, 2);
  assert.match(two.stderr, /^one file at most\n/);
});
