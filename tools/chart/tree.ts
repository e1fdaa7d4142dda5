/**
 * A manifest object as a template: its JSON with the places where features differ. Built from the object as one
 * render gives it, then each feature's render of the same object is folded in as guarded map entries, guarded list
 * items and switched values. Two features that change the same place are refused: the chart cannot say what
 * kustomize would do with both.
 *
 * @module
 */

/** A template node. */
export type Node =
  | { readonly t: "lit"; readonly v: unknown }
  | { readonly t: "map"; readonly entries: Entry[] }
  | { readonly t: "seq"; readonly items: Item[] }
  | { readonly t: "switch"; readonly cond: string; readonly then: unknown; readonly else: unknown }
  | { readonly t: "expr"; readonly expr: string };

/** A map entry, present only when `guard` (a Helm condition) holds, if it has one. */
export interface Entry {
  readonly key: string;
  node: Node;
  guard?: string;
}

/** A list item, present only when `guard` holds, if it has one. */
export interface Item {
  node: Node;
  guard?: string;
}

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Whether two JSON values are equal (key order aside). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length &&
      a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isMap(a) && isMap(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return a === b;
}

/** A JSON value as a template with no conditions. */
export function toNode(v: unknown): Node {
  if (Array.isArray(v)) return { t: "seq", items: v.map((x) => ({ node: toNode(x) })) };
  if (isMap(v)) return { t: "map", entries: Object.entries(v).map(([key, x]) => ({ key, node: toNode(x) })) };
  return { t: "lit", v };
}

/** Whether a node is still the plain form of `v` (nothing folded in). */
function plain(node: Node, v: unknown): boolean {
  return jsonEqual(fromNode(node), v) && !conditional(node);
}

function conditional(node: Node): boolean {
  if (node.t === "switch" || node.t === "expr") return true;
  if (node.t === "map") return node.entries.some((e) => e.guard !== undefined || conditional(e.node));
  if (node.t === "seq") return node.items.some((i) => i.guard !== undefined || conditional(i.node));
  return false;
}

/** The value a node gives when every guard holds as written without conditions (plain nodes only). */
function fromNode(node: Node): unknown {
  if (node.t === "lit") return node.v;
  if (node.t === "map") return Object.fromEntries(node.entries.map((e) => [e.key, fromNode(e.node)]));
  if (node.t === "seq") return node.items.map((i) => fromNode(i.node));
  return undefined;
}

/** A feature's Helm conditions: when it is on, and when it is off. */
export interface Cond {
  readonly on: string;
  readonly off: string;
}

/**
 * Folds into `node` (the template of `a`) what a feature whose conditions are `cond` makes of it (`b`). `where`
 * names the place for the error when another feature already changed it.
 */
export function fold(node: Node, a: unknown, b: unknown, cond: Cond, where: string): Node {
  if (jsonEqual(a, b)) return node;
  if (isMap(a) && isMap(b) && node.t === "map") {
    for (const key of Object.keys(b)) {
      const entry = node.entries.find((e) => e.key === key);
      if (!(key in a)) {
        if (entry) throw new Error(`${where}.${key}: added by two features`);
        node.entries.push({ key, node: toNode(b[key]), guard: cond.on });
      } else {
        entry!.node = fold(entry!.node, a[key], b[key], cond, `${where}.${key}`);
      }
    }
    for (const key of Object.keys(a).filter((k) => !(k in b))) {
      const entry = node.entries.find((e) => e.key === key)!;
      if (entry.guard !== undefined) throw new Error(`${where}.${key}: removed by two features`);
      entry.guard = cond.off;
    }
    return node;
  }
  if (Array.isArray(a) && Array.isArray(b) && node.t === "seq" && b.length >= a.length) {
    const base = node.items.filter((i) => i.guard === undefined);
    if (base.length !== a.length) throw new Error(`${where}: a list two features change`);
    a.forEach((x, i) => base[i]!.node = fold(base[i]!.node, x, b[i], cond, `${where}[${i}]`));
    for (const x of b.slice(a.length)) node.items.push({ node: toNode(x), guard: cond.on });
    return node;
  }
  if (!plain(node, a)) throw new Error(`${where}: changed by two features`);
  return { t: "switch", cond: cond.on, then: b, else: a };
}

/** Replaces every literal string for which `replace` gives an expression. */
export function substitute(node: Node, replace: (text: string) => string | undefined): Node {
  if (node.t === "lit") {
    const expr = typeof node.v === "string" ? replace(node.v) : undefined;
    return expr === undefined ? node : { t: "expr", expr };
  }
  if (node.t === "map") { for (const e of node.entries) e.node = substitute(e.node, replace); }
  if (node.t === "seq") { for (const i of node.items) i.node = substitute(i.node, replace); }
  return node;
}
