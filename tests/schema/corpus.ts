/**
 * A corpus of Butler objects the API server and `plan` must judge alike: every example (the invalid ones as
 * written), and mutations of every valid one, each field in turn dropped, misspelled, retyped, pushed out of
 * range, or given a bad CIDR, address, quantity or version. Deterministic: the same examples give the same
 * corpus.
 */
import { parseAllDocuments } from "yaml";
import { GROUP } from "../../lib/butler/mod.ts";
import { manifestFiles } from "../../lib/plan/mod.ts";
import type { ManifestObject } from "../../lib/schema/mod.ts";

/** One object of the corpus and how it was made. */
export interface CorpusCase {
  readonly name: string;
  readonly object: ManifestObject;
}

type Path = readonly (string | number)[];
type Json = unknown;

function examplesOf(root: string, dir: string): { file: string; object: ManifestObject }[] {
  return manifestFiles(`${root}examples/${dir}`).flatMap((file) =>
    parseAllDocuments(Deno.readTextFileSync(file)).map((d) => d.toJS() as ManifestObject)
      .filter((o) => o?.apiVersion?.startsWith(`${GROUP}/`))
      .map((object) => ({ file: file.slice(root.length), object }))
  );
}

/** Every field below `spec` (and the object's name), as paths, objects and arrays included. */
function paths(value: Json, at: Path = []): Path[] {
  const own = at.length ? [at] : [];
  if (Array.isArray(value)) return [...own, ...value.flatMap((v, i) => paths(v, [...at, i]))];
  if (value !== null && typeof value === "object") {
    return [...own, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]))];
  }
  return own;
}

function edit(
  o: ManifestObject,
  path: Path,
  change: (parent: Record<string | number, Json>, key: string | number) => void,
): ManifestObject {
  const copy = structuredClone(o) as unknown as Record<string | number, Json>;
  let parent = copy;
  for (const p of path.slice(0, -1)) parent = parent[p] as Record<string | number, Json>;
  change(parent, path[path.length - 1]!);
  return copy as unknown as ManifestObject;
}

/** The bad values a field is given, by what it holds and what it is called. */
function badValues(key: string | number, value: Json): Json[] {
  const k = String(key);
  const byName: Json[] = /cidr/i.test(k)
    ? ["10.40.0.0/33", "10.40.0.0", "not-a-cidr", "fd00::/129"]
    : /address|gateway|^ip$/i.test(k)
    ? ["10.40.0.256", "not-an-ip"]
    : /cpu|memory|storage|disksize/i.test(k)
    ? ["1.5GB", "-1", "", 1.5]
    : /version/i.test(k)
    ? ["v1.30", "1.x.0", "latest"]
    : [];
  const byType: Json[] = typeof value === "string"
    ? [42, "", "x".repeat(300), true]
    : typeof value === "number"
    ? ["seven", -1, 0, 2147483648, 1.5]
    : typeof value === "boolean"
    ? ["yes", 1]
    : Array.isArray(value)
    ? ["text", {}, [...value, ...value]]
    : value !== null && typeof value === "object"
    ? ["text", []]
    : [];
  return [...byName, ...byType];
}

function mutations(base: ManifestObject, label: string): CorpusCase[] {
  const out: CorpusCase[] = [];
  const named = (what: string, object: ManifestObject) => out.push({ name: `${label} ${what}`, object });
  for (const path of paths(base.spec ?? {}, ["spec"])) {
    const key = path[path.length - 1]!;
    const at = path.join(".");
    let value: Json = base;
    for (const p of path) value = (value as Record<string | number, Json>)[p];
    if (typeof key === "string") {
      named(`${at} dropped`, edit(base, path, (parent, k) => delete parent[k]));
      named(
        `${at} misspelled`,
        edit(base, path, (parent, k) => {
          parent[`${String(k)}x`] = parent[k];
          delete parent[k];
        }),
      );
    }
    for (const bad of badValues(key, value)) {
      named(
        `${at} = ${JSON.stringify(bad).slice(0, 40)}`,
        edit(base, path, (parent, k) => (parent[k] = bad)),
      );
    }
  }
  named("name too long", { ...base, metadata: { ...base.metadata, name: "n".repeat(70) } });
  named("unknown metadata field", { ...base, metadata: { ...base.metadata, labelz: { a: "b" } } as never });
  named("unserved version", { ...base, apiVersion: `${GROUP}/v1alpha2` });
  return out;
}

/**
 * The corpus: the examples as written, then the mutations of each valid one, without duplicates.
 *
 * @example
 * ```ts
 * corpus(ROOT).length; // > 1000
 * ```
 */
export function corpus(root: string): CorpusCase[] {
  const invalid = examplesOf(root, "invalid").map((e) => ({ name: e.file, object: e.object }));
  const valid = manifestFiles(`${root}examples`).filter((f) => !f.includes("/examples/invalid/"))
    .flatMap((f) => examplesOf(root, f.slice(`${root}examples/`.length)));
  const all = [
    ...invalid,
    ...valid.map((e) => ({ name: e.file, object: e.object })),
    ...valid.flatMap((e) => mutations(e.object, e.file)),
  ];
  const seen = new Set<string>();
  return all.filter((c) => {
    const key = JSON.stringify(c.object);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
