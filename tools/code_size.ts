/**
 * The longest product functions and files, against the limits the codebase keeps (a function of at most 80 lines,
 * a file of at most 400, unless the README's layout section says why one is better whole).
 *
 *   npx -y deno@2.9.6 run --allow-read tools/code_size.ts [--top=20] [--check]
 *
 * Product code is what the image ships and the plugin runs: the entry points, `hooks/`, `lib/` and `cli/`,
 * without tests, benchmarks and test helpers. `--check` exits 1 when anything is over a limit.
 *
 * Functions are found by their `deno fmt` layout: a `function` declaration, a method, or a `const` bound to an
 * arrow function or function expression whose body opens on its first line, ending at the first line that closes
 * it at the same indentation.
 *
 * @module
 */

/** The limits. */
export const MAX_FUNCTION_LINES = 80;
export const MAX_FILE_LINES = 400;

/** One function as measured: its name, first line (1-based) and length in lines, first and last included. */
export interface MeasuredFunction {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** `const name = (` with the parameters on the next lines: a function when they close with `) => {`. */
const MULTILINE_ARROW = /^(\s*)(?:export\s+)?const\s+([\w$]+)\s*=\s*(?:async\s+)?(?:<[^>]*>)?\(\s*$/;
const OPENERS = [
  /^(\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s*([\w$]+)\s*[<(]/,
  /^(\s*)(?:export\s+)?(?:const|let)\s+([\w$]+)\s*(?::[^=]+)?=\s*(?:async\s+)?(?:function\b|(?:<[^>]*>)?\([^)]*\)?[^=]*=>\s*[{(]?\s*$|[\w$]+\s*=>\s*[{(]?\s*$|(?:<[^>]*>)?\(.*\)\s*(?::\s*[^=]+)?=>\s*\{\s*$)/,
  /^(\s+)(?:(?:public|private|protected|static|readonly|override|async|get|set)\s+)*(#?[\w$]+)\s*(?:<[^>]*>)?\([^;]*\)\s*(?::\s*[^={;]+)?\{\s*$/,
];
const KEYWORDS = new Set([
  "if",
  "for",
  "while",
  "switch",
  "catch",
  "return",
  "function",
  "else",
  "do",
  "try",
]);

/**
 * The functions of one source text, in order.
 *
 * @example
 * ```ts
 * measureFunctions("function a() {\n  return 1;\n}\n"); // [{ name: "a", line: 1, lines: 3 }]
 * ```
 */
export function measureFunctions(text: string): MeasuredFunction[] {
  const lines = text.split("\n");
  const found: MeasuredFunction[] = [];
  lines.forEach((line, i) => {
    const multi = MULTILINE_ARROW.exec(line);
    if (multi) {
      const indent = multi[1]!;
      const signatureEnd = lines.findIndex((l, j) => j > i && l.startsWith(`${indent})`));
      if (signatureEnd > 0 && /=>\s*\{\s*$/.test(lines[signatureEnd]!)) {
        const end = lines.findIndex((l, j) => j > signatureEnd && l.startsWith(`${indent}}`));
        found.push({ name: multi[2]!, line: i + 1, lines: (end < 0 ? signatureEnd : end) - i + 1 });
      }
      return;
    }
    for (const opener of OPENERS) {
      const m = opener.exec(line);
      if (!m || KEYWORDS.has(m[2]!)) continue;
      const indent = m[1]!;
      // The body closes where a line at the opener's indentation starts with a closing brace (a parameter list
      // over several lines closes with a parenthesis first).
      const close = new RegExp(`^${indent}}`);
      // An arrow whose body is an expression on the next lines ends with the statement, at most one level in.
      const expression = /=>\s*$/.test(line);
      const statementEnd = new RegExp(`^${indent}(?:  )?\\S.*;\\s*$`);
      let end = i;
      if (!/[;,]\s*$/.test(line)) {
        for (let j = i + 1; j < lines.length; j++) {
          if (expression ? statementEnd.test(lines[j]!) : close.test(lines[j]!)) {
            end = j;
            break;
          }
        }
      }
      found.push({ name: m[2]!, line: i + 1, lines: end - i + 1 });
      return;
    }
  });
  return found;
}

/** Whether a path is product code (see the module doc). */
export function isProduct(path: string): boolean {
  if (!path.endsWith(".ts") || /(_test|_bench|_fixture)\.ts$/.test(path)) return false;
  if (/^(main|server|reporter|worker|plan)\.ts$/.test(path)) return true;
  return /^(hooks|lib|cli)\//.test(path) && !path.startsWith("lib/testing/");
}

function* walk(dir: string, prefix = ""): Generator<string> {
  for (const entry of Deno.readDirSync(dir)) {
    const path = `${prefix}${entry.name}`;
    if (entry.isDirectory) yield* walk(`${dir}/${entry.name}`, `${path}/`);
    else yield path;
  }
}

if (import.meta.main) {
  const root = new URL("..", import.meta.url).pathname;
  const top = Number(Deno.args.find((a) => a.startsWith("--top="))?.slice(6) ?? 20);
  const files = [...walk(root)].filter(isProduct).sort().map((path) => {
    const text = Deno.readTextFileSync(`${root}${path}`);
    return { path, lines: text.split("\n").length - 1, functions: measureFunctions(text) };
  });
  const functions = files.flatMap((f) => f.functions.map((fn) => ({ ...fn, path: f.path })))
    .sort((a, b) => b.lines - a.lines);
  const longFiles = files.filter((f) => f.lines > MAX_FILE_LINES).sort((a, b) => b.lines - a.lines);
  const longFunctions = functions.filter((f) => f.lines > MAX_FUNCTION_LINES);
  console.log(`${files.length} product files, ${functions.length} functions`);
  console.log(`\nfiles over ${MAX_FILE_LINES} lines: ${longFiles.length}`);
  for (const f of longFiles) console.log(`${String(f.lines).padStart(6)}  ${f.path}`);
  console.log(`\nfunctions over ${MAX_FUNCTION_LINES} lines: ${longFunctions.length}; the longest ${top}:`);
  for (const f of functions.slice(0, top)) {
    console.log(`${String(f.lines).padStart(6)}  ${f.name} (${f.path}:${f.line})`);
  }
  if (Deno.args.includes("--check") && (longFiles.length || longFunctions.length)) Deno.exit(1);
}
