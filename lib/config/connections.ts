/**
 * What a listener's connections may hold and how long (`lib/listener`), from environment variables: the service's
 * two listeners and the reporter's one.
 *
 * @module
 */
import { int } from "./env.ts";

const MIB = 1024 * 1024;

/** The cap and deadlines of one listener's connections, in seconds. */
export interface ConnectionSettings {
  /** Connections open at once; at the cap one waiting on its caller is closed for a newcomer. */
  readonly maxConnections: number;
  /** From accept to the TLS handshake's end. */
  readonly handshakeSeconds: number;
  /** From accept to the first request's headers. */
  readonly headerSeconds: number;
  /** From an answer to the next request's headers (keep-alive). */
  readonly idleSeconds: number;
  /** From a request's headers to its body's end (and from its answer handed over to its last byte sent). */
  readonly bodySeconds: number;
}

/**
 * The service's variables: the hooks' listener (`PORT`, the only one in development) and the webhooks'
 * (`WEBHOOK_PORT`). Defaults and why: docs/operations.md#connections.
 */
export const SERVICE_CONNECTION_ENV = {
  MAX_CONNECTIONS: int("MAX_CONNECTIONS", 1, 65536, 128),
  WEBHOOK_MAX_CONNECTIONS: int("WEBHOOK_MAX_CONNECTIONS", 1, 65536, 256),
  HANDSHAKE_TIMEOUT_SECONDS: int("HANDSHAKE_TIMEOUT_SECONDS", 1, 600, 10),
  HEADER_TIMEOUT_SECONDS: int("HEADER_TIMEOUT_SECONDS", 1, 600, 15),
  IDLE_TIMEOUT_SECONDS: int("IDLE_TIMEOUT_SECONDS", 1, 3600, 120),
  BODY_TIMEOUT_SECONDS: int("BODY_TIMEOUT_SECONDS", 1, 600, 30),
  WEBHOOK_BODY_TIMEOUT_SECONDS: int("WEBHOOK_BODY_TIMEOUT_SECONDS", 1, 600, 10),
  READING_BYTES: int("READING_BYTES", 64 * 1024, 1024 * MIB, 2 * MIB),
  WEBHOOK_READING_BYTES: int("WEBHOOK_READING_BYTES", 64 * 1024, 1024 * MIB, 4 * MIB),
};

type Parsed<T> = { [K in keyof T]: number };

/** The service's connection settings per listener, and its bodies' reading time and budget. */
export interface ServiceConnections {
  readonly connections: { readonly hooks: ConnectionSettings; readonly webhooks: ConnectionSettings };
  /** Seconds a hook body and a review may take to arrive (408 past them). */
  readonly bodyReadSeconds: { readonly hooks: number; readonly webhooks: number };
  /** Bytes of small bodies being read at once, per listener. */
  readonly readingBytes: { readonly hooks: number; readonly webhooks: number };
}

/** The service's settings from its parsed variables. */
export function serviceConnections(e: Parsed<typeof SERVICE_CONNECTION_ENV>): ServiceConnections {
  const shared = {
    handshakeSeconds: e.HANDSHAKE_TIMEOUT_SECONDS,
    headerSeconds: e.HEADER_TIMEOUT_SECONDS,
    idleSeconds: e.IDLE_TIMEOUT_SECONDS,
  };
  return {
    connections: {
      // The hooks' listener serves the reviews too when there is no webhook listener: its backstop is the longer.
      hooks: {
        ...shared,
        maxConnections: e.MAX_CONNECTIONS,
        bodySeconds: Math.max(e.BODY_TIMEOUT_SECONDS, e.WEBHOOK_BODY_TIMEOUT_SECONDS),
      },
      webhooks: {
        ...shared,
        maxConnections: e.WEBHOOK_MAX_CONNECTIONS,
        bodySeconds: e.WEBHOOK_BODY_TIMEOUT_SECONDS,
      },
    },
    bodyReadSeconds: { hooks: e.BODY_TIMEOUT_SECONDS, webhooks: e.WEBHOOK_BODY_TIMEOUT_SECONDS },
    readingBytes: { hooks: e.READING_BYTES, webhooks: e.WEBHOOK_READING_BYTES },
  };
}

/** The reporter's variables: its one listener serves probes, metrics and `/tenants`, and reads no body. */
export const REPORTER_CONNECTION_ENV = {
  MAX_CONNECTIONS: int("MAX_CONNECTIONS", 1, 65536, 32),
  HEADER_TIMEOUT_SECONDS: int("HEADER_TIMEOUT_SECONDS", 1, 600, 10),
  IDLE_TIMEOUT_SECONDS: int("IDLE_TIMEOUT_SECONDS", 1, 3600, 120),
};

/** The reporter's listener settings from its parsed variables. */
export function reporterConnections(e: Parsed<typeof REPORTER_CONNECTION_ENV>): ConnectionSettings {
  return {
    maxConnections: e.MAX_CONNECTIONS,
    handshakeSeconds: e.HEADER_TIMEOUT_SECONDS,
    headerSeconds: e.HEADER_TIMEOUT_SECONDS,
    idleSeconds: e.IDLE_TIMEOUT_SECONDS,
    bodySeconds: e.HEADER_TIMEOUT_SECONDS,
  };
}

/**
 * The guard's limits (milliseconds) from settings (seconds).
 *
 * @example
 * ```ts
 * connectionLimits(config.connections.webhooks); // { maxConnections: 256, handshakeMs: 10000, ... }
 * ```
 */
export function connectionLimits(s: ConnectionSettings): {
  maxConnections: number;
  handshakeMs: number;
  headerMs: number;
  idleMs: number;
  bodyMs: number;
} {
  return {
    maxConnections: s.maxConnections,
    handshakeMs: s.handshakeSeconds * 1000,
    headerMs: s.headerSeconds * 1000,
    idleMs: s.idleSeconds * 1000,
    bodyMs: s.bodySeconds * 1000,
  };
}
