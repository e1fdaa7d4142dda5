/**
 * Strings a repository controls (kinds, names, file names, messages that quote them) made safe to print on one
 * line of a terminal or a CI log: no control character, line break or bidirectional override reaches the output
 * raw, and no line can be read as a GitHub Actions workflow command (`::error ...`) or an Azure Pipelines logging
 * command (`##[...]`), which their runners recognise after leading blanks.
 *
 * @module
 */

/** Control characters (C0, DEL, C1), line and paragraph separators, and the bidirectional controls. */
// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * A string with every unsafe character written as an escape (`\n`, `\t`, `\x1b`, `\u202e`).
 *
 * @example
 * ```ts
 * escapeControl("Team\n::error::x"); // "Team\\n::error::x"
 * ```
 */
export function escapeControl(s: string): string {
  return s.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ??
      (code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`);
  });
}

/** A runner command at the start of a line, after blanks. */
const COMMAND = /^(\s*)(::|##\[)/;

/**
 * One printed line made safe: unsafe characters escaped, and a line that a CI runner would take as a command
 * (`::`, `##[` after blanks) has its first character escaped (`\x3a:`, `\x23#[`).
 *
 * @example
 * ```ts
 * safeLine("  ::error title=x::y"); // "  \\x3a:error title=x::y"
 * ```
 */
export function safeLine(line: string): string {
  return escapeControl(line).replace(
    COMMAND,
    (_, blanks: string, cmd: string) => `${blanks}\\x${cmd.charCodeAt(0).toString(16)}${cmd.slice(1)}`,
  );
}

/**
 * A short, escaped excerpt of a tenant's string for a message: at most `max` characters, then `...`.
 *
 * @example
 * ```ts
 * snippet("a".repeat(100), 10); // "aaaaaaaaaa..."
 * ```
 */
export function snippet(s: string, max = 40): string {
  const cut = [...s];
  return escapeControl(cut.length > max ? `${cut.slice(0, max).join("")}...` : s);
}

/** What JSON and YAML leave raw in a string that a terminal or a runner acts on: DEL, C1, separators, bidi. */
const RAW_IN_QUOTES = /[\u007f-\u009f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * JSON or YAML text with the characters it leaves raw inside quoted strings written as `\uXXXX` escapes (valid in
 * a JSON string and a YAML double-quoted scalar, which is where the caller must have put them).
 *
 * @example
 * ```ts
 * escapeQuoted(JSON.stringify({ name: "\u202eab" })); // '{"name":"\\u202eab"}'
 * ```
 */
export function escapeQuoted(text: string): string {
  return text.replace(RAW_IN_QUOTES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** Whether a string must be double-quoted in YAML output: it holds an unsafe character or starts a runner command. */
export function needsQuoting(s: string): boolean {
  UNSAFE.lastIndex = 0;
  const unsafe = UNSAFE.test(s);
  UNSAFE.lastIndex = 0;
  return unsafe || /^\s*(::|##\[)/.test(s);
}
