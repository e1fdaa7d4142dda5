/**
 * docs/messages.md sends a reader from a message to the file that decides it: every row's file exists, and holds
 * every literal part of the message (the parts between `<...>` placeholders, as the code spells them between its
 * interpolations). A message reworded in the code, or moved to another file, fails here until the page follows.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;
const page = Deno.readTextFileSync(`${root}docs/messages.md`);

/** Each table row: its message's code spans and the file it links to. */
function rows(): { spans: string[]; file: string }[] {
  return page.split("\n").flatMap((line) => {
    const link = /\]\(\.\.\/([^)]+)\) \|$/.exec(line);
    if (!line.startsWith("| `") || !link) return [];
    const message = line.split(" | ")[0]!;
    return [{ spans: [...message.matchAll(/`([^`]+)`/g)].map((m) => m[1]!), file: link[1]! }];
  });
}

/** The literal parts of a span: split at placeholders, trimmed of the spaces and quotes around values. */
function parts(span: string): string[] {
  return span.split(/<[^>]*>/).map((p) => p.trim().replace(/^["']+|["']+$/g, "").trim())
    .filter((p) => p.length >= 4);
}

Deno.test("docs/messages.md: every message is in the file it names", async (t) => {
  const all = rows();
  assert.ok(all.length >= 50, `${all.length} messages listed`);
  for (const { spans, file } of all) {
    await t.step(`${file}: ${spans[0]}`, () => {
      const source = Deno.readTextFileSync(`${root}${file}`);
      for (const part of spans.flatMap(parts)) {
        assert.ok(source.includes(part), `${file} does not hold ${JSON.stringify(part)}`);
      }
    });
  }
});
