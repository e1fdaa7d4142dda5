import assert from "node:assert/strict";
import { parse } from "yaml";
import { archiveName, localModules } from "./archive.ts";
import { changelogSection, releaseChangelog, releaseProblems } from "./changelog.ts";
import { KREW_PLATFORMS, krewManifest } from "./krew.ts";
import { lockSbom } from "./sbom.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const ROOT = new URL("../..", import.meta.url).pathname.replace(/\/$/, "");
const read = (path: string) => Deno.readTextFileSync(`${ROOT}/${path}`);

Deno.test("release files", async (t) => {
  await t.step("the krew manifest: one archive for every supported platform, versioned with the v", () => {
    const sha256 = "ab".repeat(32);
    const m = parse(
      krewManifest({ version: "1.2.3", uri: "https://x/a.tar.gz", sha256, homepage: "https://x" }),
    ) as Obj;
    assert.equal(m.metadata.name, "butler");
    assert.equal(m.spec.version, "v1.2.3");
    assert.deepEqual(
      m.spec.platforms.map((p: { selector: { matchLabels: unknown } }) => p.selector.matchLabels),
      [
        ...KREW_PLATFORMS,
      ],
    );
    for (const p of m.spec.platforms) {
      assert.deepEqual([p.uri, p.sha256, p.bin], ["https://x/a.tar.gz", sha256, "kubectl-butler"]);
    }
    assert.doesNotMatch(m.spec.shortDescription, /[\r\n]/);
    assert.equal(archiveName("1.2.3"), "kubectl-butler-v1.2.3.tar.gz");
  });
  await t.step("the SBOM of deno.lock names every npm package with its purl and integrity hash", () => {
    const lock = JSON.parse(read("deno.lock"));
    const bom = lockSbom(lock, {
      name: "butler",
      version: "1.2.3",
      timestamp: "2026-01-01T00:00:00Z",
    }) as Obj;
    assert.equal(bom.bomFormat, "CycloneDX");
    assert.equal(bom.components.length, Object.keys(lock.npm).length);
    const yaml = bom.components.find((c: { name: string }) => c.name === "yaml");
    assert.equal(yaml.purl, `pkg:npm/yaml@${yaml.version}`);
    assert.match(yaml.hashes[0].content, /^[0-9a-f]{128}$/);
    const cel = bom.components.find((c: { name: string }) => c.name === "@marcbachmann/cel-js");
    assert.match(cel.purl, /^pkg:npm\/%40marcbachmann\/cel-js@/);
    const root = bom.dependencies[0];
    assert.equal(root.dependsOn.length, Object.keys(lock.specifiers).length, "every direct dependency");
    assert.deepEqual(
      bom,
      lockSbom(lock, { name: "butler", version: "1.2.3", timestamp: "2026-01-01T00:00:00Z" }),
    );
  });
  await t.step("a release's tag and changelog section are checked", () => {
    const log =
      "# Changelog\n\n## [Unreleased]\n\n## [1.2.3] - 2026-01-02\n\n### Added\n\n- x\n\n## [1.2.2] - 2026-01-01\n" +
      "\n[1.2.3]: ../../compare/v1.2.2...v1.2.3\n";
    assert.deepEqual(releaseProblems("v1.2.3", "1.2.3", log), []);
    assert.equal(changelogSection(log, "1.2.3"), "### Added\n\n- x");
    assert.match(releaseProblems("v1.2.4", "1.2.3", log).join(), /the tag v1\.2\.4 is not v1\.2\.3/);
    assert.match(releaseProblems("v1.2.2", "1.2.2", log).join(), /section of 1\.2\.2 is empty/);
    assert.match(releaseProblems("v9.0.0", "9.0.0", log).join(), /no "## \[9\.0\.0\] - YYYY-MM-DD" section/);
  });
  await t.step(
    "prepare: Unreleased becomes the version's dated section, linked to the previous release",
    () => {
      const log = "# C\n\n## [Unreleased]\n\n### Added\n\n- y\n\n## [1.2.3] - 2026-01-02\n\n- x\n\n" +
        "[Unreleased]: ../../compare/v1.2.3...HEAD\n[1.2.3]: ../../releases/tag/v1.2.3\n";
      const next = releaseChangelog(log, "1.3.0", "2026-02-03");
      assert.equal(changelogSection(next, "1.3.0"), "### Added\n\n- y");
      assert.deepEqual(releaseProblems("v1.3.0", "1.3.0", next), []);
      assert.match(next, /^## \[Unreleased\]\n\n## \[1\.3\.0\] - 2026-02-03$/m);
      assert.ok(
        next.includes("[Unreleased]: ../../compare/v1.3.0...HEAD\n[1.3.0]: ../../compare/v1.2.3...v1.3.0\n"),
      );
      assert.throws(() => releaseChangelog(next, "1.3.0", "2026-02-03"), /already has 1\.3\.0/);
      assert.throws(() => releaseChangelog(log, "1.3.0", "3 Feb"), /not YYYY-MM-DD/);
    },
  );
  await t.step(
    "this tree: a changelog section for its version or an Unreleased one, and the tagged ones",
    () => {
      const { version } = JSON.parse(read("deno.json"));
      const log = read("CHANGELOG.md");
      assert.ok(
        changelogSection(log, version) !== undefined || /^## \[Unreleased\]$/m.test(log),
        `CHANGELOG.md has neither a section for ${version} nor [Unreleased]`,
      );
      assert.ok(changelogSection(log, "0.1.0"), "the first release's section");
    },
  );
  await t.step("the archive holds the plugin's modules, not tests or test helpers", () => {
    const info = {
      modules: ["cli/main.ts", "lib/kube/mod.ts", "cli/main_test.ts", "lib/testing/app.ts", "deno.json"].map((
        p,
      ) => ({
        specifier: `file:///r/${p}`,
      })).concat([{ specifier: "npm:yaml@2.9.1" }]),
    };
    assert.deepEqual(localModules(info, "/r"), ["cli/main.ts", "deno.json", "lib/kube/mod.ts"]);
  });
});
