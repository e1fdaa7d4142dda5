/**
 * No parse of foreign bytes outside the door (issue #55): every `JSON.parse`, body `.json()` and YAML parse in
 * product code (the entry points, `hooks/`, `lib/`, `cli/`) must be in `lib/foreign`, where the bytes are charged
 * to a heap budget before they are parsed or projected to what is kept, or be listed in {@linkcode ALLOWED} with
 * why its bytes are not foreign. A new parse anywhere else fails `deno task ok` and CI.
 *
 *   npx -y deno@2.9.6 run --allow-read tools/foreign_parse_check.ts
 *
 * What it forbids, and why:
 * - `JSON.parse(...)`: one builtin call a heap limit cannot stop halfway (88 bytes of heap per byte of `{},`);
 * - `.json()` on a Request or Response: the same parse, of bytes read whole first;
 * - `parse`, `parseDocument`, `parseAllDocuments`, `Parser`, `Lexer` and `Composer` of the `yaml` package: up to
 *   2,136 bytes of heap per byte of text (`lib/foreign/yaml.ts`).
 *
 * @module
 */

/** A file that may parse, how many times, and why its bytes are not a stranger's. */
export interface AllowedParse {
  readonly file: string;
  readonly count: number;
  readonly why: string;
}

/** Every parse outside `lib/foreign` that is allowed, and why. */
export const ALLOWED: readonly AllowedParse[] = [
  {
    file: "lib/foreign/door.ts",
    count: 1,
    why: "the door itself: bytes charged to a heap budget first, or projected",
  },
  { file: "lib/foreign/yaml.ts", count: 1, why: "the door for YAML: bounded in length and charged first" },
  {
    file: "lib/foreign/json_cost_measure.ts",
    count: 1,
    why: "measures the parse of shapes it builds itself (run by json_cost_test.ts in a process of its own)",
  },
  {
    file: "lib/kube/config.ts",
    count: 1,
    why:
      "the operator's own KUBECONFIG file; a tenant's kubeconfig is read with options.parse = parseForeignYaml",
  },
  {
    file: "hooks/tenantcluster/reservations.ts",
    count: 1,
    why:
      "the quota ledger's data, which only the webhook's ServiceAccount may write (the butler-quota-ledger policy)",
  },
  {
    file: "hooks/tenantcluster/record.ts",
    count: 1,
    why:
      "a TenantCluster's quota record, a child only Metacontroller writes from the hook's answer (team roles cannot write ConfigMaps), read in a hook worker",
  },
  {
    file: "hooks/networkpool/registry.ts",
    count: 1,
    why: "the pool registry's data, which only the webhook's ServiceAccount may write (the same policy)",
  },
  {
    file: "lib/kubectl_yaml/documents.ts",
    count: 2,
    why: "plan: the files of the user's own repository, read as kubectl reads them, on their machine",
  },
  { file: "lib/plan/files.ts", count: 1, why: "plan: the shipped manifests and the user's own files" },
  { file: "lib/plan/plan.ts", count: 1, why: "plan: the user's own fixture and export files" },
  { file: "plan.ts", count: 1, why: "plan: the user's own results file" },
  { file: "cli/connection.ts", count: 1, why: "kubectl butler: the user's own kubectl's output" },
  { file: "cli/commands.ts", count: 1, why: "kubectl butler: a ledger file the user names" },
];

/** A parse found where it is not allowed. */
export interface ForeignParse {
  readonly file: string;
  readonly line: number;
  readonly text: string;
}

const YAML_PARSERS = new Set(["parse", "parseDocument", "parseAllDocuments", "Parser", "Lexer", "Composer"]);

/** The source without comments (their lines kept, so line numbers hold). */
function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/[^\n]*/g, "$1");
}

/** The names a file imports from the `yaml` package that parse. */
function yamlParsers(text: string): string[] {
  const names: string[] = [];
  for (
    const m of text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*["'](?:npm:)?yaml(?:@[^"']*)?["']/g)
  ) {
    for (const part of m[1]!.split(",")) {
      const [name, alias] = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
      if (name && YAML_PARSERS.has(name) && !/^type\s/.test(part.trim())) names.push(alias ?? name);
    }
  }
  for (
    const m of text.matchAll(/import\s+(?:\*\s+as\s+)?(\w+)\s+from\s*["'](?:npm:)?yaml(?:@[^"']*)?["']/g)
  ) {
    names.push(`${m[1]}.parse`, `${m[1]}.parseDocument`, `${m[1]}.parseAllDocuments`);
  }
  return names;
}

