import assert from "node:assert/strict";
import { emitObject, flow } from "./emit.ts";
import { fold, toNode } from "./tree.ts";

const on = { on: ".Values.x.enabled", off: "(not .Values.x.enabled)" };
const other = { on: ".Values.y.enabled", off: "(not .Values.y.enabled)" };

Deno.test("chart templates: a feature's changes folded into an object", async (t) => {
  await t.step("an added key, a removed key and a changed scalar, each under the feature's condition", () => {
    const a = { kind: "K", spec: { keep: 1, drop: "d", change: "a" } };
    const b = { kind: "K", spec: { keep: 1, change: "b", add: [1] } };
    const text = emitObject(fold(toNode(a), a, b, on, "K"), undefined);
    assert.equal(
      text,
      [
        'kind: "K"',
        "spec:",
        "  keep: 1",
        "  {{- if (not .Values.x.enabled) }}",
        '  drop: "d"',
        "  {{- end }}",
        '  change: {{ if .Values.x.enabled }}"b"{{ else }}"a"{{ end }}',
        "  {{- if .Values.x.enabled }}",
        "  add:",
        "    - 1",
        "  {{- end }}",
        "",
      ].join("\n"),
    );
  });
  await t.step("items appended to a list are guarded, the list's own items stay", () => {
    const a = { env: [{ name: "A", value: "1" }] };
    const b = { env: [{ name: "A", value: "1" }, { name: "B", value: "2" }] };
    assert.equal(
      emitObject(fold(toNode(a), a, b, on, "o"), ".Values.z"),
      [
        "{{- if .Values.z }}",
        "env:",
        '  - name: "A"',
        '    value: "1"',
        "  {{- if .Values.x.enabled }}",
        '  - name: "B"',
        '    value: "2"',
        "  {{- end }}",
        "{{- end }}",
        "",
      ].join("\n"),
    );
  });
  await t.step("two features changing one place are refused", () => {
    const a = { v: "a" };
    const node = fold(toNode(a), a, { v: "b" }, on, "o");
    assert.throws(() => fold(node, a, { v: "c" }, other, "o"), /o\.v: changed by two features/);
  });
  await t.step("Helm's delimiters in the manifests are printed as they are", () => {
    assert.equal(flow("{{ $labels.pool }}"), '"{{ "{{" }} $labels.pool }}"');
  });
});
