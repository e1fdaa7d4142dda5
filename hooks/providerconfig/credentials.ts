import type { Provider } from "../../lib/api/mod.ts";

/**
 * The keys each provider's credentials Secret must hold: any one alternative, complete, is enough (Proxmox
 * takes a username and password, or a token).
 */
export const REQUIRED_KEYS: Readonly<Record<Provider, readonly (readonly string[])[]>> = {
  harvester: [["kubeconfig"]],
  nutanix: [["username", "password"]],
  proxmox: [["username", "password"], ["token"]],
  azure: [["tenantID", "clientID", "clientSecret", "subscriptionID"]],
  aws: [["accessKeyID", "secretAccessKey"]],
  gcp: [["serviceAccountKey"]],
};

/**
 * The key alternatives a Secret must hold: `credentialsRef.key` names the one key of a single-key provider
 * (harvester `kubeconfig`, gcp `serviceAccountKey`); providers that need several keys read them by their names
 * and do not use `key`.
 *
 * @example
 * ```ts
 * requiredKeys("harvester", "kubeconfig2"); // [["kubeconfig2"]]
 * requiredKeys("aws", "ignored"); // [["accessKeyID", "secretAccessKey"]]
 * ```
 */
export function requiredKeys(provider: Provider, key?: string): readonly (readonly string[])[] {
  const keys = REQUIRED_KEYS[provider];
  return key && usesKey(provider) ? [[key]] : keys;
}

/** Whether `credentialsRef.key` applies to a provider: only when it needs exactly one key. */
export function usesKey(provider: Provider): boolean {
  const keys = REQUIRED_KEYS[provider];
  return keys.length === 1 && keys[0]!.length === 1;
}

/** The result of checking a Secret: never any of its values, only which keys are missing. */
export type CredentialCheck =
  | { ok: true }
  | { ok: false; reason: "SecretNotFound" | "MissingKeys" | "CrossNamespaceReference"; message: string };

/**
 * Checks that a Secret holds the keys a provider needs ({@linkcode requiredKeys}), looking only at key names and
 * whether each value is non-empty. Values are never decoded, copied or returned.
 */
export function checkCredentials(
  provider: Provider,
  secretRef: { namespace: string; name: string },
  secret: { data?: unknown } | undefined,
  key?: string,
): CredentialCheck {
  if (!secret) {
    return {
      ok: false,
      reason: "SecretNotFound",
      message: `credentials secret ${secretRef.namespace}/${secretRef.name} not found`,
    };
  }
  const data = secret.data !== null && typeof secret.data === "object"
    ? secret.data as Record<string, unknown>
    : {};
  const present = (k: string) => typeof data[k] === "string" && data[k] !== "";
  const missing = requiredKeys(provider, key).map((keys) => keys.filter((k) => !present(k)));
  if (missing.some((m) => m.length === 0)) return { ok: true };
  const [first, ...others] = missing;
  const alternatives = others.map((m) => ` (or [${m.join(" ")}])`).join("");
  return {
    ok: false,
    reason: "MissingKeys",
    message: `secret missing required keys: [${first!.join(" ")}]${alternatives}`,
  };
}
