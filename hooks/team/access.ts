import { type Role, ROLES, type TeamSpec } from "../../lib/api/mod.ts";

const rank = (r: Role) => ROLES.indexOf(r);

/** The higher of two roles. */
export function higher(a: Role, b: Role): Role {
  return rank(a) >= rank(b) ? a : b;
}

/** One subject's team role and the role it has in each environment (equal or higher: env access only elevates). */
export interface SubjectAccess {
  readonly kind: "User" | "Group";
  /** The name as written in the Team (users first spelling wins). */
  readonly name: string;
  readonly teamRole: Role;
  readonly environments: Readonly<Record<string, Role>>;
  /**
   * Groups: the identity providers its entries name (sorted, lowercased); empty when an entry names none, which
   * matches groups from any provider. Always empty for users.
   */
  readonly identityProviders: readonly string[];
}

/** Effective access, or the entries that cannot be honoured. */
export type AccessResult = { ok: true; subjects: SubjectAccess[] } | { ok: false; problems: string[] };

/**
 * Computes each user's and group's effective role: the team role, raised (never lowered) by environment access.
 * Users compare case-insensitively, groups exactly, as upstream does. An environment entry naming a subject
 * absent from `spec.access` cannot be honoured: upstream's webhook message is returned for it.
 */
export function effectiveAccess(spec: TeamSpec): AccessResult {
  const users = new Map<string, { name: string; role: Role }>();
  for (const u of spec.access.users ?? []) {
    const key = u.name.toLowerCase();
    const prev = users.get(key);
    users.set(key, { name: prev?.name ?? u.name, role: higher(prev?.role ?? "viewer", u.role ?? "viewer") });
  }
  const groups = new Map<string, { name: string; role: Role; idps?: Set<string> }>();
  for (const g of spec.access.groups ?? []) {
    const prev = groups.get(g.name);
    // An entry without an identity provider matches every provider, so it widens the group to all of them.
    const idps = (prev && !prev.idps) || !g.identityProvider
      ? undefined
      : new Set([...(prev?.idps ?? []), g.identityProvider.toLowerCase()]);
    groups.set(g.name, {
      name: g.name,
      role: higher(prev?.role ?? "viewer", g.role ?? "viewer"),
      ...(idps ? { idps } : {}),
    });
  }
  const envRoles = new Map<string, Record<string, Role>>();
  const problems: string[] = [];
  (spec.environments ?? []).forEach((env, i) => {
    for (const u of env.access?.users ?? []) {
      const key = u.name.toLowerCase();
      if (!users.has(key)) {
        problems.push(
          `spec.environments[${i}].access.users[${
            JSON.stringify(u.name)
          }] is not a team member; env access is additive only and cannot introduce subjects absent from spec.access.users`,
        );
        continue;
      }
      const roles = envRoles.get(`User:${key}`) ?? {};
      roles[env.name] = higher(roles[env.name] ?? "viewer", u.role ?? "viewer");
      envRoles.set(`User:${key}`, roles);
    }
    for (const g of env.access?.groups ?? []) {
      if (!groups.has(g.name)) {
        problems.push(
          `spec.environments[${i}].access.groups[${
            JSON.stringify(g.name)
          }] is not a team group; env access is additive only and cannot introduce groups absent from spec.access.groups`,
        );
        continue;
      }
      const roles = envRoles.get(`Group:${g.name}`) ?? {};
      roles[env.name] = higher(roles[env.name] ?? "viewer", g.role ?? "viewer");
      envRoles.set(`Group:${g.name}`, roles);
    }
  });
  if (problems.length) return { ok: false, problems };

  const envNames = (spec.environments ?? []).map((e) => e.name);
  const build = (
    kind: "User" | "Group",
    key: string,
    s: { name: string; role: Role; idps?: Set<string> },
  ): SubjectAccess => {
    const raised = envRoles.get(`${kind}:${key}`) ?? {};
    const environments = Object.fromEntries(envNames.map((e) => [e, higher(s.role, raised[e] ?? "viewer")]));
    const identityProviders = [...(s.idps ?? [])].sort();
    return { kind, name: s.name, teamRole: s.role, environments, identityProviders };
  };
  return {
    ok: true,
    subjects: [
      ...[...users.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, s]) =>
        build("User", k, s)
      ),
      ...[...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, s]) =>
        build("Group", k, s)
      ),
    ],
  };
}
