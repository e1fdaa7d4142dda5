/**
 * Reading hostile manifests (issue #57): a document of many aliases, a JSON stream of many values, a merge-key
 * bomb. Each alias was resolved by the `yaml` library's walk of the whole document (8,000 aliases: 39 s in the
 * command), each JSON value's line found by splitting the text before it (40,000 values: 29 s), and merges were not
 * counted (7 levels of 10 merges: over 120 s). Each pair of sizes here is 4x apart: linear reading takes about 4x
 * as long, quadratic 16x; the bomb is refused within the node budget.
 */
import { readStream } from "../lib/kubectl_yaml/mod.ts";
import { count, RUNS, sized } from "./smoke.ts";

const aliases = (n: number) => `a: &a v\nf: [${Array.from({ length: n }, () => "*a").join(", ")}]\n`;
const json = (n: number) => "{}\n".repeat(n);
const bomb = (levels: number) =>
  `z:\n  e0: &e0 {}\n${
    Array.from({ length: levels }, (_, i) =>
      `  e${i + 1}: &e${i + 1} {<<: [${Array(10).fill(`*e${i}`).join(", ")}]}\n`)
      .join("")
  }`;

const A = sized(8_000, 200);
const J = sized(10_000, 200);
for (const n of [A, 4 * A]) {
  const text = aliases(n);
  Deno.bench(`readStream, ${count(n)} aliases`, { group: "aliases", baseline: n === A, ...RUNS }, () => {
    readStream(text);
  });
}
for (const n of [J, 4 * J]) {
  const text = json(n);
  Deno.bench(
    `readStream, a JSON stream of ${count(n)} values`,
    { group: "json", baseline: n === J, ...RUNS },
    () => {
      readStream(text);
    },
  );
}
const levels = sized(7, 4);
const merges = bomb(levels);
Deno.bench(`readStream, a merge bomb of ${levels} levels (refused)`, RUNS, () => {
  readStream(merges);
});
