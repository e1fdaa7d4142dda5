/**
 * `deno task chart`: writes the Helm chart charts/butler from manifests/ (tools/chart/), and the base's image tag
 * (manifests/kustomization.yaml) from deno.json's version, the one place it is written. `--check` writes nothing
 * and exits 1, naming each file, when either is not what the sources make.
 *
 * @module
 */
import { CHART_DIR, chartDrift, generateChart, readChart, withImageTag } from "./chart/mod.ts";

const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
const want = await generateChart(root);
const dir = `${root}/${CHART_DIR}`;
const drift = chartDrift(want, await readChart(dir));
const kustomizationPath = `${root}/manifests/kustomization.yaml`;
const kustomization = await Deno.readTextFile(kustomizationPath);
const tagged = withImageTag(kustomization, want.get("Chart.yaml")!.match(/^appVersion: "?([^"\n]+)/m)![1]!);
if (tagged !== kustomization) drift.push("differs: manifests/kustomization.yaml (its butler-hooks newTag)");
if (Deno.args.includes("--check")) {
  if (drift.length) {
    console.error(`${CHART_DIR} is not what manifests/ makes: run deno task chart\n  ${drift.join("\n  ")}`);
    Deno.exit(1);
  }
  console.log(`${CHART_DIR}: ${want.size} files, as manifests/ makes them`);
} else {
  await Deno.writeTextFile(kustomizationPath, tagged);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  for (const [path, text] of want) {
    await Deno.mkdir(`${dir}/${path}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${dir}/${path}`, text);
  }
  console.log(`${CHART_DIR}: wrote ${want.size} files${drift.length ? ` (${drift.length} changed)` : ""}`);
}
