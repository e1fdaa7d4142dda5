/**
 * `kubectl butler` (and `butleradm`, the name Butler's admission messages use): the kubectl plugin for what
 * Butler's API does not do in one `kubectl` call. Commands: `env list|add|remove|migrate`, `cluster create`,
 * `pool show`, `team usage`, `ledger`, `plan`. It follows kubectl's conventions: its connection flags, `-o json`,
 * errors on stderr, exit code 0 when everything asked was done, 1 when something was refused or failed, 2 for a
 * usage error.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { createKubeClient } from "../lib/kube/mod.ts";
import { paintFor } from "./colour.ts";
import { type CliIo, OPTIONS, UsageError } from "./command.ts";
import { COMMANDS, ONE_WORD_COMMANDS } from "./commands.ts";
import { openConnection } from "./connection.ts";
import { HELP } from "./help.ts";

export type { CliIo } from "./command.ts";

/**
 * Runs one command line; resolves to the exit code.
 *
 * @example
 * ```ts
 * const code = await runCli(["env", "migrate", "c1", "--to", "prod", "-n", "team-a"], io);
 * ```
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const help = (key: string) => HELP[key]!.replaceAll("{name}", io.name) + "\n";
  // plan has flags of its own (plan.ts): it gets the command line as it is.
  if (argv[0] === "plan") return await io.plan(argv.slice(1));
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\nSee "${io.name} --help".\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, sub, ...rest] = positionals;
  const key = [command, sub].filter((w) => w !== undefined).join(" ");
  if (values.help) {
    const known = HELP[key] !== undefined ? key : HELP[command ?? ""] !== undefined ? command ?? "" : "";
    io.stdout(help(known));
    return 0;
  }
  try {
    const run = COMMANDS[key];
    if (run) return await run(rest, values, io);
    const oneWord = ONE_WORD_COMMANDS[command ?? ""];
    if (oneWord) return await oneWord([sub, ...rest].filter((w) => w !== undefined), values, io);
    if (command === undefined) {
      io.stdout(help(""));
      return 0;
    }
    throw new UsageError(`unknown command "${key}"`);
  } catch (err) {
    if (err instanceof UsageError) {
      const topic = key in HELP ? key : command !== undefined && command in HELP ? command : "";
      io.stderr(`error: ${err.message}\nSee "${io.name} ${topic ? `${topic} ` : ""}--help".\n`);
      return 2;
    }
    io.stderr(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** The real I/O: the terminal and the kubeconfig. */
export function terminalIo(name: string): CliIo {
  const encoder = new TextEncoder();
  return {
    name,
    paint: paintFor(Deno.stdout.isTerminal(), Deno.env.get("NO_COLOR")),
    stdout: (text) => Deno.stdout.writeSync(encoder.encode(text)),
    stderr: (text) => Deno.stderr.writeSync(encoder.encode(text)),
    readFile: (path) => Deno.readTextFileSync(path),
    readStdin: () => new Response(Deno.stdin.readable).text(),
    async plan() {
      // plan.ts reads Deno.args after its command word ("plan") and exits with its own code.
      await import("../plan.ts");
      return 0;
    },
    writeFile(path, text) {
      try {
        Deno.writeTextFileSync(path, text);
      } catch (err) {
        // The launcher lets the plugin write under the current directory (and the temporary one, for plan) only.
        throw new Error(
          err instanceof Deno.errors.NotCapable
            ? `cannot write ${path}: the plugin writes only under the current directory (and the temporary one)`
            : `cannot write ${path}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    },
    connect(flags) {
      const opened = openConnection(flags);
      // A person waits on the answer: one retry, and a timeout long enough for a slow webhook.
      return {
        kube: createKubeClient(opened.connection, { timeoutMs: 15_000, retries: 1 }),
        namespace: opened.namespace,
      };
    },
  };
}

if (import.meta.main) {
  // Installed as kubectl-butler (kubectl runs it as "kubectl butler") and as butleradm: the same program.
  Deno.exit(await runCli(Deno.args, terminalIo("kubectl butler")));
}
