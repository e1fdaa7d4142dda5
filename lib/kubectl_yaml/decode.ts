/**
 * A parsed YAML document turned into the JSON `kubectl` sends, as go-yaml v2 and sigs.k8s.io/yaml turn it: plain
 * scalars resolved as YAML 1.1 ({@linkcode resolvePlain}), a repeated key keeping its last value, merge keys
 * (`<<: *base`) writing the merged map's keys in document order (a later key wins; in a list of maps, the first
 * map wins), aliases expanded, map keys made strings (`yes:` is `"true"`), and what JSON cannot hold refused.
 *
 * @module
 */
import type { Alias, Document, Node, Scalar, YAMLMap, YAMLSeq } from "yaml";
import { isAlias, isMap, isScalar, isSeq } from "yaml";
import { snippet } from "../safe_text/mod.ts";
import { anchorTargets } from "./anchors.ts";
import { type Resolved, resolvePlain } from "./resolve.ts";

/** A document kubectl cannot turn into JSON: why. */
export class Unconvertible extends Error {}

/** Nodes (values, map entries, merges) decoded before a document is refused as a billion-laughs bomb. */
export const MAX_NODES = 1_000_000;

/**
 * What a whole run may decode, over all its documents: nodes (values, map entries and merged maps, each alias
 * expansion counted again) and characters of scalars. Shared by the documents of a run, so that many documents,
 * each under {@linkcode MAX_NODES}, cannot add up to an unbounded run.
 */
export class DecodeBudget {
  /** Nodes decoded so far. */
  nodes = 0;
  /** Characters of scalars decoded so far. */
  chars = 0;
  constructor(readonly maxNodes = 2 * MAX_NODES, readonly maxChars = 64 * 1024 * 1024) {}
}

const STR = "tag:yaml.org,2002:str";
const MERGE = "tag:yaml.org,2002:merge";

interface Context {
  readonly targets: Map<Alias, Node>;
  nodes: number;
  readonly budget: DecodeBudget;
  /** Maps and lists being decoded: one reached again through an alias contains itself. */
  readonly expanding: Set<unknown>;
}

/** Counts one decoded node (and `chars` characters) against the document's and the run's bounds. */
function spend(ctx: Context, chars = 0): void {
  const b = ctx.budget;
  if (++ctx.nodes > MAX_NODES) throw new Unconvertible("document contains excessive aliasing");
  b.chars += chars;
  if (++b.nodes > b.maxNodes || b.chars > b.maxChars) {
    throw new Unconvertible(
      `plan's bound of ${b.maxNodes} decoded YAML nodes or ${b.maxChars} characters per run is spent`,
    );
  }
}

/** Runs `f` on a map or list, refusing one that is reached again while it is decoded. */
function within<T>(ctx: Context, node: Node, f: () => T): T {
  if (ctx.expanding.has(node)) {
    const anchor = (node as { anchor?: string }).anchor;
    throw new Unconvertible(`anchor '${snippet(anchor ?? "")}' value contains itself`);
  }
  ctx.expanding.add(node);
  try {
    return f();
  } finally {
    ctx.expanding.delete(node);
  }
}

/** A decoded map key: its Go type matters for the string it becomes. */
type Key = Resolved;

function scalarOf(node: Scalar): Resolved {
  const text = String(node.source ?? node.value ?? "");
  const tag = node.tag;
  if (tag === STR) return { value: text };
  if (node.type !== "PLAIN" && !tag) return { value: text };
  if (!tag || tag === "!") return node.type === "PLAIN" ? resolvePlain(text) : { value: text };
  const resolved = resolvePlain(text);
  const wanted: Record<string, (r: Resolved) => boolean> = {
    "tag:yaml.org,2002:int": (r) => typeof r.value === "number" && !r.float,
    "tag:yaml.org,2002:float": (r) => typeof r.value === "number",
    "tag:yaml.org,2002:bool": (r) => typeof r.value === "boolean",
    "tag:yaml.org,2002:null": (r) => r.value === null,
  };
  const check = wanted[tag];
  if (!check) return { value: text };
  if (!check(resolved)) {
    throw new Unconvertible(`cannot decode "${snippet(text)}" as a ${tag.slice(18)}`);
  }
  return tag === "tag:yaml.org,2002:float" ? { value: resolved.value, float: true } : resolved;
}

function isMergeKey(key: unknown): boolean {
  return isScalar(key) && ((key.type === "PLAIN" && !key.tag && key.source === "<<") || key.tag === MERGE);
}

function target(ctx: Context, node: unknown): unknown {
  if (!isAlias(node)) return node;
  const found = ctx.targets.get(node);
  if (!found) throw new Unconvertible(`unknown anchor '${snippet(node.source)}' referenced`);
  return found;
}

