/**
 * The release workflow (examples/ci/.github/workflows/release.yaml) with actionlint, and every script it runs, run
 * here on a copy of this tree shaped as at a release (its CHANGELOG section dated): the tag check, the chart's
 * drift check, the chart's image, lint and package, the SBOM of deno.lock, the plugin's archive and manifest, the
 * notes.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { ROOT } from "../api/cluster.ts";
import { changelogSection } from "../../tools/release/changelog.ts";
import { run, runOk, tool } from "./tools.ts";

const WORKFLOW = "examples/ci/.github/workflows/release.yaml";
const { version } = JSON.parse(Deno.readTextFileSync(`${ROOT}/deno.json`));

/** Every deno command the workflow runs, as `task <name> <subcommand>` or `run <script> <flag>`. */
function workflowCommands(): string[] {
  // deno-lint-ignore no-explicit-any
  const workflow = parse(Deno.readTextFileSync(`${ROOT}/${WORKFLOW}`)) as any;
  const runs = Object.values(workflow.jobs).flatMap((job) =>
    // deno-lint-ignore no-explicit-any
    ((job as any).steps as { run?: string }[]).map((s) => s.run ?? "")
  );
  return [
    ...new Set(
      runs.flatMap((
        r,
      ) => [...r.matchAll(/\$DENO (task \S+(?: [a-z-]+)?|run .*?(tools\/\S+\.ts)(?: (--\S+))?)/g)])
        .map((m) => m[2] ? `run ${m[2]}${m[3] ? ` ${m[3]}` : ""}` : m[1]!),
    ),
  ].sort();
}

Deno.test("the release workflow", async (t) => {
  await t.step(
    "actionlint passes it (with shellcheck on its scripts when shellcheck is on PATH)",
    async () => {
      const r = await run(tool("ACTIONLINT_BIN"), [
        "-verbose",
        WORKFLOW,
        "examples/ci/.github/workflows/plan.yaml",
      ]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.doesNotMatch(r.stdout + r.stderr, /Rule "shellcheck" was disabled/, "shellcheck runs");
    },
  );

  const dir = await Deno.makeTempDir({ prefix: "butler-release-" });
  const ran = new Set<string>();
  const deno = async (command: string, args: string[], key: string) => {
    ran.add(key);
    return await run(Deno.execPath(), [...command.split(" "), ...args], { cwd: dir });
  };
  try {
    await t.step("a copy of this tree as at a release: its CHANGELOG section dated, committed", async () => {
      const files = (await runOk("git", ["ls-files", "-co", "--exclude-standard"])).split("\n").filter(
        Boolean,
      );
      for (const f of files) {
        try {
          await Deno.mkdir(`${dir}/${f}`.replace(/\/[^/]+$/, ""), { recursive: true });
          await Deno.copyFile(`${ROOT}/${f}`, `${dir}/${f}`);
        } catch (err) {
          if (!(err instanceof Deno.errors.NotFound)) throw err; // deleted in the work tree
        }
      }
      const log = Deno.readTextFileSync(`${dir}/CHANGELOG.md`);
      if (changelogSection(log, version) === undefined) {
        // What docs/release.md does before tagging.
        const r = await run(Deno.execPath(), ["task", "release", "prepare", version, "2026-12-01"], {
          cwd: dir,
        });
        assert.equal(r.code, 0, r.stderr);
      }
      for (
        const args of [["init", "-q"], ["add", "-A"], [
          "-c",
          "user.name=t",
          "-c",
          "user.email=t@t",
          "commit",
          "-qm",
          "r",
        ]]
      ) {
        await runOk("git", args, { cwd: dir });
      }
    });
    await t.step(
      "release check: the tag is deno.json's version with a dated section; another tag fails",
      async () => {
        const ok = await deno("task release check", [`v${version}`], "task release check");
        assert.equal(ok.code, 0, ok.stderr);
        const wrong = await deno("task release check", ["v9.9.9"], "task release check");
        assert.equal(wrong.code, 1);
        assert.match(
          wrong.stderr,
          new RegExp(`the tag v9\\.9\\.9 is not v${version.replaceAll(".", "\\.")}`),
        );
      },
    );
    await t.step("the chart's drift check passes", async () => {
      const r = await deno(
        "run --allow-read --allow-write --allow-run=kubectl --allow-env=LOG_TOKENS,LOG_STREAM tools/chart.ts",
        ["--check"],
        "run tools/chart.ts --check",
      );
      assert.equal(r.code, 0, r.stderr);
    });
    await t.step("release chart-image, then helm lint --strict and helm package", async () => {
      const r = await deno(
        "task release chart-image",
        ["ghcr.io/example/butler-hooks"],
        "task release chart-image",
      );
      assert.equal(r.code, 0, r.stderr);
      await runOk(tool("HELM_BIN"), ["lint", "--strict", "charts/butler"], { cwd: dir });
      const rendered = await runOk(tool("HELM_BIN"), [
        "template",
        "b",
        "charts/butler",
        "--kube-version=1.35.4",
      ], {
        cwd: dir,
      });
      assert.deepEqual([...new Set([...rendered.matchAll(/image: (.*)/g)].map((m) => m[1]))], [
        `"ghcr.io/example/butler-hooks:${version}"`,
      ]);
      await runOk(tool("HELM_BIN"), ["package", "charts/butler", "--destination", "dist"], { cwd: dir });
      assert.ok(Deno.statSync(`${dir}/dist/butler-${version}.tgz`).isFile);
      const bad = await deno("task release chart-image", ["not an image"], "task release chart-image");
      assert.equal(bad.code, 2);
    });
    await t.step("release sbom: CycloneDX of deno.lock, the same twice", async () => {
      for (const out of ["a.cdx.json", "b.cdx.json"]) {
        const r = await deno("task release sbom", [`dist/${out}`], "task release sbom");
        assert.equal(r.code, 0, r.stderr);
      }
      const a = Deno.readTextFileSync(`${dir}/dist/a.cdx.json`);
      assert.equal(a, Deno.readTextFileSync(`${dir}/dist/b.cdx.json`));
      const bom = JSON.parse(a);
      assert.deepEqual([bom.bomFormat, bom.specVersion, bom.metadata.component.version], [
        "CycloneDX",
        "1.5",
        version,
      ]);
    });
    await t.step("release plugin: the archive and the krew manifest naming it, reproducibly", async () => {
      const sums: string[] = [];
      for (const out of ["p1", "p2"]) {
        const r = await deno("task release plugin", [
          `dist/${out}`,
          "https://example.com/d",
          "https://example.com",
        ], "task release plugin");
        assert.equal(r.code, 0, r.stderr);
        sums.push(Deno.readTextFileSync(`${dir}/dist/${out}/butler.yaml`));
      }
      assert.equal(sums[0], sums[1], "the same archive (and sha256) twice");
      assert.match(
        sums[0]!,
        new RegExp(`uri: https://example.com/d/kubectl-butler-v${version.replaceAll(".", "\\.")}\\.tar\\.gz`),
      );
    });
    await t.step("release notes: the version's CHANGELOG section", async () => {
      const r = await deno("task release notes", [], "task release notes");
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), changelogSection(Deno.readTextFileSync(`${dir}/CHANGELOG.md`), version));
    });
    await t.step(
      "every deno command of the workflow was run here (the unit suite, deno task test, by CI)",
      () => {
        assert.deepEqual(workflowCommands().filter((c) => c !== "task test" && !ran.has(c)), []);
      },
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
