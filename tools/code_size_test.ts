import assert from "node:assert/strict";
import { isProduct, measureFunctions } from "./code_size.ts";

Deno.test("code size: functions are measured from deno fmt's layout", async (t) => {
  await t.step(
    "declarations, methods and bound arrows, nested ones too, first and last line included",
    () => {
      const text = [
        "export async function outer(a: string): Promise<void> {", // 1
        "  function inner() {", // 2
        "    return 1;",
        "  }", // 4
        "  await inner();",
        "}", // 6
        "const block = (x: number) => {", // 7
        "  return x;",
        "};", // 9
        "const expression = (err: unknown): Error =>", // 10
        "  err instanceof Error ? err : new Error(",
        "    String(err),",
        "  );", // 13
        "class A {",
        "  method(x: number): number {", // 15
        "    if (x) {",
        "      return 1;",
        "    }",
        "    return 2;",
        "  }", // 20
        "  async #hidden(): Promise<void> {", // 21
        "  }", // 22
        "}",
        "const one = (a: number) => a + 1;",
        "function long(", // 25
        "  a: number,",
        "): number {",
        "  return a;",
        "}", // 29
        "export const multi = (", // 30
        "  a: number,",
        ") => {",
        "  return a;",
        "};", // 34
        "const notAFunction = (",
        "  1 + 2",
        ");",
        "",
      ].join("\n");
      assert.deepEqual(measureFunctions(text), [
        { name: "outer", line: 1, lines: 6 },
        { name: "inner", line: 2, lines: 3 },
        { name: "block", line: 7, lines: 3 },
        { name: "expression", line: 10, lines: 4 },
        { name: "method", line: 15, lines: 6 },
        { name: "#hidden", line: 21, lines: 2 },
        { name: "long", line: 25, lines: 5 },
        { name: "multi", line: 30, lines: 5 },
      ]);
    },
  );

  await t.step(
    "product code is what the image ships and the plugin runs, without tests and benchmarks",
    () => {
      assert.deepEqual(
        [
          "main.ts",
          "hooks/team/sync.ts",
          "hooks/team/sync_test.ts",
          "lib/testing/review.ts",
          "lib/kube/watch.ts",
          "cli/commands.ts",
          "tests/load/cpu_profile.ts",
          "bench/pool_data.ts",
          "tools/code_size.ts",
        ].filter(isProduct),
        ["main.ts", "hooks/team/sync.ts", "lib/kube/watch.ts", "cli/commands.ts"],
      );
    },
  );
});
