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
