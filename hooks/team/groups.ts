/**
 * Normalises an identity-provider group name the way butler-server matches groups: trimmed; an LDAP DN
 * becomes its first CN; an email-style name is cut at its last `@`; lowercased.
 *
 * @example
 * ```ts
 * normalizeGroupName("engineers@company.com");             // "engineers"
 * normalizeGroupName("CN=Engineers,OU=Groups,DC=company"); // "engineers"
 * ```
 */
export function normalizeGroupName(name: string): string {
  let g = name.trim();
  if (g.toUpperCase().startsWith("CN=")) {
    const first = g.split(",")[0]!;
    g = first.slice(first.indexOf("=") + 1);
  }
  const at = g.lastIndexOf("@");
  if (at >= 0) g = g.slice(0, at);
  return g.toLowerCase();
}

/** The RBAC subject name for a group: as written in the Team, behind the API server's OIDC groups prefix. */
export function groupSubject(name: string, prefix: string): string {
  return `${prefix}${name}`;
}
