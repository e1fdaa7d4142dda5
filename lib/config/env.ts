/**
 * Helpers for reading environment variables with zod: what the service and the reporter share.
 *
 * @module
 */
import { z } from "zod";

/** An integer variable from `min` to `max` with a default; a bad value's message names the variable. */
export function int(
  name: string,
  min: number,
  max: number,
  fallback: number,
): z.ZodType<number, string | undefined> {
  return z.string().default(String(fallback)).transform((v, ctx) => {
    const n = /^\d+$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      ctx.addIssue({
        code: "custom",
        message: `${name} must be an integer from ${min} to ${max}, got "${v}"`,
      });
      return z.NEVER;
    }
    return n;
  });
}

/** One message for every issue, each naming its variable. */
export function issuesMessage(error: z.ZodError): string {
  return error.issues.map((i) =>
    i.message.startsWith(String(i.path[0])) ? i.message : `${String(i.path[0])}: ${i.message}`
  ).join("; ");
}

/**
 * Parses environment variables with a schema of them: empty values count as unset, and a failure is one message
 * naming each variable.
 */
export function parseEnv<T extends z.ZodType>(
  schema: T,
  names: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; data: z.infer<T> } | { ok: false; message: string } {
  const input = Object.fromEntries(names.map((name) => [name, env[name] === "" ? undefined : env[name]]));
  const parsed = schema.safeParse(input);
  return parsed.success
    ? { ok: true, data: parsed.data as z.infer<T> }
    : { ok: false, message: issuesMessage(parsed.error) };
}

/** Where the Kubernetes API is: the in-cluster Service's variables, or a kubeconfig file. */
/**
 * `METRICS_AUTH`: who may read `/metrics` (and the reporter's `/tenants`). `kubernetes`: a bearer token the API
 * server authenticates (TokenReview) whose user may `get` the path (SubjectAccessReview), as the shipped
 * Deployments set it; `none`: anyone who reaches the port (development).
 */
export const metricsAuth = z.enum(["kubernetes", "none"], {
  message: 'METRICS_AUTH must be "kubernetes" or "none"',
}).default("none");

export const KUBE_VARIABLES = ["KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT", "KUBECONFIG"] as const;

/**
 * Read by the `yaml` library on every parse: set, it prints every token it parses, a kubeconfig's bearer token
 * included. A process must be allowed to read them (Deno refuses the library's read otherwise, and the parse
 * fails); {@link clearLibraryVariables} unsets them at start so the dump can never run.
 */
export const LIBRARY_VARIABLES = ["LOG_TOKENS", "LOG_STREAM"] as const;

/**
 * Unsets {@link LIBRARY_VARIABLES} for this process and its workers.
 *
 * @example
 * ```ts
 * clearLibraryVariables(); // before anything parses YAML
 * ```
 */
export function clearLibraryVariables(): void {
  for (const name of LIBRARY_VARIABLES) Deno.env.delete(name);
}

/**
 * The environment, read variable by variable: a process run with `--allow-env=<list>` may read only those, so
 * it never asks for the whole environment (`Deno.env.toObject()` needs every variable). A variable the process
 * may not read is unset to it: the shipped command line leaves out the test-only ones, so no Deployment can turn
 * them on.
 *
 * @example
 * ```ts
 * readEnv(["PORT", "HOST"]); // { PORT: "8443", HOST: undefined }
 * ```
 */
export function readEnv(names: readonly string[]): Record<string, string | undefined> {
  return Object.fromEntries(
    names.map((n) => [
      n,
      Deno.permissions.querySync({ name: "env", variable: n }).state === "granted"
        ? Deno.env.get(n)
        : undefined,
    ]),
  );
}
