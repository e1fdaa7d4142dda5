/**
 * What the reporter reads of a tenant's objects at all (issue #55): a projection each, each part bounded, so that a
 * tenant's API server, or a team's Secret, can make it parse no more than it keeps (`lib/foreign`).
 *
 * @module
 */
import {
  bounded,
  each,
  ForeignRefused,
  type HeapBudget,
  members,
  parseForeignYaml,
  type Projection,
} from "../foreign/mod.ts";
import { decodeBase64 } from "../encoding/base64.ts";
import { kubeconfigConnection, type KubeConnection } from "../kube/mod.ts";
import { INVENTORY_LIMITS, type TenantHealth } from "./inventory.ts";

/**
 * The longest kubeconfig a tenant's Secret may hold: a Cluster API kubeconfig with an embedded CA, client
 * certificate and key is about 6 KiB. Its YAML is charged at the worst measured cost before it is parsed
 * (`lib/foreign/yaml.ts`).
 */
export const KUBECONFIG_MAX_BYTES = 16 * 1024;

/** What the Secret's key is kept as when its value is longer than a kubeconfig may be. */
export const KUBECONFIG_TOO_LONG = Object.freeze({ tooLong: true });

/** What is read of the kubeconfig Secret: its version and its one key (base64 of at most the bound), no more. */
export function kubeconfigSecret(key: string): Projection {
  return members({
    metadata: members({ resourceVersion: bounded(64) }),
    data: members(
      {},
      (k) =>
        k === key ? bounded(Math.ceil(KUBECONFIG_MAX_BYTES / 3) * 4 + 2, KUBECONFIG_TOO_LONG) : undefined,
    ),
  });
}

/** What is read of a tenant's Service: what `serviceFact` reads, each part bounded. */
export const SERVICE: Projection = members({
  metadata: members({ namespace: bounded(256), name: bounded(256), creationTimestamp: bounded(64) }),
  spec: members({ type: bounded(64) }),
  status: members({
    loadBalancer: members({
      ingress: each(members({ ip: bounded(64), hostname: bounded(256) }), INVENTORY_LIMITS.maxIngressIPs + 1),
    }),
  }),
});

/**
 * The tenant's connection from its kubeconfig Secret as {@linkcode kubeconfigSecret} read it; or its problem, in
 * fixed words but for the kubeconfig's own errors (which never echo its content); or `"later"` when the heap this
 * process may spend on foreign bytes is taken now (read it again soon). The kubeconfig's YAML goes through the
 * door (`parseForeignYaml`): at most {@linkcode KUBECONFIG_MAX_BYTES}, charged first.
 */
export function tenantConnection(
  secret: { data?: Record<string, unknown> } | undefined,
  key: string,
  secretRef: string,
  budget: HeapBudget,
): { connection: KubeConnection } | TenantHealth | "later" {
  const encoded = secret?.data?.[key];
  if (!secret || encoded === undefined) {
    return {
      state: "KubeconfigMissing",
      message: secret ? `${secretRef} has no key "${key}"` : `${secretRef} not found`,
    };
  }
  if (typeof encoded !== "string") {
    return {
      state: "KubeconfigInvalid",
      message: encoded === KUBECONFIG_TOO_LONG
        ? `${secretRef} key "${key}": not read: the kubeconfig is over ${KUBECONFIG_MAX_BYTES} bytes`
        : `${secretRef} key "${key}" is not base64 text`,
    };
  }
  try {
    const text = new TextDecoder().decode(decodeBase64(encoded));
    return {
      connection: kubeconfigConnection(text, `${secretRef} key "${key}"`, undefined, {
        requireTls: true,
        parse: (t) => parseForeignYaml(t, budget, KUBECONFIG_MAX_BYTES),
      }),
    };
  } catch (err) {
    if (err instanceof ForeignRefused && !err.refusal.never) return "later";
    return { state: "KubeconfigInvalid", message: err instanceof Error ? err.message : String(err) };
  }
}
