import { type Role, ROLES, type TeamSpec } from "../../lib/api/mod.ts";

const rank = (r: Role) => ROLES.indexOf(r);

/** The higher of two roles. */
export function higher(a: Role, b: Role): Role {
  return rank(a) >= rank(b) ? a : b;
}

/**
 * One subject's team role and the environments whose access raises it. Only raises are kept (an environment
 * that does not raise a subject has its team role there), so what is held grows with the entries a Team writes,
 * never with users × environments.
 */
export interface SubjectAccess {
  readonly kind: "User" | "Group";
  /** The name as written in the Team (users first spelling wins). */
  readonly name: string;
  readonly teamRole: Role;
  /** The environments where this subject's role is higher than its team role, with that role. */
  readonly elevations: Readonly<Record<string, Role>>;
  /**
   * Groups: the identity providers its entries name (sorted, lowercased); empty when an entry names none, which
   * matches groups from any provider. Always empty for users.
   */
  readonly identityProviders: readonly string[];
}

/** Effective access, or the entries that cannot be honoured. */
export type AccessResult = { ok: true; subjects: SubjectAccess[] } | { ok: false; problems: string[] };

/** A subject as the team's `spec.access` names it, with the raises its environments add. */
interface Member {
  readonly name: string;
  role: Role;
  idps?: Set<string>;
  elevations?: Record<string, Role>;
}

const byKey = ([a]: [string, Member], [b]: [string, Member]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Computes each user's and group's effective role: the team role, raised (never lowered) by environment access.
 * Users compare case-insensitively, groups exactly, as upstream does. An environment entry naming a subject
 * absent from `spec.access` cannot be honoured: upstream's webhook message is returned for it. Linear in the
 * entries written: one pass over the team's entries, one over every environment's.
 */
export function effectiveAccess(spec: TeamSpec): AccessResult {
  const users = new Map<string, Member>();
  for (const u of spec.access.users ?? []) {
    const key = u.name.toLowerCase();
    const prev = users.get(key);
    if (prev) prev.role = higher(prev.role, u.role ?? "viewer");
    else users.set(key, { name: u.name, role: u.role ?? "viewer" });
  }
  const groups = new Map<string, Member>();
  for (const g of spec.access.groups ?? []) {
    const prev = groups.get(g.name);
    // An entry without an identity provider matches every provider, so it widens the group to all of them.
    const idp = g.identityProvider?.toLowerCase();
    if (!prev) {
      groups.set(g.name, {
        name: g.name,
        role: g.role ?? "viewer",
        ...(idp ? { idps: new Set([idp]) } : {}),
      });
      continue;
    }
    prev.role = higher(prev.role, g.role ?? "viewer");
    if (!idp) delete prev.idps;
    else prev.idps?.add(idp);
  }
  const problems: string[] = [];
  const raises: { member: Member; env: string; role: Role }[] = [];
  (spec.environments ?? []).forEach((env, i) => {
    for (const u of env.access?.users ?? []) {
      const member = users.get(u.name.toLowerCase());
      if (member) raises.push({ member, env: env.name, role: u.role ?? "viewer" });
      else {
        problems.push(
          `spec.environments[${i}].access.users[${
            JSON.stringify(u.name)
          }] is not a team member; env access is additive only and cannot introduce subjects absent from spec.access.users`,
        );
      }
    }
    for (const g of env.access?.groups ?? []) {
      const member = groups.get(g.name);
      if (member) raises.push({ member, env: env.name, role: g.role ?? "viewer" });
      else {
        problems.push(
          `spec.environments[${i}].access.groups[${
            JSON.stringify(g.name)
          }] is not a team group; env access is additive only and cannot introduce groups absent from spec.access.groups`,
        );
      }
    }
  });
  if (problems.length) return { ok: false, problems };
  // After every team entry is read: an environment raises a subject only above its final team role.
  for (const { member, env, role } of raises) {
    const now = member.elevations?.[env] ?? member.role;
    if (rank(role) > rank(now)) (member.elevations ??= {})[env] = role;
  }
  const build = (kind: "User" | "Group", s: Member): SubjectAccess => ({
    kind,
    name: s.name,
    teamRole: s.role,
    elevations: s.elevations ?? {},
    identityProviders: [...(s.idps ?? [])].sort(),
  });
  return {
    ok: true,
    subjects: [
      ...[...users.entries()].sort(byKey).map(([, s]) => build("User", s)),
      ...[...groups.entries()].sort(byKey).map(([, s]) => build("Group", s)),
    ],
  };
}

/**
 * The subjects each environment raises from team viewer to a role that may change its TenantClusters, by
 * environment: built from the raises that exist, never by asking every subject about every environment.
 */
export function elevatedByEnvironment(subjects: readonly SubjectAccess[]): Map<string, SubjectAccess[]> {
  const out = new Map<string, SubjectAccess[]>();
  for (const s of subjects) {
    if (s.teamRole !== "viewer") continue;
    for (const env of Object.keys(s.elevations)) {
      const list = out.get(env);
      if (list) list.push(s);
      else out.set(env, [s]);
    }
  }
  return out;
}
