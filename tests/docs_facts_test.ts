/**
 * Facts the docs state about the repository, read from the repository: what `task test` runs (the README against
 * docs/development.md's tier table), and what the large-pools overlay sets (docs/install.md's components table
 * against the overlay's patch).
 */
import assert from "node:assert/strict";
import { parse } from "yaml";

const root = new URL("../", import.meta.url).pathname;
const read = (path: string) => Deno.readTextFileSync(`${root}${path}`);

Deno.test("the README says which tier `task test` runs, as docs/development.md names it", () => {
  const row = read("docs/development.md").split("\n")
    .find((l) => l.includes("| `npx -y deno@2.9.6 task test` |"));
  assert.ok(row, "docs/development.md's tier table has task test");
  const tier = row.split("|")[1]!.trim().toLowerCase();
  const line = read("README.md").split("\n").find((l) => /^npx -y deno@2\.9\.6 task test\s+#/.test(l));
  assert.ok(line, "the README's quick start runs task test");
  assert.match(line, new RegExp(`\\b${tier} tier\\b`), `the README calls it the ${tier} tier`);
  assert.doesNotMatch(line, /whole|all the tests|every test/);
});

Deno.test("docs/install.md states the body limit and memory the large-pools overlay sets", () => {
  const overlay = parse(read("examples/kustomize/large-pools/kustomization.yaml"));
  const container = parse(overlay.patches[0].patch).spec.template.spec.containers[0];
  const body = Number(container.env.find((e: { name: string }) => e.name === "BODY_LIMIT_BYTES").value);
  const memory: string = container.resources.limits.memory;
  const row = read("docs/install.md").split("\n").find((l) => l.startsWith("| large pools |"));
  assert.ok(row, "docs/install.md has the large pools row");
  assert.ok(row.includes(`${body / (1 << 20)} MiB body limit`), `${row}: ${body / (1 << 20)} MiB`);
  assert.ok(row.includes(`\`${memory}\``), `${row}: ${memory}`);
});

Deno.test("every release the docs and examples pin is this version (deno.json's)", () => {
  const version = JSON.parse(read("deno.json")).version as string;
  const pins = [
    ...[
      "README.md",
      "docs/install.md",
      "examples/ci/.github/workflows/plan.yaml",
      "manifests/kustomization.yaml",
    ]
      .flatMap((file) =>
        [
          ...read(file).matchAll(
            /butler-hooks:(\d[\w.-]*)|butler-metacontroller-hooks\/\/\S+\?ref=v(\S+)|^\s+ref: v(\S+)|newTag: (\S+)|\bVERSION=v?(\d[\w.-]*)/gm,
          ),
        ].map((m) => ({ file, pin: m.slice(1).find((g) => g !== undefined)! }))
      ),
  ];
  assert.ok(pins.length >= 7, JSON.stringify(pins));
  assert.deepEqual(pins.filter((p) => p.pin !== version), []);
});
