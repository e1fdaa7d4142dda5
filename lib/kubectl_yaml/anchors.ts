/**
 * Every alias of a YAML document resolved in one pass: YAML's rule is that an alias refers to the latest anchor of
 * its name before it in the document (a node's own anchor is in force inside the node, which is how a map can hold
 * itself). The `yaml` library's `Alias.resolve` walks the whole document for every alias, which makes a document of
 * many aliases quadratic; this walk is linear.
 *
 * @module
 */
import type { Alias, Document, Node } from "yaml";
import { isAlias, isMap, isPair, isSeq } from "yaml";

/**
 * The node each alias of `doc` refers to (absent: no anchor of its name before it).
 *
 * @example
 * ```ts
 * const doc = parseDocument("a: &x 1\nb: *x\n");
 * anchorTargets(doc).size; // 1
 * ```
 */
export function anchorTargets(doc: Document): Map<Alias, Node> {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  // An explicit stack: a deeply nested document must not exhaust the call stack.
  const stack: unknown[] = [doc.contents];
  while (stack.length) {
    const node = stack.pop();
    if (!node || typeof node !== "object") continue;
    if (isAlias(node)) {
      const found = anchors.get(node.source);
      if (found) targets.set(node, found);
      continue;
    }
    if (isPair(node)) {
      stack.push(node.value, node.key);
      continue;
    }
    const anchor = (node as { anchor?: string }).anchor;
    if (anchor) anchors.set(anchor, node as Node);
    if (isMap(node) || isSeq(node)) {
      for (let i = node.items.length - 1; i >= 0; i--) stack.push(node.items[i]);
    }
  }
  return targets;
}
