/**
 * YAML from a stranger (a tenant's kubeconfig Secret): bounded in length, and charged before it is parsed. The
 * `yaml` library builds a syntax tree and a document before the value: measured on Deno 2.9.6 at up to 2,136 bytes
 * of heap per byte of text for the costliest shapes of 16 KiB (flow collections nested 15 deep, side by side),
 * about 620 for long flow or block sequences, 7 for plain text (`yaml_test.ts` holds the bound to the heap taken).
 *
 * @module
 */
import { parse } from "yaml";
import { type HeapBudget, isHeapRefusal } from "./heap_budget.ts";
import { ForeignRefused } from "./door.ts";

/** Heap charged per byte of YAML text: above the costliest shape measured (see the module doc). */
export const YAML_WORST_PER_BYTE = 2500;

/** YAML longer than its bound: refused unread. */
export class ForeignTooLong extends Error {
  override readonly name = "ForeignTooLong";
  constructor(readonly length: number, readonly maxBytes: number) {
    super(`${length} bytes of YAML, over the ${maxBytes} bytes read`);
  }
}

/**
 * Parses `text` as YAML once `budget` has taken its worst cost; throws {@linkcode ForeignTooLong} past `maxBytes`
 * (counted in UTF-16 units, at least its UTF-8 bytes' count of characters), {@linkcode ForeignRefused} when the
 * budget cannot hold it, and the library's own error when it is not YAML (at most 100 aliases are expanded).
 *
 * @example
 * ```ts
 * const config = parseForeignYaml(secretText, budget, 16 * 1024);
 * ```
 */
export function parseForeignYaml(text: string, budget: HeapBudget, maxBytes: number): unknown {
  if (text.length > maxBytes) throw new ForeignTooLong(text.length, maxBytes);
  const charge = budget.reserve(text.length * YAML_WORST_PER_BYTE);
  if (isHeapRefusal(charge)) throw new ForeignRefused(charge, text.length);
  try {
    return parse(text, { maxAliasCount: 100 });
  } finally {
    charge.release();
  }
}
