/**
 * Writes a template node as a Helm template: block YAML, one guarded entry or item between `{{- if }}` and
 * `{{- end }}` lines, switched values inline. Every scalar is written as JSON (valid YAML, and never read as
 * another type by YAML 1.1), and every `{{` of the manifests is escaped so that Helm prints it as it is.
 *
 * @module
 */
import type { Node } from "./tree.ts";

/** A JSON value on one line, as YAML flow, with Helm's delimiters escaped. */
export function flow(v: unknown): string {
  return JSON.stringify(v).replaceAll("{{", '{{ "{{" }}');
}

/** A map key: plain when YAML 1.1 and 1.2 both read it as that string, else quoted. */
function key(k: string): string {
  const plain = /^[A-Za-z_][A-Za-z0-9_.\/-]*$/.test(k) &&
    !/^(y|n|yes|no|on|off|true|false|null)$/i.test(k);
  return plain ? k : flow(k);
}

/** The node on one line, when it has one (a scalar, a switch, an expression, an empty map or list). */
function inline(node: Node): string | undefined {
  switch (node.t) {
    case "lit":
      return flow(node.v);
    case "expr":
      return `{{ ${node.expr} }}`;
    case "switch":
      return `{{ if ${node.cond} }}${flow(node.then)}{{ else }}${flow(node.else)}{{ end }}`;
    case "map":
      return node.entries.length ? undefined : "{}";
    case "seq":
      return node.items.length ? undefined : "[]";
  }
}

function guarded(lines: string[], pad: string, guard: string | undefined): string[] {
  return guard === undefined ? lines : [`${pad}{{- if ${guard} }}`, ...lines, `${pad}{{- end }}`];
}

/** The lines of a non-inline node at `indent`. */
function block(node: Node, indent: number): string[] {
  const pad = " ".repeat(indent);
  if (node.t === "map") {
    return node.entries.flatMap((e) => {
      const one = inline(e.node);
      const lines = one !== undefined
        ? [`${pad}${key(e.key)}: ${one}`]
        : [`${pad}${key(e.key)}:`, ...block(e.node, indent + 2)];
      return guarded(lines, pad, e.guard);
    });
  }
  if (node.t === "seq") {
    return node.items.flatMap((item) => {
      const one = inline(item.node);
      let lines: string[];
      if (one !== undefined) lines = [`${pad}- ${one}`];
      else {
        const inner = block(item.node, indent + 2);
        lines = inner[0]!.trimStart().startsWith("{{") ? [`${pad}-`, ...inner] : [
          `${pad}- ${inner[0]!.slice(indent + 2)}`,
          ...inner.slice(1),
        ];
      }
      return guarded(lines, pad, item.guard);
    });
  }
  throw new Error(`a ${node.t} node has no block form`);
}

/** One object's template: present when `presence` holds (always, without it). */
export function emitObject(node: Node, presence: string | undefined): string {
  const body = block(node, 0);
  return (presence === undefined ? body : [`{{- if ${presence} }}`, ...body, "{{- end }}"]).join("\n") + "\n";
}
