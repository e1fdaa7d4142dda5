/**
 * The documentation's Butler objects come from `examples/`: every YAML block of the README and of `docs/` that
 * holds a Butler object is equal (as data; comments and flow style may differ) to an object of some file under
 * `examples/`, so the docs show only objects the real API server tier has accepted (it applies every example, and
 * `plan` plans them).
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";

const root = new URL("..", import.meta.url).pathname;

function yamlFiles(dir: string): string[] {
  return [...Deno.readDirSync(dir)].flatMap((e) =>
    e.isDirectory ? yamlFiles(`${dir}/${e.name}`) : /\.ya?ml$/.test(e.name) ? [`${dir}/${e.name}`] : []
  );
}

const pages = [
  "README.md",
  ...[...Deno.readDirSync(`${root}docs`)].filter((e) => e.name.endsWith(".md")).map((e) => `docs/${e.name}`)
    .sort(),
];

Deno.test("every Butler object in the README and docs/ is an example file", async (t) => {
  const examples = yamlFiles(`${root}examples`).filter((f) => !f.includes("/invalid/"))
    .flatMap((f) => parseAllDocuments(Deno.readTextFileSync(f)).map((d) => ({ file: f, object: d.toJS() })));
  const blocks = pages.flatMap((page) =>
    [...Deno.readTextFileSync(`${root}${page}`).matchAll(/```yaml\n([\s\S]*?)```/g)]
      .map((m) => ({ page, block: m[1]! })).filter((b) =>
        /^apiVersion: butler\.butlerlabs\.dev\//m.test(b.block)
      )
  );
  assert.ok(blocks.length >= 5, `${blocks.length} Butler objects in the docs`);
  for (const { page, block } of blocks) {
    const object = parse(block);
    await t.step(`${page}: ${object.kind} ${object.metadata.name}`, () => {
      const same = examples.find((e) => {
        try {
          assert.deepEqual(e.object, object);
          return true;
        } catch {
          return false;
        }
      });
      assert.ok(same, `no file under examples/ holds ${page}'s ${object.kind} ${object.metadata.name}`);
    });
  }
});
