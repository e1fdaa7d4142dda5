import { parse } from "yaml";
import { decodeBase64 } from "../encoding/base64.ts";
import type { KubeConnection } from "./client.ts";

/** The files of an in-cluster ServiceAccount. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

type ReadText = (path: string) => string;

interface Kubeconfig {
  "current-context"?: string;
  contexts?: { name: string; context: { cluster: string; user: string } }[];
  clusters?: {
    name: string;
    cluster: { server: string; "certificate-authority-data"?: string; "certificate-authority"?: string };
  }[];
  users?: {
    name: string;
    user: {
      token?: string;
      "client-certificate-data"?: string;
      "client-key-data"?: string;
    };
  }[];
}

/** A kubeconfig's file references are relative to the kubeconfig itself. */
const resolve = (config: string, file: string) =>
  file.startsWith("/") ? file : `${config.slice(0, config.lastIndexOf("/") + 1)}${file}`;

const text = (b64: string) => new TextDecoder().decode(decodeBase64(b64));

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
  const config = parse(read(path)) as Kubeconfig;
  const context = config.contexts?.find((c) => c.name === config["current-context"])?.context ??
    config.contexts?.[0]?.context;
  const cluster = config.clusters?.find((c) => c.name === context?.cluster)?.cluster;
  const user = config.users?.find((u) => u.name === context?.user)?.user ?? {};
  if (!cluster) throw new Error(`${path}: no cluster for the current context`);
  const ca = cluster["certificate-authority-data"]
    ? text(cluster["certificate-authority-data"])
    : cluster["certificate-authority"]
    ? read(resolve(path, cluster["certificate-authority"]))
    : undefined;
  const cert = user["client-certificate-data"] && user["client-key-data"]
    ? { cert: text(user["client-certificate-data"]), key: text(user["client-key-data"]) }
    : {};
  const token = user.token;
  return {
    server: cluster.server,
    ...(token ? { token: () => token } : {}),
    ...(ca || cert.cert
      ? { httpClient: Deno.createHttpClient({ ...(ca ? { caCerts: [ca] } : {}), ...cert }) }
      : {}),
  };
}
