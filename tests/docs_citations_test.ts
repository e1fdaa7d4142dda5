/**
 * Every section a comment or a page cites exists. Comments in the manifests, examples, Dockerfile, CI script and
 * code cite a page as `docs/<page>.md` (or `README.md`) and a section as `docs/<page>.md#<anchor>`: each page exists
 * and each anchor is a heading of it. A section cited by its name (`README, Security`, `docs/x.md, "Some title"`),
 * or "the README" alone, cannot be checked, and moved once without anyone noticing: it is refused here. The README's and docs/' own links
 * (`[text](page.md#anchor)`, `[text](#anchor)`) resolve the same way.
 */
import assert from "node:assert/strict";

const root = new URL("../", import.meta.url).pathname;
const SKIP = new Set(["node_modules", ".git", "fixtures", "golden"]);

/** The files whose comments cite the docs: code, manifests, examples, the Dockerfile, the CI script, deno.json. */
function citingFiles(dir = ""): string[] {
  return [...Deno.readDirSync(`${root}${dir}`)].flatMap((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (SKIP.has(e.name) || path === "docs" || path === "tests/docs_citations_test.ts") return [];
    if (e.isDirectory) return citingFiles(path);
    return /\.(ts|ya?ml|json)$|^Dockerfile$|^\.dockerignore$|^run$/.test(e.name) ? [path] : [];
  });
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes. */
function slug(heading: string): string {
  return heading.toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-");
}

const anchorsOf = new Map<string, Set<string>>();
/** The anchors of a page's headings, or `undefined` when the page does not exist. */
function anchors(page: string): Set<string> | undefined {
  if (!anchorsOf.has(page)) {
    let text: string;
    try {
      text = Deno.readTextFileSync(`${root}${page}`);
    } catch {
      return undefined;
    }
    anchorsOf.set(page, new Set([...text.matchAll(/^#{1,4} (.+)$/gm)].map((m) => slug(m[1]!))));
  }
  return anchorsOf.get(page);
}

/** The page a citation names, from the repository root: `README`, `docs/x.md`, or `x.md` meaning `docs/x.md`. */
function pageOf(name: string): string {
  if (name === "README" || name === "README.md") return "README.md";
  return name.startsWith("docs/") ? name : `docs/${name}`;
}

const CITATION =
  /\b(README(?:\.md)?|docs\/[\w-]+\.md|[\w-]+\.md)(#[\w-]+|, "[^"]+"|, [A-Z][\w ]+|: "[^"]+"| \("[^"]+"\))?/g;

Deno.test("every docs page and section a comment cites exists, and sections are cited by anchor", () => {
  const problems: string[] = [];
  let cited = 0;
  for (const file of citingFiles()) {
    const text = Deno.readTextFileSync(`${root}${file}`);
    for (const m of text.matchAll(CITATION)) {
      const [, name, section] = m;
      // Names of other projects' files (CHANGELOG.md of a dependency, a Go module's README) are not ours.
      if (!/^(README|docs\/|[a-z-]+\.md)/.test(name!) || /^(CHANGELOG|SECURITY|LICENSE)/.test(name!)) {
        continue;
      }
      const page = pageOf(name!);
      const line = text.slice(0, m.index).split("\n").length;
      const where = `${file}:${line}: ${m[0]}`;
      const known = anchors(page);
      if (!known) {
        if (name!.includes("/") || name!.startsWith("README")) {
          problems.push(`${where}: ${page} does not exist`);
        }
        continue;
      }
      cited++;
      if (section?.startsWith("#")) {
        if (!known.has(section.slice(1))) problems.push(`${where}: ${page} has no heading ${section}`);
      } else if (section) problems.push(`${where}: cite the section as ${page}#<anchor>`);
      // In what an operator reads (the manifests, the examples, the Dockerfile), "(README)" points at a page of a
      // hundred lines that keeps little itself: say where.
      else if (name === "README" && /^(manifests|examples)\/|^Dockerfile$/.test(file)) {
        problems.push(`${where}: cite the page as README.md, or a section of it`);
      }
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(cited >= 30, `${cited} citations`);
});

Deno.test("every link of the README and docs/ to a section resolves", () => {
  const pages = ["README.md", ...[...Deno.readDirSync(`${root}docs`)].map((e) => `docs/${e.name}`)]
    .filter((p) => p.endsWith(".md")).sort();
  const problems: string[] = [];
  let links = 0;
  for (const page of pages) {
    const text = Deno.readTextFileSync(`${root}${page}`);
    for (const m of text.matchAll(/\]\(([\w./-]*\.md)?#([\w-]+)\)/g)) {
      links++;
      const target = m[1]
        ? (page === "README.md" ? m[1]! : m[1]!.startsWith("../") ? m[1]!.slice(3) : `docs/${m[1]}`)
        : page;
      const known = anchors(target);
      if (!known?.has(m[2]!)) problems.push(`${page}: ${m[0]}: no heading #${m[2]} in ${target}`);
    }
  }
  assert.deepEqual(problems, []);
  assert.ok(links >= 20, `${links} links`);
});
