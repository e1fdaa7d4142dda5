/**
 * Service configuration from environment variables, validated with zod at start-up.
 *
 * @module
 */
import { z } from "zod";
import type { HookConfig } from "../hook_context/mod.ts";
import { int, KUBE_VARIABLES, LIBRARY_VARIABLES, metricsAuth, parseEnv } from "./env.ts";
import { SERVICE_CONNECTION_ENV, type ServiceConnections, serviceConnections } from "./connections.ts";

export * from "./reporter.ts";
export * from "./connections.ts";
export { clearLibraryVariables, KUBE_VARIABLES, LIBRARY_VARIABLES, readEnv } from "./env.ts";

const bool = (name: string) =>
  z.enum(["true", "false"], { message: `${name} must be "true" or "false"` }).default("false")
    .transform((v) => v === "true");

/**
 * `IDP_GROUP_PREFIXES`: `name=prefix` pairs separated by commas, the group prefix the API server gives each
 * identity provider (structured authentication's `claimMappings.groups.prefix` per issuer). Names compare
 * case-insensitively, as the seed matches `identityProvider`.
 */
const idpPrefixes = z.string().default("").transform((v, ctx) => {
  const out: Record<string, string> = {};
  for (const entry of v.split(",").map((e) => e.trim()).filter(Boolean)) {
    const eq = entry.indexOf("=");
    const name = eq > 0 ? entry.slice(0, eq).trim().toLowerCase() : "";
    if (!name) {
      ctx.addIssue({
        code: "custom",
        message: `IDP_GROUP_PREFIXES entries must be name=prefix, got "${entry}"`,
      });
      return z.NEVER;
    }
    if (name in out) {
      ctx.addIssue({ code: "custom", message: `IDP_GROUP_PREFIXES names "${name}" twice` });
      return z.NEVER;
    }
    out[name] = entry.slice(eq + 1).trim();
  }
  return out;
});

/** A comma-separated list of certificate common names. */
const names = z.string().optional().transform((v) =>
  v === undefined ? undefined : v.split(",").map((n) => n.trim()).filter(Boolean)
);

const EnvSchema = z.object({
  PORT: int("PORT", 0, 65535, 8080),
  HOST: z.string().min(1, "HOST must not be empty").default("0.0.0.0"),
  BODY_LIMIT_BYTES: int("BODY_LIMIT_BYTES", 1024, 1024 * 1024 * 1024, 16 * 1024 * 1024),
  CLOCK_OVERRIDE: bool("CLOCK_OVERRIDE"),
  SHUTDOWN_DRAIN_SECONDS: int("SHUTDOWN_DRAIN_SECONDS", 0, 300, 0),
  SHUTDOWN_TIMEOUT_SECONDS: int("SHUTDOWN_TIMEOUT_SECONDS", 1, 600, 25),
  OIDC_GROUPS_PREFIX: z.string().default(""),
  IDP_GROUP_PREFIXES: idpPrefixes,
  HOOK_WORKERS: int("HOOK_WORKERS", 0, 64, 2),
  HOOK_QUEUE_LIMIT: int("HOOK_QUEUE_LIMIT", 0, 1024, 4),
  HOOK_QUEUE_BYTES: int("HOOK_QUEUE_BYTES", 1024, 4 * 1024 * 1024 * 1024, 48 * 1024 * 1024),
  HOOK_DEADLINE_SECONDS: int("HOOK_DEADLINE_SECONDS", 0, 600, 15),
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  TLS_CLIENT_CA_FILE: z.string().optional(),
  TLS_RELOAD_SECONDS: int("TLS_RELOAD_SECONDS", 0, 3600, 10),
  HOOK_CLIENT_NAMES: names,
  WEBHOOK_PORT: int("WEBHOOK_PORT", 0, 65535, 0),
  WEBHOOK_TLS_CERT_FILE: z.string().optional(),
  WEBHOOK_TLS_KEY_FILE: z.string().optional(),
  WEBHOOK_CLIENT_CA_FILE: z.string().optional(),
  WEBHOOK_BODY_LIMIT_BYTES: int("WEBHOOK_BODY_LIMIT_BYTES", 1024, 64 * 1024 * 1024, 7 * 1024 * 1024),
  WEBHOOK_CONCURRENCY: int("WEBHOOK_CONCURRENCY", 1, 4096, 64),
  WEBHOOK_QUEUE_BYTES: int("WEBHOOK_QUEUE_BYTES", 1024, 1024 * 1024 * 1024, 16 * 1024 * 1024),
  WEBHOOK_CLIENT_NAMES: names,
  METRICS_AUTH: metricsAuth,
  TEST_SHRINK_GRACE_SECONDS: int("TEST_SHRINK_GRACE_SECONDS", 0, 3600, 0),
  ...SERVICE_CONNECTION_ENV,
}).refine((e) => (e.TLS_CERT_FILE === undefined) === (e.TLS_KEY_FILE === undefined), {
  message: "TLS_CERT_FILE and TLS_KEY_FILE must be set together",
  path: ["TLS_CERT_FILE"],
}).refine(
  (e) => e.HOOK_CLIENT_NAMES === undefined || (e.HOOK_CLIENT_NAMES.length > 0 && e.TLS_CLIENT_CA_FILE),
  {
    message:
      "HOOK_CLIENT_NAMES (the common names of Metacontroller's client certificates) needs TLS_CLIENT_CA_FILE, and at least one name",
    path: ["HOOK_CLIENT_NAMES"],
  },
).refine((e) => e.TLS_CLIENT_CA_FILE === undefined || e.TLS_CERT_FILE !== undefined, {
  message:
    "TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates are asked for over TLS",
  path: ["TLS_CLIENT_CA_FILE"],
}).refine(
  (e) =>
    (e.WEBHOOK_PORT !== 0) === (e.WEBHOOK_TLS_CERT_FILE !== undefined) &&
    (e.WEBHOOK_PORT !== 0) === (e.WEBHOOK_TLS_KEY_FILE !== undefined),
  {
    message: "WEBHOOK_PORT, WEBHOOK_TLS_CERT_FILE and WEBHOOK_TLS_KEY_FILE must be set together",
    path: ["WEBHOOK_PORT"],
  },
).refine(
  (e) =>
    (e.WEBHOOK_CLIENT_NAMES === undefined) === (e.WEBHOOK_CLIENT_CA_FILE === undefined) &&
    (e.WEBHOOK_CLIENT_NAMES === undefined || (e.WEBHOOK_CLIENT_NAMES.length > 0 && e.WEBHOOK_PORT !== 0)),
  {
    message:
      "WEBHOOK_CLIENT_NAMES (the API server's client certificate names) and WEBHOOK_CLIENT_CA_FILE must be set together, and need WEBHOOK_PORT: the API server authenticates on the webhook listener",
    path: ["WEBHOOK_CLIENT_NAMES"],
  },
);

