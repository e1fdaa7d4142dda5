/**
 * The chart's templates from kustomize renders: every object any feature set renders, present under the
 * conditions of the features that add or remove it, with what each other feature changes in it folded in.
 *
 * @module
 */
import { emitObject } from "./emit.ts";
import { type Feature, FEATURES, KEEP_ANNOTATION, KEPT_KINDS, PARAMETERS } from "./features.ts";
import { type Obj, renderAll, setKey } from "./render.ts";
import { type Cond, fold, type Node, substitute, toNode } from "./tree.ts";

/** A feature's conditions as Helm atoms. */
export function condOf(f: Feature): Cond {
  const value = `.Values.${f.value}`;
  const not = `(not ${value})`;
  return f.on ? { on: value, off: not } : { on: not, off: value };
}

function all(atoms: string[], op: "and" | "or"): string | undefined {
  return atoms.length === 0 ? undefined : atoms.length === 1 ? atoms[0] : `(${op} ${atoms.join(" ")})`;
}

const ordered = (set: readonly Feature[]) => FEATURES.filter((f) => set.includes(f));

/** The template file name of an object. */
function fileName(o: Obj, taken: Set<string>): string {
  const base = `${o.kind.toLowerCase()}-${o.metadata.name}`;
  const name = taken.has(base) ? `${base}-${o.metadata.namespace}` : base;
  taken.add(name);
  return `templates/${name}.yaml`;
}

/** Templates by path under the chart, for the repository at `root`. */
export async function chartTemplates(root: string): Promise<Map<string, string>> {
  const adders = new Set<Feature>();
  const singles = FEATURES.map((f) => [f]);
  const first = await renderAll(root, [[], ...singles]);
  const base = first.get("")!;
  for (const f of FEATURES) {
    if ([...first.get(setKey([f]))!.keys()].some((id) => !base.has(id))) adders.add(f);
  }
  const pairs = [...adders].flatMap((a) =>
    FEATURES.filter((g) => g !== a && !(a.overlay && g.overlay)).map((g) => ordered([a, g]))
  );
  const renders = new Map([...first, ...await renderAll(root, pairs)]);

  const used = new Set<string>();
  const templates = new Map<string, string>();
  const taken = new Set<string>();
  const ids = [...new Set([...renders.values()].flatMap((r) => [...r.keys()]))].sort();
  for (const id of ids) {
    const origins = base.has(id) ? [] : FEATURES.filter((f) => renders.get(setKey([f]))!.has(id));
    if (!base.has(id) && origins.length === 0) throw new Error(`${id} appears only when two features are on`);
    const origin = origins.slice(0, 1);
    const object = renders.get(setKey(origin))!.get(id)!;
    let node: Node = toNode(object);
    const removers: Feature[] = [];
    for (const g of FEATURES.filter((f) => !origin.includes(f))) {
      if (origins.includes(g)) continue;
      const render = renders.get(setKey(ordered([...origin, g])));
      if (!render) throw new Error(`${id}: no render of ${g.value} with ${origin[0]?.value}`);
      const other = render.get(id);
      if (other === undefined) removers.push(g);
      else node = fold(node, object, other, condOf(g), id);
    }
    node = substitute(node, (text) => {
      const p = PARAMETERS.find((p) =>
        (!p.kind || p.kind === object.kind) && (!p.name || p.name === object.metadata.name) &&
        p.matches(text)
      );
      if (p) used.add(p.value);
      return p?.expr;
    });
    if (KEPT_KINDS.includes(object.kind)) node = keep(node);
    const presence = [all(origins.map((f) => condOf(f).on), "or"), ...removers.map((f) => condOf(f).off)]
      .filter((a): a is string => a !== undefined);
    templates.set(fileName(object, taken), emitObject(node, all(presence, "and")));
  }
  const unused = PARAMETERS.filter((p) => !used.has(p.value));
  if (unused.length) throw new Error(`no rendered literal for ${unused.map((p) => p.value).join(", ")}`);
  return templates;
}

/** Adds `helm.sh/resource-policy: keep` to an object's annotations. */
function keep(node: Node): Node {
  if (node.t !== "map") throw new Error("an object is a map");
  const metadata = node.entries.find((e) => e.key === "metadata")!.node;
  if (metadata.t !== "map") throw new Error("metadata is a map");
  let annotations = metadata.entries.find((e) => e.key === "annotations");
  if (!annotations) {
    metadata.entries.push(annotations = { key: "annotations", node: { t: "map", entries: [] } });
  }
  if (annotations.node.t !== "map") throw new Error("annotations are a map");
  annotations.node.entries.push({ key: KEEP_ANNOTATION, node: { t: "lit", v: "keep" } });
  return node;
}
