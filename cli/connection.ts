/**
 * The CLI's API connection, as kubectl makes it: `--kubeconfig`, else the first file of `KUBECONFIG`, else
 * `~/.kube/config`; `--context`; `--as` and `--as-group` (impersonation); and the credentials users have: tokens,
 * client certificates (inline or files), token files and `exec` credential plugins (the usual case on managed
 * clusters). The plugin runner is the only part that starts a program.
 *
 * @module
 */
import { z } from "zod";
import {
  type ExecConfig,
  type ExecCredentialStatus,
  kubeconfigConnection,
  type KubeConnection,
} from "../lib/kube/mod.ts";

/** Connection flags, as kubectl spells them. */
export interface ConnectionFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly as?: string;
  readonly asGroups?: readonly string[];
}

/** What a CLI command gets: the connection and the namespace of the context (kubectl's default). */
export interface CliConnection {
  readonly connection: KubeConnection;
  readonly namespace: string;
  readonly source: string;
}

/** Where the kubeconfig is: the flag, `KUBECONFIG`'s first file, or `~/.kube/config`. */
export function kubeconfigPath(flag: string | undefined, env: (name: string) => string | undefined): string {
  if (flag) return flag;
  const listed = env("KUBECONFIG")?.split(":").find((p) => p.length > 0);
  if (listed) return listed;
  const home = env("HOME");
  if (!home) throw new Error("no kubeconfig: set --kubeconfig or KUBECONFIG (HOME is not set either)");
  return `${home}/.kube/config`;
}

/** Impersonation headers for `--as` and `--as-group` (the API server checks the caller may impersonate). */
export function impersonationHeaders(flags: ConnectionFlags): Record<string, string> | undefined {
  if (!flags.as && !flags.asGroups?.length) return undefined;
  if (!flags.as) throw new Error("--as-group needs --as (the API server impersonates a user with groups)");
  // The API server takes each group from a header line of its own, and Deno's fetch joins repeated headers into
  // one line ("a, b"), which would impersonate a single group of that name: refuse rather than act as someone else.
  if ((flags.asGroups?.length ?? 0) > 1) {
    throw new Error("one --as-group at most: this client cannot send several impersonated groups");
  }
  return {
    "Impersonate-User": flags.as,
    ...(flags.asGroups?.length ? { "Impersonate-Group": flags.asGroups[0]! } : {}),
  };
}

const ExecCredential = z.object({
  status: z.object({
    token: z.string().min(1).optional(),
    clientCertificateData: z.string().optional(),
    clientKeyData: z.string().optional(),
    expirationTimestamp: z.string().optional(),
  }),
});

/**
 * Runs an `exec` credential plugin as client-go does: the command with its arguments and extra environment, and
 * `KUBERNETES_EXEC_INFO` describing the request (not interactive). Its error output goes to the terminal.
 */
export function runCredentialPlugin(config: ExecConfig): ExecCredentialStatus {
  const apiVersion = config.apiVersion ?? "client.authentication.k8s.io/v1";
  let out: Deno.CommandOutput;
  try {
    out = new Deno.Command(config.command, {
      args: [...(config.args ?? [])],
      env: {
        ...Object.fromEntries((config.env ?? []).map((e) => [e.name, e.value])),
        KUBERNETES_EXEC_INFO: JSON.stringify({
          apiVersion,
          kind: "ExecCredential",
          spec: { interactive: false },
        }),
      },
      stdin: "null",
      stdout: "piped",
      stderr: "inherit",
    }).outputSync();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) {
      throw new Error(
        `credential plugin "${config.command}" not found${
          config.installHint ? `: ${config.installHint.trim()}` : ""
        }`,
      );
    }
    throw err;
  }
  if (!out.success) throw new Error(`credential plugin "${config.command}" failed (exit ${out.code})`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(out.stdout));
  } catch {
    throw new Error(`credential plugin "${config.command}" did not print an ExecCredential (not JSON)`);
  }
  const parsed = ExecCredential.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(
      `credential plugin "${config.command}" printed an invalid ExecCredential: ${
        issue.path.join(".")
      }: ${issue.message}`,
    );
  }
  const status = parsed.data.status;
  if (!status.token && !(status.clientCertificateData && status.clientKeyData)) {
    throw new Error(
      `credential plugin "${config.command}" returned neither a token nor a client certificate`,
    );
  }
  return status;
}

/** Opens the connection the flags and the environment name. Throws with a message for the user. */
export function openConnection(
  flags: ConnectionFlags,
  env: (name: string) => string | undefined = (n) => Deno.env.get(n),
): CliConnection {
  const path = kubeconfigPath(flags.kubeconfig, env);
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    throw new Error(
      `cannot read the kubeconfig ${path}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const dir = path.slice(0, path.lastIndexOf("/") + 1);
  const headers = impersonationHeaders(flags);
  const connection = kubeconfigConnection(
    text,
    path,
    (file) => Deno.readTextFileSync(file.startsWith("/") ? file : `${dir}${file}`),
    {
      exec: runCredentialPlugin,
      ...(flags.context ? { context: flags.context } : {}),
      ...(headers ? { headers } : {}),
    },
  );
  return { connection, namespace: connection.namespace ?? "default", source: path };
}
