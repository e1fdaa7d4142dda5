/**
 * Running a program from a test and reading what it printed.
 *
 * @module
 */

/** What a command printed and how it ended. */
export interface CommandRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@linkcode runCommand}. */
export interface RunOptions {
  readonly cwd?: string;
  /** Added to the inherited environment. */
  readonly env?: Record<string, string>;
  /** Written to the program's standard input, which is closed after it; without it there is none. */
  readonly stdin?: string;
}

/**
 * Runs `program` with `args` to its end and returns its exit code and output as text.
 *
 * @example
 * ```ts
 * const run = await runCommand("kubectl", ["apply", "-f", "-"], { stdin: yaml });
 * if (run.code !== 0) throw new Error(run.stderr);
 * ```
 */
export async function runCommand(
  program: string,
  args: readonly string[],
  options: RunOptions = {},
): Promise<CommandRun> {
  const child = new Deno.Command(program, {
    args: [...args],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.env ? { env: options.env } : {}),
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (options.stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(options.stdin));
    await writer.close();
  }
  const out = await child.output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}
