/**
 * The design lives in the repository: no file cites a design document outside it, and every pointer into
 * docs/design.md (`design.md#<anchor>`, from code, manifests, examples and docs) names one of its headings.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;
const SKIP = new Set(["node_modules", ".git"]);

function files(dir: string): string[] {
  return [...Deno.readDirSync(`${root}${dir}`)].flatMap((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (SKIP.has(e.name)) return [];
    if (e.isDirectory) return files(path);
    return /\.(ts|md|ya?ml|json)$/.test(e.name) && !path.startsWith("tests/fixtures/") ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading.toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-");
}

Deno.test("the design lives in docs/design.md, and every pointer into it resolves", () => {
  const anchors = new Set(
    [...Deno.readTextFileSync(`${root}docs/design.md`).matchAll(/^#{2,3} (.+)$/gm)].map((m) => slug(m[1]!)),
  );
  const all = files("").filter((f) => f !== "tests/docs_design_test.ts");
  const outside = all.filter((f) => /DESIGN(\.md)? §|DESIGN\.md/.test(Deno.readTextFileSync(`${root}${f}`)));
  assert.deepEqual(outside, []);
  let pointers = 0;
  for (const f of all) {
    for (const m of Deno.readTextFileSync(`${root}${f}`).matchAll(/design\.md#([a-z0-9-]+)/g)) {
      pointers++;
      assert.ok(anchors.has(m[1]!), `${f}: design.md#${m[1]} is not a heading of docs/design.md`);
    }
  }
  assert.ok(pointers >= 20, `${pointers} pointers into docs/design.md`);
});
