/**
 * Class: output that grows with what a repository writes. A refusal lists at most `MAX_CAUSES` field errors (then
 * how many more), in the text and the machine output alike, whatever their number; an object larger than the API
 * server takes is refused in its words and not repeated in the output.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { MAX_CAUSES, renderObjects, renderText } from "../../lib/plan/mod.ts";
import { plan, yaml } from "./helpers.ts";

const team = (users: number) =>
  `apiVersion: butler.butlerlabs.dev/v1alpha1\nkind: Team\nmetadata: {name: big}\nspec:\n  access:\n    users:\n${
    Array.from({ length: users }, (_, i) => `    - {name: u${i}, role: bogus}\n`).join("")
  }`;

Deno.test("a refusal prints at most MAX_CAUSES causes and counts the rest", async () => {
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: 400 }), async (users) => {
      const result = await plan(yaml(team(users)));
      const causes = result.outcomes[0]!.refusal?.causes?.length ?? 1;
      const text = renderText(result);
      const listed = text.split("\n").filter((l) => l.startsWith("        * ")).length;
      assert.ok(listed <= MAX_CAUSES + 1, `${listed} lines of causes`);
      const refused = JSON.parse(renderObjects(result, "json")).refused[0];
      assert.ok((refused.causes?.length ?? 0) <= MAX_CAUSES + 1);
      assert.ok(refused.message.length < 200 * (MAX_CAUSES + 2), `message of ${refused.message.length}`);
      if (causes > MAX_CAUSES) {
        assert.ok(text.includes(`... and ${causes - MAX_CAUSES} more`));
        assert.equal(refused.causes.at(-1), `... and ${causes - MAX_CAUSES} more`);
      }
    }),
    { numRuns: 12, seed: 57 },
  );
});

Deno.test("an object over the API server's bounds is refused in its words, and not printed again", async () => {
  const configMap = (bytes: number) =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big, namespace: default}\ndata: {k: ${
      "x".repeat(bytes)
    }}\n`;
  for (
    const [bytes, words] of [
      [1024 * 1024, undefined],
      [2 * 1024 * 1024, "etcdserver: request is too large"],
      [3.2 * 1024 * 1024, "Request entity too large: limit is 3145728"],
    ] as const
  ) {
    const result = await plan(yaml(configMap(bytes)));
    assert.equal(result.outcomes[0]!.refusal?.message, words);
    if (words) assert.ok(renderObjects(result, "json").length < 10_000);
  }
});
