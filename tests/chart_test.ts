import assert from "node:assert/strict";

// The chart is generated from manifests/ (tools/chart/): a change to the kustomize sources that is not carried into
// charts/butler fails here. Run in its own process: the generator renders with kubectl kustomize in temporary
// directories.
Deno.test("charts/butler is what deno task chart makes of manifests/ (no drift)", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-run=kubectl",
      "--allow-env=LOG_TOKENS,LOG_STREAM",
      "tools/chart.ts",
      "--check",
    ],
    cwd: new URL("..", import.meta.url).pathname,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.ok(out.success, text);
  assert.match(text, /charts\/butler: \d+ files, as manifests\/ makes them/);
});
