/**
 * The Helm chart (charts/butler), generated from the kustomize sources so that the two never drift: its templates
 * from kustomize renders of the base with each feature (`templates.ts`), its values and schema from the features
 * (`files.ts`), its version from deno.json. `deno task chart` writes it; `--check` says what differs.
 *
 * @module
 */
import { staticFiles } from "./files.ts";
import { chartTemplates } from "./templates.ts";

export { FEATURES, PARAMETERS } from "./features.ts";
export { render } from "./render.ts";

/** Where the chart lives in the repository. */
export const CHART_DIR = "charts/butler";

/** Every file of the chart, by path under {@linkcode CHART_DIR}, for the repository at `root`. */
export async function generateChart(root: string): Promise<Map<string, string>> {
  const { version } = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
  const notes = await Deno.readTextFile(`${root}/tools/chart/NOTES.txt`);
  const readme = (await Deno.readTextFile(`${root}/tools/chart/README.md`)).replaceAll("@VERSION@", version);
  const files = staticFiles(version, notes, readme);
  for (const [path, text] of await chartTemplates(root)) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => a < b ? -1 : 1));
}

/** The kustomizations whose `images` give `butler-hooks` its tag: the base, and the reporter's component. */
export const IMAGE_TAG_FILES: readonly string[] = [
  "manifests/kustomization.yaml",
  "manifests/components/reporter/kustomization.yaml",
];

/** A kustomization with its image tag set to `version` (the tag the base renders, as the chart does). */
export function withImageTag(kustomization: string, version: string): string {
  const tagged = kustomization.replace(
    /(images:\n {2}- name: butler-hooks\n {4}newTag: ).*/,
    (_m, head: string) => `${head}${version}`,
  );
  if (!tagged.includes(`newTag: ${version}`)) {
    throw new Error("manifests/kustomization.yaml: no butler-hooks newTag");
  }
  return tagged;
}

/** The chart's files as they are on disk, by path under the chart. */
export async function readChart(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  async function walk(sub: string): Promise<void> {
    for await (const e of Deno.readDir(`${dir}/${sub}`)) {
      const path = sub ? `${sub}/${e.name}` : e.name;
      if (e.isDirectory) await walk(path);
      else files.set(path, await Deno.readTextFile(`${dir}/${path}`));
    }
  }
  try {
    await walk("");
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return files;
}

/** What differs between two sets of files: paths missing, extra, or changed. */
export function chartDrift(want: Map<string, string>, have: Map<string, string>): string[] {
  return [
    ...[...want.keys()].filter((p) => !have.has(p)).map((p) => `missing: ${p}`),
    ...[...have.keys()].filter((p) => !want.has(p)).map((p) => `not generated: ${p}`),
    ...[...want].filter(([p, t]) => have.has(p) && have.get(p) !== t).map(([p]) => `differs: ${p}`),
  ];
}
