/**
 * `deno task chart`: writes the Helm chart charts/butler from manifests/ (tools/chart/), and the image tag of the
 * base and the reporter component (their kustomization.yaml) from deno.json's version, the one place it is written. `--check` writes nothing
 * and exits 1, naming each file, when either is not what the sources make.
 *
 * @module
 */
import {
  CHART_DIR,
  chartDrift,
  generateChart,
  IMAGE_TAG_FILES,
  readChart,
  withImageTag,
} from "./chart/mod.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const want = await generateChart(root);
const dir = `${root}/${CHART_DIR}`;
const drift = chartDrift(want, await readChart(dir));
const version = want.get("Chart.yaml")!.match(/^appVersion: "?([^"\n]+)/m)![1]!;
const tags = new Map<string, string>();
for (const path of IMAGE_TAG_FILES) {
  const text = await Deno.readTextFile(`${root}/${path}`);
  const tagged = withImageTag(text, version);
  if (tagged !== text) drift.push(`differs: ${path} (its butler-hooks newTag)`);
  tags.set(path, tagged);
}
if (Deno.args.includes("--check")) {
  if (drift.length) {
    console.error(`${CHART_DIR} is not what manifests/ makes: run deno task chart\n  ${drift.join("\n  ")}`);
    Deno.exit(1);
  }
  console.log(`${CHART_DIR}: ${want.size} files, as manifests/ makes them`);
} else {
  for (const [path, text] of tags) await Deno.writeTextFile(`${root}/${path}`, text);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  for (const [path, text] of want) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  console.log(`${CHART_DIR}: wrote ${want.size} files${drift.length ? ` (${drift.length} changed)` : ""}`);
}
