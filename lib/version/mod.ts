/**
 * Kubernetes versions as users write them: `1.30.4` and `v1.30.4` mean the same version everywhere (the seeds'
 * Team examples leave the `v` out, TenantClusters carry it), and `1.30.x` allows a whole minor. This module is the
 * one place that knows the forms; CRD patterns use the same expressions.
 *
 * @module
 */

/** A version as users write it: `1.30.4` or `v1.30.4`. The CRD pattern of every version field. */
export const VERSION_PATTERN = "^v?\\d+\\.\\d+\\.\\d+$";
/** An allowed-version entry: an exact version or a minor wildcard (`1.30.x`, `v1.30.x`). */
export const ALLOWED_VERSION_PATTERN = "^v?\\d+\\.\\d+\\.(\\d+|x)$";

const VERSION = new RegExp(VERSION_PATTERN);
const ALLOWED = new RegExp(ALLOWED_VERSION_PATTERN);

/** Whether `text` is a version in either form. */
export function isVersion(text: string): boolean {
  return VERSION.test(text);
}

/**
 * The canonical form of a version or wildcard: with the `v`. Anything else is returned as written.
 *
 * @example
 * ```ts
 * normalizeVersion("1.30.4"); // "v1.30.4"
 * normalizeVersion("v1.30.x"); // "v1.30.x"
 * ```
 */
export function normalizeVersion(version: string): string {
  return /^\d/.test(version) ? `v${version}` : version;
}

/**
 * Whether a version is allowed by a list of exact versions and `.x` wildcards (either form). An empty list
 * allows every version, as the seed says.
 *
 * @example
 * ```ts
 * versionAllowed("v1.30.4", ["1.30.x"]); // true
 * versionAllowed("1.31.0", ["v1.30.4"]); // false
 * ```
 */
export function versionAllowed(version: string, allowed: readonly string[]): boolean {
  if (!allowed.length) return true;
  const v = normalizeVersion(version);
  return allowed.some((entry) => {
    if (!ALLOWED.test(entry)) return false;
    const a = normalizeVersion(entry);
    return a.endsWith(".x") ? v.startsWith(a.slice(0, -1)) && isVersion(v) : a === v;
  });
}
