import { GROUP, LABELS } from "../../lib/butler/mod.ts";
import { buildObject, type KubeObject, type TypeRef } from "../../lib/contract/mod.ts";
import type { SubjectAccess } from "./access.ts";
import { groupSubject } from "./groups.ts";
import type { Role, TeamSpec } from "./schema.ts";
import { teamNamespace } from "./schema.ts";

/** Child types of the Team controller, with the exact apiVersions declared in its CompositeController. */
export const CHILD_TYPES = {
  Namespace: { apiVersion: "v1", kind: "Namespace" },
  RoleBinding: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
  ClusterRole: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole" },
  ClusterRoleBinding: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding" },
  ResourceQuota: { apiVersion: "v1", kind: "ResourceQuota" },
  LimitRange: { apiVersion: "v1", kind: "LimitRange" },
} as const satisfies Record<string, TypeRef>;

/** The shipped ClusterRole each team role binds to (see `manifests/rbac/team-roles.yaml`). */
export function roleClusterRole(role: Role): string {
  return `butler-team-${role}`;
}

/** FNV-1a, 32 bits, as 8 hex digits: a short, stable, dependency-free hash for names. */
export function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** Upstream's sanitizeName: lowercase, `[a-z0-9-]` kept, anything else `-`, trimmed of `-`. */
export function sanitize(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]/g, "-").replace(/^-+|-+$/g, "");
}

/**
 * A RoleBinding name that cannot collide: sanitised subject (which alone can: `a.b@x` and `a-b@x`) plus a hash
 * of the exact subject, within 63 characters.
 *
 * @example
 * ```ts
 * roleBindingName("User", "alice@example.com"); // "butler-user-alice-example-com-<8 hex>"
 * ```
 */
export function roleBindingName(kind: "User" | "Group", subject: string): string {
  const key = kind === "User" ? subject.toLowerCase() : subject;
  const base = sanitize(subject).slice(0, 40).replace(/-+$/, "");
  return `butler-${kind.toLowerCase()}-${base ? `${base}-` : ""}${shortHash(`${kind}:${key}`)}`;
}

function labels(team: string): Record<string, string> {
  return { [LABELS.team]: team, [LABELS.managedBy]: "butler" };
}

function subjectOf(s: SubjectAccess, groupsPrefix: string) {
  return s.kind === "User"
    ? { kind: "User", apiGroup: "rbac.authorization.k8s.io", name: s.name }
    : { kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: groupSubject(s.name, groupsPrefix) };
}

/** Every child the Team wants, in a stable order. */
export function desiredChildren(
  team: { name: string; spec: TeamSpec },
  subjects: readonly SubjectAccess[],
  groupsPrefix: string,
): KubeObject[] {
  const ns = teamNamespace(team.name);
  const l = labels(team.name);
  const children: KubeObject[] = [];
  children.push(buildObject(CHILD_TYPES.Namespace, {
    name: ns,
    labels: l,
    ...(team.spec.description ? { annotations: { [`${GROUP}/description`]: team.spec.description } } : {}),
  } as never, {}));
  const bindings = subjects.map((s) =>
    buildObject(
      CHILD_TYPES.RoleBinding,
      { name: roleBindingName(s.kind, s.name), namespace: ns, labels: l },
      {
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: roleClusterRole(s.highest),
        },
        subjects: [subjectOf(s, groupsPrefix)],
      },
    )
  ).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  children.push(...bindings);

  const teamRule = (verbs: string[]) => [{
    apiGroups: [GROUP],
    resources: ["teams"],
    resourceNames: [team.name],
    verbs,
  }];
  const perTeam: [string, string[], SubjectAccess[]][] = [
    [`butler-team-${team.name}-member`, ["get", "list", "watch"], [...subjects]],
    [
      `butler-team-${team.name}-admin`,
      ["get", "update", "patch"],
      subjects.filter((s) => s.teamRole === "admin"),
    ],
  ];
  for (const [name, verbs] of perTeam) {
    children.push(buildObject(CHILD_TYPES.ClusterRole, { name, labels: l }, { rules: teamRule(verbs) }));
  }
  for (const [name, , members] of perTeam) {
    children.push(buildObject(CHILD_TYPES.ClusterRoleBinding, { name, labels: l }, {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: members.map((s) => subjectOf(s, groupsPrefix)),
    }));
  }
  for (const q of team.spec.namespaceQuota?.resourceQuotas ?? []) {
    children.push(
      buildObject(CHILD_TYPES.ResourceQuota, { name: q.name, namespace: ns, labels: l }, { spec: q.spec }),
    );
  }
  for (const r of team.spec.namespaceQuota?.limitRanges ?? []) {
    children.push(
      buildObject(CHILD_TYPES.LimitRange, { name: r.name, namespace: ns, labels: l }, { spec: r.spec }),
    );
  }
  return children;
}
