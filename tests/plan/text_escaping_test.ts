/**
 * Class: a repository's strings printed raw. Kinds, names, namespaces, label values, file names and the text of
 * documents that cannot be read reach the text output and `--diff`; with control characters, line breaks and
 * bidirectional overrides in them, no raw control character may reach the output, and no line may read as a CI
 * runner's command (`::error ...` after blanks, as GitHub Actions takes it).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { parseManifests, renderDiff, renderObjects, renderText, runPlan } from "../../lib/plan/mod.ts";
import { INSTALL, NOW } from "./helpers.ts";

const UNSAFE_CHARS = [
  "\n",
  "\r",
  "\t",
  "\x1b",
  "\x07",
  "\x00",
  "\x7f",
  "\x9b",
  "\u2028",
  "\u202e",
  "\u2066",
  "\ufeff",
];
const hostile = fc.array(
  fc.oneof(
    fc.constantFrom(...UNSAFE_CHARS, "::error title=forged::x", "##[error]x", "\n::warning::y", " "),
    fc.stringMatching(/^[a-zA-Z0-9:#[\]-]{1,6}$/),
  ),
  { minLength: 1, maxLength: 6 },
).map((parts) => parts.join(""));

// deno-lint-ignore no-control-regex
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]/;
const COMMAND = /^\s*(::|##\[)/m;

Deno.test("text, --diff, -o json and -o yaml: no raw control character, no line a CI runner takes as a command", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        kind: hostile,
        name: hostile,
        label: hostile,
        file: hostile,
        separator: hostile,
        apiVersion: fc.constantFrom("v1", "butler.butlerlabs.dev/v1alpha1", "example.com/v1"),
      }),
      async (c) => {
        const q = JSON.stringify;
        const text = [
          `apiVersion: ${c.apiVersion}\nkind: ${q(c.kind)}\nmetadata: {name: ${q(c.name)}}\n`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${q(c.name)}, labels: {a: ${q(c.label)}}}\n`,
          `apiVersion: v1\nkind: Team\nmetadata: {name: ok}\n`,
          // A separator followed by anything but a comment makes an unreadable document that quotes it.
          `--- ${c.separator.replace(/[\n\r]/g, "")}\nx: 1\n`,
        ].join("---\n");
        const parsed = parseManifests(text, `repo/${c.file}.yaml`);
        const result = await runPlan({
          desired: parsed.objects,
          unreadable: parsed.unreadable,
          live: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: c.name } }],
          now: NOW,
          install: INSTALL,
          routes: HOOK_ROUTES,
        });
        const lines = [
          renderText(result),
          renderDiff(result),
          renderObjects(result, "json"),
          renderObjects(result, "yaml"),
        ]
          .join("").split("\n");
        for (const line of lines) {
          assert.equal(RAW.test(line), false, `raw control character in ${JSON.stringify(line)}`);
          assert.equal(COMMAND.test(line), false, `a runner command: ${JSON.stringify(line)}`);
        }
      },
    ),
    { numRuns: 40, seed: 57 },
  );
});
