/**
 * Configuration of `main.ts reporter` from environment variables, validated with zod at start-up.
 *
 * @module
 */
import { z } from "zod";
import { int, KUBE_VARIABLES, LIBRARY_VARIABLES, metricsAuth, parseEnv } from "./env.ts";
import { type ConnectionSettings, REPORTER_CONNECTION_ENV, reporterConnections } from "./connections.ts";

const ReporterEnv = z.object({
  PORT: int("PORT", 0, 65535, 8080),
  HOST: z.string().default("0.0.0.0"),
  POD_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, "POD_NAMESPACE must be a namespace name")
    .default("butler-system"),
  HOSTNAME: z.string({ message: "HOSTNAME (the pod name) must be set: it is this replica's identity" }).min(
    1,
  ),
  KUBECONFIG_SECRET_NAME: z.string().default("{name}-kubeconfig").refine((v) => v.includes("{name}"), {
    message: "KUBECONFIG_SECRET_NAME must contain {name} (the TenantCluster's name)",
  }),
  KUBECONFIG_SECRET_KEY: z.string().regex(
    /^[-._a-zA-Z0-9]+$/,
    "KUBECONFIG_SECRET_KEY must be a Secret data key",
  )
    .default("value"),
  REPORTER_LEASE_SECONDS: int("REPORTER_LEASE_SECONDS", 5, 300, 30),
  REPORTER_RENEW_SECONDS: int("REPORTER_RENEW_SECONDS", 1, 100, 10),
  REPORTER_HEARTBEAT_SECONDS: int("REPORTER_HEARTBEAT_SECONDS", 5, 55, 45),
  REPORTER_IDLE_HEARTBEAT_SECONDS: int("REPORTER_IDLE_HEARTBEAT_SECONDS", 5, 1500, 600),
  KUBECONFIG_RECHECK_SECONDS: int("KUBECONFIG_RECHECK_SECONDS", 1, 3600, 300),
  METALLB_RESYNC_SECONDS: int("METALLB_RESYNC_SECONDS", 5, 3600, 60),
  METRICS_AUTH: metricsAuth,
  ...REPORTER_CONNECTION_ENV,
}).refine((e) => e.REPORTER_RENEW_SECONDS * 2 <= e.REPORTER_LEASE_SECONDS, {
  message: "REPORTER_RENEW_SECONDS must be at most half of REPORTER_LEASE_SECONDS",
  path: ["REPORTER_RENEW_SECONDS"],
}).refine((e) => e.REPORTER_IDLE_HEARTBEAT_SECONDS >= e.REPORTER_HEARTBEAT_SECONDS, {
  message: "REPORTER_IDLE_HEARTBEAT_SECONDS must be at least REPORTER_HEARTBEAT_SECONDS",
  path: ["REPORTER_IDLE_HEARTBEAT_SECONDS"],
});

/**
 * Every environment variable the reporter reads: its configuration, where the management API is,
 * and the `yaml` library's (cleared at start: tenant kubeconfigs are parsed here). The shipped
 * command line allows exactly these (`--allow-env=...`).
 */
export const REPORTER_VARIABLES: readonly string[] = [
  ...Object.keys(ReporterEnv.shape),
  ...KUBE_VARIABLES,
  ...LIBRARY_VARIABLES,
];

/** Validated reporter configuration. */
export interface ReporterConfig {
  /** Port of `/metrics`, `/healthz` and `/readyz` (plain HTTP). */
  readonly port: number;
  readonly host: string;
  /** Where this replica's Lease lives. */
  readonly namespace: string;
  readonly identity: string;
  readonly secretName: string;
  readonly secretKey: string;
  readonly leaseSeconds: number;
  readonly renewSeconds: number;
  /** How often `observedAt` is refreshed while a decision waits on the demand (seconds). */
  readonly heartbeatSeconds: number;
  /** How often `observedAt` is refreshed while none does (seconds). */
  readonly idleHeartbeatSeconds: number;
  readonly kubeconfigRecheckSeconds: number;
  /** How often a tenant's MetalLB configuration is applied again though nothing changed (reverts drift). */
  readonly metallbResyncSeconds: number;
  /** Who may read `/metrics` and `/tenants` (`METRICS_AUTH`). */
  readonly metricsAuth: "kubernetes" | "none";
  /** Its listener's connections: the cap and deadlines. */
  readonly connections: ConnectionSettings;
}

/**
 * Validates the reporter's configuration; a bad value yields a message naming the variable.
 *
 * @example
 * ```ts
 * loadReporterConfig({ HOSTNAME: "butler-reporter-0" }); // { ok: true, config: { secretName: "{name}-kubeconfig", ... } }
 * ```
 */
export function loadReporterConfig(
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; config: ReporterConfig } | { ok: false; message: string } {
  const parsed = parseEnv(ReporterEnv, Object.keys(ReporterEnv.shape), env);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const e = parsed.data;
  return {
    ok: true,
    config: {
      port: e.PORT,
      host: e.HOST,
      namespace: e.POD_NAMESPACE,
      identity: e.HOSTNAME,
      secretName: e.KUBECONFIG_SECRET_NAME,
      secretKey: e.KUBECONFIG_SECRET_KEY,
      leaseSeconds: e.REPORTER_LEASE_SECONDS,
      renewSeconds: e.REPORTER_RENEW_SECONDS,
      heartbeatSeconds: e.REPORTER_HEARTBEAT_SECONDS,
      idleHeartbeatSeconds: e.REPORTER_IDLE_HEARTBEAT_SECONDS,
      kubeconfigRecheckSeconds: e.KUBECONFIG_RECHECK_SECONDS,
      metallbResyncSeconds: e.METALLB_RESYNC_SECONDS,
      metricsAuth: e.METRICS_AUTH,
      connections: reporterConnections(e),
    },
  };
}