/** A map's entries in the order written: key (with its Go type) and value. */
type Entries = Map<string, { key: Key; value: unknown }>;

function setEntry(out: Entries, key: Key, value: unknown): void {
  const id = `${key.float ? "f" : typeof key.value}:${String(key.value)}`;
  out.delete(id);
  out.set(id, { key, value });
}

function mergeInto(ctx: Context, node: unknown, out: Entries): void {
  spend(ctx);
  const value = target(ctx, node);
  if (isMap(value)) return mapInto(ctx, value, out);
  if (isSeq(value)) {
    for (const item of [...value.items].reverse()) {
      const m = target(ctx, item);
      if (!isMap(m)) throw new Unconvertible("map merge requires map or sequence of maps as the value");
      mapInto(ctx, m, out);
    }
    return;
  }
  throw new Unconvertible("map merge requires map or sequence of maps as the value");
}

function mapInto(ctx: Context, node: YAMLMap, out: Entries): void {
  within(ctx, node, () => pairsInto(ctx, node, out));
}

function pairsInto(ctx: Context, node: YAMLMap, out: Entries): void {
  for (const pair of node.items) {
    spend(ctx);
    if (isMergeKey(pair.key)) {
      mergeInto(ctx, pair.value, out);
      continue;
    }
    const keyNode = target(ctx, pair.key);
    if (isMap(keyNode) || isSeq(keyNode)) throw new Unconvertible("invalid map key: a map or a list");
    const key = keyNode === null || keyNode === undefined ? { value: null } : scalarOf(keyNode as Scalar);
    setEntry(out, key, decodeNode(ctx, pair.value));
  }
}

/** Go's `strconv.FormatFloat(f, 'g', -1, 32)` of a float key, with go-yaml's names for the infinities. */
function float32Key(f: number): string {
  if (Number.isNaN(f)) return ".nan";
  if (!Number.isFinite(f)) return f > 0 ? ".inf" : "-.inf";
  const single = Math.fround(f);
  let digits = single.toPrecision(1);
  for (let p = 1; p <= 9; p++) {
    digits = single.toPrecision(p);
    if (Math.fround(Number(digits)) === single) break;
  }
  const [mantissa, exponent] = Number(digits).toExponential().split("e") as [string, string];
  const exp = Number(exponent);
  if (exp < -4 || exp >= 6) {
    return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
  }
  return String(Number(digits));
}

/** The JSON key a decoded YAML key becomes (sigs.k8s.io/yaml's `convertToJSONableObject`). */
function keyString(key: Key): string {
  const v = key.value;
  if (typeof v === "string") return v;
  if (typeof v === "boolean") return String(v);
  if (typeof v === "number") return key.float ? float32Key(v) : String(v);
  throw new Unconvertible("unsupported map key of type: <nil>");
}

function decodeNode(ctx: Context, node: unknown): unknown {
  if (node === null || node === undefined) return spend(ctx), null;
  if (isAlias(node)) return spend(ctx), decodeNode(ctx, target(ctx, node));
  if (isScalar(node)) {
    spend(ctx, String(node.source ?? node.value ?? "").length);
    const v = scalarOf(node).value;
    if (typeof v === "number" && !Number.isFinite(v)) {
      throw new Unconvertible(
        `json: unsupported value: ${Number.isNaN(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf"}`,
      );
    }
    return v;
  }
  spend(ctx);
  if (isSeq(node)) {
    return within(ctx, node as Node, () => (node as YAMLSeq).items.map((item) => decodeNode(ctx, item)));
  }
  if (isMap(node)) {
    const entries: Entries = new Map();
    mapInto(ctx, node as YAMLMap, entries);
    const out: Record<string, unknown> = {};
    for (const { key, value } of entries.values()) {
      const k = keyString(key);
      delete out[k];
      out[k] = value;
    }
    return out;
  }
  throw new Unconvertible("a YAML node of an unknown kind");
}

/**
 * The JSON value of a document parsed with the failsafe schema and without merge keys (so that this module
 * resolves both), as kubectl reads it; throws {@linkcode Unconvertible} when kubectl could not convert it, or when
 * the run's `budget` is spent.
 *
 * @example
 * ```ts
 * decodeDocument(parseDocument("a: yes\nb: 0x10\n", { schema: "failsafe" })); // { a: true, b: 16 }
 * ```
 */
export function decodeDocument(doc: Document, budget: DecodeBudget = new DecodeBudget()): unknown {
  const ctx: Context = { targets: anchorTargets(doc), nodes: 0, budget, expanding: new Set() };
  return decodeNode(ctx, doc.contents as Node | null);
}
