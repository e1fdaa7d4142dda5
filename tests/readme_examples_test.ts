/**
 * The README's Butler objects come from `examples/`: every YAML block of the README that holds a Butler object is
 * equal (as data; comments and flow style may differ) to an object of some file under `examples/`, so the
 * README shows only objects the real API server tier has accepted.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";

const root = new URL("..", import.meta.url).pathname;

function yamlFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory ? yamlFiles(`${dir}/${e.name}`) : /\.ya?ml$/.test(e.name) ? [`${dir}/${e.name}`] : []
  );
}

Deno.test("every Butler object in the README is an example file", async (t) => {
  const examples = yamlFiles(`${root}examples`).filter((f) => !f.includes("/invalid/"))
    .flatMap((f) => parseAllDocuments(Deno.readTextFileSync(f)).map((d) => ({ file: f, object: d.toJS() })));
  const blocks = [...Deno.readTextFileSync(`${root}README.md`).matchAll(/```yaml\n([\s\S]*?)```/g)]
    .map((m) => m[1]!).filter((b) => /^apiVersion: butler\.butlerlabs\.dev\//m.test(b));
  assert.ok(blocks.length >= 5, `${blocks.length} Butler objects in the README`);
  for (const block of blocks) {
    const object = parse(block);
    await t.step(`${object.kind} ${object.metadata.name}`, () => {
      const same = examples.find((e) => {
        try {
          assert.deepEqual(e.object, object);
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(same, `no file under examples/ holds the README's ${object.kind} ${object.metadata.name}`);
    });
  }
});