/** The names of every environment variable the service's configuration reads. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/**
 * Variables only tests set (a fake clock, a short shrink grace). The shipped command line does not allow them
 * (`--allow-env`), so the service in a pod cannot read them whatever its Deployment says.
 */
export const TEST_VARIABLES: readonly string[] = ["CLOCK_OVERRIDE", "TEST_SHRINK_GRACE_SECONDS"];

/**
 * Every environment variable the hook service reads: its configuration, where the API is, its pod name (which
 * replica wrote an Event), and the `yaml` library's (cleared at start). The shipped command line allows exactly these (`--allow-env=...`).
 */
export const SERVICE_VARIABLES: readonly string[] = [
  ...CONFIG_VARIABLES,
  ...KUBE_VARIABLES,
  "HOSTNAME",
  ...LIBRARY_VARIABLES,
];

/**
 * Validated service configuration. With it, each listener's connections (`connections`: the cap and deadlines) and
 * how its bodies are read (`bodyReadSeconds`, `readingBytes`): see {@linkcode ServiceConnections}.
 */
export interface Config extends ServiceConnections {
  /** TCP port to listen on (0 picks a free one). */
  readonly port: number;
  /** Address to bind. */
  readonly host: string;
  /** Largest accepted request body in bytes; larger bodies get 413. */
  readonly bodyLimitBytes: number;
  /** Whether the `X-Butler-Now` header may replace the clock (end-to-end tests only). */
  readonly clockOverride: boolean;
  /** Seconds to keep serving, not ready, after SIGTERM before closing the listener. */
  readonly shutdownDrainSeconds: number;
  /** Seconds to wait for in-flight requests before giving up. */
  readonly shutdownTimeoutSeconds: number;
  /** Hook workers (each runs one request at a time off the event loop); 0 runs hooks on the main thread. */
  readonly workers: number;
  /** Hook requests that may wait for a worker; one more is answered 429. */
  readonly queueLimit: number;
  /**
   * Bytes of hook request bodies let in at once (being read, queued or running); a request that would pass it is
   * answered 429, unless it would be the only one. Bounds memory by bytes, so that many small syncs may wait
   * where a few large ones could not.
   */
  readonly queueBytes: number;
  /**
   * Seconds a hook request may run in a worker before it is stopped (the worker replaced, the request answered
   * 503); 0: no limit. Metacontroller gives up on a hook after its own timeout (10 s by default) anyway.
   */
  readonly deadlineSeconds: number;
  /**
   * PEM certificate chain and key files to serve HTTPS with (re-read every `reloadSeconds`, swapped when they
   * change), and the CA that client certificates must chain to for hook calls; plain HTTP when unset.
   */
  readonly tls?: {
    readonly certFile: string;
    readonly keyFile: string;
    readonly clientCaFile?: string;
    /**
     * The common names hook callers' certificates may have (Metacontroller's): a certificate the CA signed for
     * another client (the API server's webhook client) is refused. Unset: any certificate the CA signed.
     */
    readonly clientNames?: readonly string[];
    readonly reloadSeconds: number;
  };
  /**
   * A second listener for the API server's admission calls, always HTTPS (the API server requires it), so that
   * the hooks' listener can stay as it is; unset when `WEBHOOK_PORT` is.
   */
  readonly webhook?: {
    readonly port: number;
    readonly certFile: string;
    readonly keyFile: string;
    /**
     * The API server authenticates with a client certificate chaining to `clientCaFile` whose common name is one
     * of `clientNames` (kube-apiserver's webhook client credentials); unset, any caller is served.
     */
    readonly client?: { readonly caFile: string; readonly names: readonly string[] };
  };
  /**
   * Admission reviews: the largest body (the API server sends at most about twice its 3 MiB request limit), how
   * many may be in at once, and how many bytes of their bodies; past either, 429 before the body is read.
   */
  /** Who may read `/metrics` (`METRICS_AUTH`): `kubernetes` needs the API. */
  readonly metricsAuth: "kubernetes" | "none";
  readonly admission: {
    readonly bodyLimitBytes: number;
    readonly concurrency: number;
    readonly queueBytes: number;
  };
  /** What reaches hook logic. */
  readonly hook: HookConfig;
}

