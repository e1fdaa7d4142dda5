/**
 * CHANGELOG.md in the Keep a Changelog form: its sections by version, and the checks a release makes of it.
 *
 * @module
 */

/** The section of `version` (its text without the heading), or `undefined`. */
export function changelogSection(changelog: string, version: string): string | undefined {
  const heading = new RegExp(`^## \\[${version.replaceAll(".", "\\.")}\\] - \\d{4}-\\d{2}-\\d{2}$`, "m");
  const at = changelog.search(heading);
  if (at < 0) return undefined;
  const rest = changelog.slice(at).split("\n").slice(1).join("\n");
  const end = rest.search(/^(## \[|\[[^\]]+\]: )/m);
  return (end < 0 ? rest : rest.slice(0, end)).trim();
}

/** What is wrong with releasing `version` as git tag `tag`, given the changelog: nothing when empty. */
export function releaseProblems(tag: string, version: string, changelog: string): string[] {
  const problems: string[] = [];
  if (tag !== `v${version}`) problems.push(`the tag ${tag} is not v${version}, deno.json's version`);
  const section = changelogSection(changelog, version);
  if (section === undefined) problems.push(`CHANGELOG.md has no "## [${version}] - YYYY-MM-DD" section`);
  else if (!section) problems.push(`CHANGELOG.md's section of ${version} is empty`);
  if (!new RegExp(`^\\[${version.replaceAll(".", "\\.")}\\]: `, "m").test(changelog)) {
    problems.push(`CHANGELOG.md has no link for [${version}]`);
  }
  return problems;
}

/**
 * The changelog at the release of `version` on `date` (YYYY-MM-DD): the Unreleased section becomes the version's
 * under a new empty Unreleased one, and the links compare it with the previous release.
 *
 * @example
 * ```ts
 * releaseChangelog(text, "0.2.0", "2026-12-01");
 * ```
 */
export function releaseChangelog(changelog: string, version: string, date: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`the date ${date} is not YYYY-MM-DD`);
  if (changelogSection(changelog, version) !== undefined) {
    throw new Error(`CHANGELOG.md already has ${version}`);
  }
  if (!/^## \[Unreleased\]$/m.test(changelog)) throw new Error("CHANGELOG.md has no [Unreleased] section");
  const previous = changelog.match(/^## \[(\d+\.\d+\.\d+[^\]]*)\] - /m)?.[1];
  const released = changelog.replace(/^## \[Unreleased\]$/m, `## [Unreleased]\n\n## [${version}] - ${date}`);
  const links = released.replace(/^\[Unreleased\]: .*$/m, `[Unreleased]: ../../compare/v${version}...HEAD`);
  const link = previous
    ? `[${version}]: ../../compare/v${previous}...v${version}`
    : `[${version}]: ../../releases/tag/v${version}`;
  return links.replace(/^(\[Unreleased\]: .*)$/m, `$1\n${link}`);
}
