import { parse } from "yaml";
import { ForeignRefused, ForeignTooLong } from "../foreign/mod.ts";
import { decodeBase64 } from "../encoding/base64.ts";
import type { KubeConnection } from "./client.ts";

/** The files of an in-cluster ServiceAccount. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

type ReadText = (path: string) => string;

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user: string; namespace?: string } }[];
  clusters?: {
    name: string;
    cluster: { server: string; "certificate-authority-data"?: string; "certificate-authority"?: string };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      "client-certificate-data"?: string;
      "client-key-data"?: string;
      "client-certificate"?: string;
      "client-key"?: string;
      exec?: ExecConfig;
    } & Record<string, unknown>;
  }[];
}

/** A kubeconfig user's `exec` credential plugin (client.authentication.k8s.io). */
export interface ExecConfig {
  readonly apiVersion?: string;
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: readonly { name: string; value: string }[] | null;
  readonly installHint?: string;
}

/** What a credential plugin answered (`ExecCredential.status`). */
export interface ExecCredentialStatus {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
  /** RFC 3339; absent: valid for the life of the process. */
  readonly expirationTimestamp?: string;
}

/** Runs a credential plugin and returns its answer; throws with a message fit for the user. */
export type ExecRunner = (config: ExecConfig) => ExecCredentialStatus;

/** What a kubeconfig may use beyond an inline token or certificate. */
export interface KubeconfigOptions {
  /** A tenant's kubeconfig: a plain `http://` server is refused. */
  readonly requireTls?: boolean;
  /** The context to use instead of `current-context` (kubectl's `--context`). */
  readonly context?: string;
  /** Runs `exec` credential plugins; without it they are an error (the reporter runs no tenant's program). */
  readonly exec?: ExecRunner;
  /** Headers sent with every request (impersonation: kubectl's `--as`, `--as-group`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The clock for exec credentials' expiry (ms). */
  readonly now?: () => number;
  /**
   * Reads the kubeconfig's text. A tenant's is foreign bytes and goes through the door of `lib/foreign`
   * (`parseForeignYaml`: bounded and charged); by default the text is the operator's own file, parsed as it is.
   */
  readonly parse?: (text: string) => unknown;
}

/** The operator's own kubeconfig (`KUBECONFIG`, kubectl's): trusted text, parsed as it is. */
function parseOwnKubeconfig(text: string): unknown {
  return parse(text);
}

/** kubeconfig user fields that name credentials this client cannot present. */
const UNSUPPORTED_CREDENTIALS = [
  "exec",
  "auth-provider",
  "tokenFile",
  "client-certificate",
  "client-key",
  "username",
  "password",
] as const;

/** Credentials that name files: usable only with `readFile`, which a tenant's kubeconfig never gets. */
const FILE_CREDENTIALS = ["tokenFile", "client-certificate", "client-key"];

/** A kubeconfig's file references are relative to the kubeconfig itself. */
const resolve = (config: string, file: string) =>
  file.startsWith("/") ? file : `${config.slice(0, config.lastIndexOf("/") + 1)}${file}`;

const text64 = (b64: string) => new TextDecoder().decode(decodeBase64(b64));

/**
 * Where the Kubernetes API is: in a pod, the ServiceAccount (`KUBERNETES_SERVICE_HOST`/`_PORT`, its CA, and its
 * token re-read on every request because projected tokens rotate); otherwise the `KUBECONFIG` file's current
 * context (token or client certificate). `undefined` when neither is there: the service then runs without
 * admission reads.
 */
export function loadKubeConfig(
  env: Record<string, string | undefined>,
  read: ReadText,
): KubeConnection | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (host) {
    const port = env.KUBERNETES_SERVICE_PORT ?? "443";
    const ca = read(`${SERVICE_ACCOUNT_DIR}/ca.crt`);
    return {
      server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
      token: () => read(`${SERVICE_ACCOUNT_DIR}/token`).trim(),
      httpClient: Deno.createHttpClient({ caCerts: [ca] }),
    };
  }
  if (!env.KUBECONFIG) return undefined;
  const path = env.KUBECONFIG.split(":")[0]!;
  return kubeconfigConnection(read(path), path, (file) => read(resolve(path, file)));
}

/**
 * A connection from the text of a kubeconfig: its current context's server, CA (inline or, with `readFile`, a
 * file) and credentials (token or client certificate; with `readFile` also token and certificate files; with
 * `options.exec` credential plugins). `source` names the kubeconfig in errors. Throws on a kubeconfig that has no
 * usable cluster, bad YAML, or a certificate Deno cannot load; never echoes the content. Credentials this client
 * cannot use here (`exec` plugins, `auth-provider`, files, basic auth) are an error, never a silent anonymous
 * request. A tenant's kubeconfig gets neither `readFile` nor `exec`: the files it named would be this process's
 * (its ServiceAccount token), and the programs too. With `requireTls` a plain `http://` server is refused: the
 * token would travel in clear, and the address is the tenant's to choose.
 *
 * @example
 * ```ts
 * const tenant = kubeconfigConnection(secretText, "Secret team-a/c1-kubeconfig");
 * ```
 */
