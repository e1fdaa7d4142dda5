/**
 * Class: an object of a shape the plan does not expect ends the run. Metadata absent, null or empty, names
 * missing, Lists inside Lists, a document that merges itself: each is refused or unreadable in kubectl's and the
 * API server's words, and every other object is still judged.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { parseManifests, runPlan } from "../../lib/plan/mod.ts";
import { INSTALL, NOW } from "./helpers.ts";

const metadata = fc.constantFrom(
  "",
  "metadata:\n",
  "metadata: null\n",
  "metadata: {}\n",
  "metadata: {labels: {a: b}}\n",
  "metadata: {generateName: gen-}\n",
  "metadata: {name: named}\n",
  "metadata: {namespace: default}\n",
  "metadata: []\n",
);
const kind = fc.constantFrom(
  "apiVersion: v1\nkind: ConfigMap\n",
  "apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\n",
  "apiVersion: v1\nkind: List\n",
  "apiVersion: v1\nkind: Secret\n",
);
const objectText = fc.tuple(kind, metadata).map(([k, m]) => `${k}${m}`);
const indent = (text: string) =>
  text.trimEnd().split("\n").map((l, i) => `${i ? "  " : "- "}${l}`).join("\n");

const document = fc.oneof(
  objectText,
  fc.array(objectText, { maxLength: 3 }).map((items) =>
    `apiVersion: v1\nkind: List\nitems:\n${items.map(indent).join("\n")}\n`
  ),
  fc.array(objectText, { maxLength: 2 }).map((items) =>
    `apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n${
      items.map((i) => indent(i).replace(/^/gm, "  ")).join("\n")
    }\n`
  ),
  fc.constant("z: &a {k: v, <<: *a}\n"),
);

const SENTINEL = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sentinel, namespace: default}\n";

Deno.test("objects of any shape are judged or refused, never end the run", async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(document, { minLength: 1, maxLength: 4 }), async (docs) => {
      const parsed = parseManifests([...docs, SENTINEL].join("---\n"), "shapes.yaml");
      const result = await runPlan({
        desired: parsed.objects,
        unreadable: parsed.unreadable,
        now: NOW,
        install: INSTALL,
        routes: HOOK_ROUTES,
      });
      assert.equal(result.outcomes.length, parsed.objects.length + parsed.unreadable.length);
      const sentinel = result.outcomes.find((o) => o.name === "ConfigMap default/sentinel");
      assert.equal(sentinel?.action, "create", JSON.stringify(sentinel));
      for (const o of result.outcomes) {
        assert.doesNotMatch(o.name, /undefined|null/, "a name as kubectl prints it");
      }
    }),
    { numRuns: 40, seed: 57 },
  );
});
