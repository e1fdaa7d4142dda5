/**
 * What every `kubectl butler` command shares: its I/O, the flags, usage errors, output forms and the API
 * connection. Commands are in {@link ./commands.ts}; the program in {@link ./main.ts}.
 *
 * @module
 */
import type { parseArgs } from "node:util";
import { stringify } from "yaml";
import { KubeApiError, type KubeClient } from "../lib/kube/mod.ts";
import type { Paint } from "./colour.ts";
import type { ConnectionFlags } from "./connection.ts";

/** Where a run writes and how it reaches the API (tests pass their own). */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Opens the API client and names the context's namespace. */
  readonly connect: (flags: ConnectionFlags) => { kube: KubeClient; namespace: string };
  /** The program's name as invoked (`kubectl butler` or `butleradm`). */
  readonly name: string;
  /** Colour for standard output (plain unless it is a terminal and NO_COLOR is unset). */
  readonly paint?: Paint;
  /** Writes a file a command was asked to write (`--svg FILE`). */
  readonly writeFile: (path: string, text: string) => void;
  /** Reads a file a command was given (`-f FILE`), and standard input (`-f -`). */
  readonly readFile: (path: string) => string;
  readonly readStdin: () => Promise<string>;
  /** Runs `plan` with its own arguments (plan.ts); resolves to its exit code. */
  readonly plan: (args: readonly string[]) => Promise<number>;
}

/** A usage error: printed with a pointer to the help, exit code 2. */
export class UsageError extends Error {}

/** Every flag of every command (node:util parseArgs), kubectl's spelling. */
export const OPTIONS = {
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string", short: "n" },
  as: { type: "string" },
  "as-group": { type: "string", multiple: true },
  output: { type: "string", short: "o" },
  help: { type: "boolean", short: "h" },
  to: { type: "string" },
  team: { type: "string" },
  selector: { type: "string", short: "l" },
  unlabelled: { type: "boolean" },
  "dry-run": { type: "boolean" },
  svg: { type: "string" },
  filename: { type: "string", short: "f" },
  v1: { type: "boolean" },
  description: { type: "string" },
  "max-clusters": { type: "string" },
  "max-clusters-per-member": { type: "string" },
  environment: { type: "string" },
  version: { type: "string" },
  workers: { type: "string" },
  cpu: { type: "string" },
  memory: { type: "string" },
  disk: { type: "string" },
  provider: { type: "string" },
} as const;

/** The parsed flags. */
export type Values = ReturnType<
  typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>
>["values"];

/** `-o`, one of the forms a command prints (text unless asked), or a usage error naming them. */
export function outputOf<T extends string>(values: Values, forms: readonly T[]): T {
  const output = values.output ?? "text";
  if (!forms.includes(output as T)) {
    throw new UsageError(
      `--output must be ${forms.slice(0, -1).join(", ")} or ${forms.at(-1)}, not "${output}"`,
    );
  }
  return output as T;
}

/** A value as JSON or YAML for scripts (kubectl's -o json|yaml). */
export function structured(value: unknown, output: "json" | "yaml"): string {
  return output === "json" ? JSON.stringify(value, null, 2) + "\n" : stringify(value);
}

/** Opens the API with the connection flags. */
export function connect(values: Values, io: CliIo): { kube: KubeClient; namespace: string } {
  return io.connect({
    ...(values.kubeconfig ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context ? { context: values.context } : {}),
    ...(values.as ? { as: values.as } : {}),
    ...(values["as-group"] ? { asGroups: values["as-group"] } : {}),
  });
}

/**
 * A refusal of a request (the API answered 4xx: admission, RBAC, a conflict), in the API server's words;
 * `undefined` for any other failure, which is not an answer about the request.
 *
 * @example
 * ```ts
 * refusal(new KubeApiError(403, "Forbidden", "alice cannot update teams", "/apis/...")); // "alice cannot update teams"
 * ```
 */
export function refusal(err: unknown): string | undefined {
  return err instanceof KubeApiError && err.status >= 400 && err.status < 500
    ? err.detail || `${err.status} ${err.reason}`
    : undefined;
}

/** A count flag: a whole number >= 0, or a usage error naming the flag. */
export function count(values: Values, flag: "max-clusters" | "max-clusters-per-member"): number | undefined {
  const text = values[flag];
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text)) throw new UsageError(`--${flag} must be a whole number >= 0, not "${text}"`);
  return Number(text);
}