/**
 * Every parse in `text` (the source of `file`): `JSON.parse(`, `.json()`, and calls of the YAML parsers it imports.
 *
 * @example
 * ```ts
 * parsesIn("lib/x.ts", "const v = JSON.parse(text);"); // [{ file: "lib/x.ts", line: 1, text: "JSON.parse(" }]
 * ```
 */
export function parsesIn(file: string, text: string): ForeignParse[] {
  const source = withoutComments(text);
  const patterns = [
    /\bJSON\s*\.\s*parse\s*\(/g,
    /\.json\s*\(\s*\)/g,
    ...yamlParsers(source).map((name) =>
      new RegExp(`(?<![\\w$.])${name.replace(/[.$]/g, (c) => `\\${c}`)}\\s*\\(`, "g")
    ),
  ];
  const found: ForeignParse[] = [];
  for (const pattern of patterns) {
    for (const m of source.matchAll(pattern)) {
      const line = source.slice(0, m.index).split("\n").length;
      // An import line names the parser; only its calls parse.
      if (/^\s*import\b/.test(source.split("\n")[line - 1]!)) continue;
      found.push({ file, line, text: m[0] });
    }
  }
  return found.sort((a, b) => a.line - b.line);
}

/** Whether a path is product code: the entry points, `hooks/`, `lib/` (not its test helpers) and `cli/`. */
export function isProduct(path: string): boolean {
  if (/_test\.ts$/.test(path) || path.startsWith("lib/testing/")) return false;
  return /^(hooks|lib|cli)\/.*\.ts$/.test(path) || /^(main|server|reporter|worker|plan)\.ts$/.test(path);
}

/**
 * The parses of `files` (path to source) that are not allowed: in a file not listed, or more than its count; and
 * the listed files whose count is more than they hold (a list that outlives its reasons is no list).
 *
 * @example
 * ```ts
 * forbiddenParses(new Map([["lib/x.ts", "JSON.parse(t)"]])); // one ForeignParse
 * ```
 */
export function forbiddenParses(
  files: ReadonlyMap<string, string>,
  allowed: readonly AllowedParse[] = ALLOWED,
): ForeignParse[] {
  const bad: ForeignParse[] = [];
  for (const [file, text] of files) {
    if (!isProduct(file)) continue;
    const found = parsesIn(file, text);
    const room = allowed.find((a) => a.file === file)?.count ?? 0;
    if (found.length > room) bad.push(...found.slice(room));
  }
  for (const a of allowed) {
    const held = files.has(a.file) ? parsesIn(a.file, files.get(a.file)!).length : 0;
    if (held < a.count) {
      bad.push({ file: a.file, line: 0, text: `allowed ${a.count} parse(s), holds ${held}` });
    }
  }
  return bad;
}

function walk(dir: string, root: string, out: Map<string, string>): void {
  for (const entry of Deno.readDirSync(`${root}/${dir}`)) {
    const path = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory && !entry.name.startsWith(".")) walk(path, root, out);
    else if (entry.isFile && isProduct(path)) out.set(path, Deno.readTextFileSync(`${root}/${path}`));
  }
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname.replace(/\/$/, "");
  const files = new Map<string, string>();
  for (const dir of ["hooks", "lib", "cli"]) walk(dir, root, files);
  for (const f of ["main.ts", "server.ts", "reporter.ts", "worker.ts", "plan.ts"]) {
    files.set(f, Deno.readTextFileSync(`${root}/${f}`));
  }
  const bad = forbiddenParses(files);
  for (const b of bad) {
    console.log(`${b.file}:${b.line}: ${b.text} outside the door for foreign bytes (lib/foreign)`);
  }
  console.log(
    bad.length
      ? `${bad.length} parse(s) of possibly foreign bytes outside lib/foreign: charge them through parseForeign/` +
        `projectForeign, or add the file to ALLOWED in tools/foreign_parse_check.ts with why its bytes are not foreign`
      : `no parse of foreign bytes outside lib/foreign (${files.size} product files; ${ALLOWED.length} allowed)`,
  );
  if (bad.length) Deno.exit(1);
}