export function kubeconfigConnection(
  text: string,
  source: string,
  readFile?: ReadText,
  options: KubeconfigOptions = {},
): KubeConnection {
  let config: Kubeconfig;
  try {
    config = ((options.parse ?? parseOwnKubeconfig)(text) ?? {}) as Kubeconfig;
  } catch (err) {
    if (err instanceof ForeignTooLong) {
      throw new Error(`${source}: not read: the kubeconfig is over ${err.maxBytes} bytes`);
    }
    if (err instanceof ForeignRefused) throw err;
    throw new Error(`${source}: not a kubeconfig (YAML does not parse)`);
  }
  if (typeof config !== "object") throw new Error(`${source}: not a kubeconfig`);
  const { context, cluster, user } = selectContext(config, source, options);
  const supported = new Set<string>([
    ...(options.exec ? ["exec"] : []),
    ...(readFile ? FILE_CREDENTIALS : []),
  ]);
  const unsupported = UNSUPPORTED_CREDENTIALS.filter((k) =>
    user[k] !== undefined && user[k] !== null && !supported.has(k)
  );
  if (unsupported.length) {
    throw new Error(
      `${source}: user credentials of type ${
        unsupported.join(", ")
      } are not supported (use a token or a client certificate)`,
    );
  }
  const ca = cluster["certificate-authority-data"]
    ? text64(cluster["certificate-authority-data"])
    : cluster["certificate-authority"] && readFile
    ? readFile(cluster["certificate-authority"])
    : undefined;
  const plugin = user.exec && options.exec
    ? execCredential(user.exec, options.exec, options.now ?? Date.now)
    : undefined;
  const first = plugin?.();
  const cert = user["client-certificate-data"] && user["client-key-data"]
    ? { cert: text64(user["client-certificate-data"]), key: text64(user["client-key-data"]) }
    : user["client-certificate"] && user["client-key"] && readFile
    ? { cert: readFile(user["client-certificate"]), key: readFile(user["client-key"]) }
    : first?.clientCertificateData && first.clientKeyData
    ? { cert: first.clientCertificateData, key: first.clientKeyData }
    : {};
  checkPem(ca, cert, source);
  const token: (() => string | undefined) | undefined = user.token
    ? () => user.token
    : user.tokenFile && readFile
    ? () => readFile(user.tokenFile!).trim()
    : plugin && first?.token
    ? () => plugin().token
    : undefined;
  let httpClient: Deno.HttpClient | undefined;
  try {
    httpClient = ca || cert.cert
      ? Deno.createHttpClient({ ...(ca ? { caCerts: [ca] } : {}), ...cert })
      : undefined;
  } catch (err) {
    throw new Error(
      `${source}: its certificate or key cannot be loaded (${err instanceof Error ? err.name : "error"})`,
    );
  }
  return {
    server: cluster.server,
    ...(token ? { token } : {}),
    ...(httpClient ? { httpClient } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
    ...(typeof context?.namespace === "string" && context.namespace ? { namespace: context.namespace } : {}),
  };
}

/** The context, cluster and user a kubeconfig names (the current context, else its only ones), checked. */
function selectContext(config: Kubeconfig, source: string, options: KubeconfigOptions) {
  if (options.context !== undefined && !config.contexts?.some((c) => c.name === options.context)) {
    throw new Error(`${source}: context "${options.context}" not found`);
  }
  const context = config.contexts?.find((c) => c.name === (options.context ?? config["current-context"]))
    ?.context ?? config.contexts?.[0]?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster ??
    (config.clusters?.length === 1 ? config.clusters[0]!.cluster : undefined);
  const user = config.users?.find((u) => u.name === context?.user)?.user ??
    (config.users?.length === 1 ? config.users[0]!.user : {});
  if (!cluster || typeof cluster.server !== "string" || !/^https?:\/\//.test(cluster.server)) {
    throw new Error(`${source}: no cluster server for the current context`);
  }
  if (options.requireTls && !cluster.server.startsWith("https://")) {
    throw new Error(`${source}: the cluster server is not https:// (credentials are never sent in clear)`);
  }
  return { context, cluster, user };
}

/** Deno loads certificates only when it connects: their shape is checked where the error can name its source. */
function checkPem(ca: string | undefined, cert: { cert?: string; key?: string }, source: string): void {
  if (ca !== undefined && !ca.includes("-----BEGIN CERTIFICATE-----")) {
    throw new Error(`${source}: the cluster's certificate authority is not a PEM certificate`);
  }
  if (
    cert.cert !== undefined &&
    !(cert.cert.includes("-----BEGIN CERTIFICATE-----") &&
      /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(cert.key ?? ""))
  ) {
    throw new Error(`${source}: the user's client certificate or key is not PEM`);
  }
}

/**
 * An exec credential plugin's answer, run again once it has expired (10 s early, as client-go does).
 */
function execCredential(config: ExecConfig, run: ExecRunner, now: () => number): () => ExecCredentialStatus {
  let cached: { status: ExecCredentialStatus; until: number } | undefined;
  return () => {
    if (cached && now() < cached.until) return cached.status;
    const status = run(config);
    const expires = status.expirationTimestamp ? Date.parse(status.expirationTimestamp) : NaN;
    cached = { status, until: Number.isFinite(expires) ? expires - 10_000 : Infinity };
    return status;
  };
}