/** The outcome of {@linkcode loadConfig}. */
export type ConfigResult = { ok: true; config: Config } | { ok: false; message: string };

/**
 * Validates configuration from an environment map. Empty values count as unset. A bad value yields a message
 * that names the variable.
 *
 * @example
 * ```ts
 * loadConfig({ PORT: "9090" }); // { ok: true, config: { port: 9090, ... } }
 * loadConfig({ PORT: "http" }); // { ok: false, message: 'PORT must be an integer from 0 to 65535, got "http"' }
 * ```
 */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): ConfigResult {
  const parsed = parseEnv(EnvSchema, CONFIG_VARIABLES, env);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const e = parsed.data;
  return {
    ok: true,
    config: {
      port: e.PORT,
      host: e.HOST,
      bodyLimitBytes: e.BODY_LIMIT_BYTES,
      clockOverride: e.CLOCK_OVERRIDE,
      shutdownDrainSeconds: e.SHUTDOWN_DRAIN_SECONDS,
      shutdownTimeoutSeconds: e.SHUTDOWN_TIMEOUT_SECONDS,
      workers: e.HOOK_WORKERS,
      queueLimit: e.HOOK_QUEUE_LIMIT,
      queueBytes: e.HOOK_QUEUE_BYTES,
      deadlineSeconds: e.HOOK_DEADLINE_SECONDS,
      ...(e.TLS_CERT_FILE && e.TLS_KEY_FILE
        ? {
          tls: {
            certFile: e.TLS_CERT_FILE,
            keyFile: e.TLS_KEY_FILE,
            ...(e.TLS_CLIENT_CA_FILE ? { clientCaFile: e.TLS_CLIENT_CA_FILE } : {}),
            ...(e.HOOK_CLIENT_NAMES ? { clientNames: e.HOOK_CLIENT_NAMES } : {}),
            reloadSeconds: e.TLS_RELOAD_SECONDS,
          },
        }
        : {}),
      ...(e.WEBHOOK_PORT && e.WEBHOOK_TLS_CERT_FILE && e.WEBHOOK_TLS_KEY_FILE
        ? {
          webhook: {
            port: e.WEBHOOK_PORT,
            certFile: e.WEBHOOK_TLS_CERT_FILE,
            keyFile: e.WEBHOOK_TLS_KEY_FILE,
            ...(e.WEBHOOK_CLIENT_CA_FILE && e.WEBHOOK_CLIENT_NAMES
              ? { client: { caFile: e.WEBHOOK_CLIENT_CA_FILE, names: e.WEBHOOK_CLIENT_NAMES } }
              : {}),
          },
        }
        : {}),
      metricsAuth: e.METRICS_AUTH,
      ...serviceConnections(e),
      admission: {
        bodyLimitBytes: e.WEBHOOK_BODY_LIMIT_BYTES,
        concurrency: e.WEBHOOK_CONCURRENCY,
        queueBytes: e.WEBHOOK_QUEUE_BYTES,
      },
      hook: {
        oidcGroupsPrefix: e.OIDC_GROUPS_PREFIX,
        idpGroupPrefixes: e.IDP_GROUP_PREFIXES,
        ...(e.TEST_SHRINK_GRACE_SECONDS ? { shrinkGraceSeconds: e.TEST_SHRINK_GRACE_SECONDS } : {}),
      },
    },
  };
}
