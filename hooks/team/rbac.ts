import { GROUP, LABELS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { buildObject, type KubeObject, type TypeRef } from "../../lib/contract/mod.ts";
import { formatQuantity, parseQuantity } from "../../lib/quantity/mod.ts";
import { elevatedByEnvironment, type SubjectAccess } from "./access.ts";
import type { HookConfig } from "../../lib/hook_context/mod.ts";
import { groupSubjects } from "./groups.ts";
import type { Role, TeamSpec } from "../../lib/api/mod.ts";
import { teamNamespace } from "../../lib/api/mod.ts";
import { fnv1a32 } from "../../lib/hash/mod.ts";

/** Child types of the Team controller, with the exact apiVersions declared in its CompositeController. */
export const CHILD_TYPES = {
  Namespace: { apiVersion: "v1", kind: "Namespace" },
  Role: { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
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
  return fnv1a32(new TextEncoder().encode(text)).toString(16).padStart(8, "0");
}

/**
 * Upstream's sanitizeName: lowercase, `[a-z0-9-]` kept, anything else `-`, trimmed of `-`. Linear in the name's
 * length: the trim is a scan, not `/-+$/`, which V8 retries from every `-` of every run (quadratic: 40,000
 * characters took half a second).
 *
 * @example
 * ```ts
 * sanitize("-Alice.Smith@Example.com-"); // "alice-smith-example-com"
 * ```
 */
export function sanitize(name: string): string {
  const s = name.toLowerCase().replace(/[^a-z0-9-]/g, "-");
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === DASH) start++;
  while (end > start && s.charCodeAt(end - 1) === DASH) end--;
  return s.slice(start, end);
}

const DASH = 45;

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

/**
 * The name of the Role (and, with `-users`/`-groups`, of its RoleBindings) that carries the elevations of one
 * environment: environment names may hold `_`, `.` and capitals, which object names may not, so the sanitised
 * name is followed by a hash of the exact one.
 *
 * @example
 * ```ts
 * environmentRoleName("prod"); // "butler-env-prod-<8 hex>"
 * ```
 */
export function environmentRoleName(environment: string): string {
  const base = sanitize(environment).slice(0, 32).replace(/-+$/, "");
  return `butler-env-${base ? `${base}-` : ""}${shortHash(`Environment:${environment}`)}`;
}

/**
 * The virtual subresource the admission policy `butler-tenantcluster-environment` asks RBAC about: may the
 * requester create, update or delete TenantClusters labelled with environment `<name>` (the resource name)? The
 * team roles operator and admin hold it for every environment; an environment elevation for that one.
 */
export const ENVIRONMENT_SUBRESOURCE = "tenantclusters/environment";

/**
 * The RoleBinding in each team namespace (and the ClusterRole it binds, `manifests/components/reporter/rbac.yaml`)
 * that lets the LoadBalancer reporter get the tenant kubeconfig Secrets there.
 */
export const REPORTER_BINDING = "butler-reporter-kubeconfigs";

/** The resource lists of a LimitRange item. The server also fills in `default`/`defaultRequest` from `max`/`min`
 * for containers; those are additions the three-way merge keeps, so they need not be asked for. */
const LIMIT_RANGE_LISTS = ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"];

/**
 * Rewrites the quantities of the named resource lists in their canonical form (`1000m` -> `1`, `1024Mi` ->
 * `1Gi`), the form the API server stores: a child asked for in another form would differ from what is stored
 * and be updated on every sync. A value that does not parse is left for the API server to refuse.
 */
export function canonicalQuantities(obj: unknown, lists: readonly string[]): Record<string, unknown> {
  const out = { ...(obj as Record<string, unknown>) };
  for (const key of lists) {
    const list = out[key];
    if (!list || typeof list !== "object" || Array.isArray(list)) continue;
    out[key] = Object.fromEntries(
      Object.entries(list).map(([resource, value]) => {
        const q = typeof value === "string" || typeof value === "number" ? parseQuantity(value) : undefined;
        return [resource, q?.ok ? formatQuantity(q.value) : value];
      }),
    );
  }
  return out;
}

function labels(team: string): Record<string, string> {
  return { [LABELS.team]: team, [LABELS.managedBy]: "butler" };
}

/** How group names become RBAC subjects: the configuration {@linkcode groupSubjects} reads. */
export type GroupNaming = Pick<HookConfig, "oidcGroupsPrefix" | "idpGroupPrefixes">;

function subjectsOf(s: SubjectAccess, naming: GroupNaming) {
  return s.kind === "User"
    ? [{ kind: "User", apiGroup: "rbac.authorization.k8s.io", name: s.name }]
    : groupSubjects(s.name, s.identityProviders, naming)
      .map((name) => ({ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name }));
}

/** The RBAC subjects of several Team subjects, each once: two Team groups can name one subject (a prefix spelled into a name). */
function uniqueSubjects(of: readonly SubjectAccess[], naming: GroupNaming) {
  return [...new Map(of.flatMap((s) => subjectsOf(s, naming)).map((x) => [x.name, x])).values()];
}

/** Every child the Team wants, in a stable order. */
export function desiredChildren(
  team: { name: string; spec: TeamSpec },
  subjects: readonly SubjectAccess[],
  naming: GroupNaming,
): KubeObject[] {
  const ns = teamNamespace(team.name);
  const l = labels(team.name);
  return [
    buildObject(CHILD_TYPES.Namespace, {
      name: ns,
      labels: l,
      ...(team.spec.description ? { annotations: { [`${GROUP}/description`]: team.spec.description } } : {}),
    } as never, {}),
    ...teamRoleBindings(ns, l, subjects, naming),
    reporterBinding(ns, l),
    ...environmentElevations(team.spec, ns, l, subjects, naming),
    ...perTeamRbac(team.name, l, subjects, naming),
    ...namespaceQuota(team.spec, ns, l),
  ];
}

type Labels = ReturnType<typeof labels>;

/** A RoleBinding per user and group, to the ClusterRole of its team role, sorted by name. */
function teamRoleBindings(
  ns: string,
  l: Labels,
  subjects: readonly SubjectAccess[],
  naming: GroupNaming,
): KubeObject[] {
  return subjects.map((s) =>
    buildObject(
      CHILD_TYPES.RoleBinding,
      { name: roleBindingName(s.kind, s.name), namespace: ns, labels: l },
      {
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: roleClusterRole(s.teamRole),
        },
        subjects: subjectsOf(s, naming),
      },
    )
  ).sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
}

/**
 * The reporter reads the tenant kubeconfig Secrets of this team's clusters: it may get Secrets here, in team
 * namespaces only, not cluster-wide (where butler-system holds the CA key and provider credentials). Harmless
 * without the reporter component: the ServiceAccount does not exist.
 */
function reporterBinding(ns: string, l: Labels): KubeObject {
  return buildObject(
    CHILD_TYPES.RoleBinding,
    { name: REPORTER_BINDING, namespace: ns, labels: l },
    {
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REPORTER_BINDING },
      subjects: [{ kind: "ServiceAccount", name: "butler-reporter", namespace: SYSTEM_NAMESPACE }],
    },
  );
}

/**
 * An environment elevation grants what the seed gives it, creating, changing and deleting TenantClusters
 * labelled with that environment, never the team role's Secrets or ProviderConfigs namespace-wide. RBAC grants
 * the TenantCluster verbs in the namespace so the request reaches admission; the policy then requires the
 * environment, as a resource name of the virtual subresource, to be granted too. An elevation to admin grants
 * the same: nothing else is scoped to an environment. An operator or admin of the team needs none.
 */
function environmentElevations(
  spec: TeamSpec,
  ns: string,
  l: Labels,
  subjects: readonly SubjectAccess[],
  naming: GroupNaming,
): KubeObject[] {
  const children: KubeObject[] = [];
  const byEnvironment = elevatedByEnvironment(subjects);
  for (const env of spec.environments ?? []) {
    const elevated = byEnvironment.get(env.name);
    if (!elevated) continue;
    const role = environmentRoleName(env.name);
    children.push(buildObject(CHILD_TYPES.Role, { name: role, namespace: ns, labels: l }, {
      rules: [
        { apiGroups: [GROUP], resources: ["tenantclusters"], verbs: ["create", "update", "patch", "delete"] },
        {
          apiGroups: [GROUP],
          resources: [ENVIRONMENT_SUBRESOURCE],
          resourceNames: [env.name],
          verbs: ["create", "update", "delete"],
        },
      ],
    }));
    for (const [kind, suffix] of [["User", "users"], ["Group", "groups"]] as const) {
      const of = elevated.filter((s) => s.kind === kind);
      if (of.length === 0) continue;
      children.push(
        buildObject(CHILD_TYPES.RoleBinding, { name: `${role}-${suffix}`, namespace: ns, labels: l }, {
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: role },
          subjects: uniqueSubjects(of, naming),
        }),
      );
    }
  }
  return children;
}

/**
 * The per-team ClusterRoles and their bindings: every member reads the Team, its admins update it and its
 * environment limits.
 */
function perTeamRbac(
  name: string,
  l: Labels,
  subjects: readonly SubjectAccess[],
  naming: GroupNaming,
): KubeObject[] {
  const children: KubeObject[] = [];
  const teamRule = (verbs: string[]) => [{
    apiGroups: [GROUP],
    resources: ["teams"],
    resourceNames: [name],
    verbs,
  }];
  const perTeam: [string, string[], SubjectAccess[]][] = [
    [`butler-team-${name}-member`, ["get", "list", "watch"], [...subjects]],
    [
      `butler-team-${name}-admin`,
      ["get", "update", "patch"],
      subjects.filter((s) => s.teamRole === "admin"),
    ],
  ];
  // Team admins may change environment limits: the admission policy asks RBAC for `update` on the virtual
  // subresource `teams/environmentlimits` of this Team (platform admins hold it for every Team).
  const environmentLimits = {
    apiGroups: [GROUP],
    resources: ["teams/environmentlimits"],
    resourceNames: [name],
    verbs: ["update"],
  };
  for (const [role, verbs] of perTeam) {
    const rules = role.endsWith("-admin") ? [...teamRule(verbs), environmentLimits] : teamRule(verbs);
    children.push(buildObject(CHILD_TYPES.ClusterRole, { name: role, labels: l }, { rules }));
  }
  // One binding per subject kind: Metacontroller merges `subjects` as a list keyed by name, so a User and a
  // Group of the same name in one binding would collapse into one of them. A binding with no subject is left
  // out (the API server drops an empty list, which would make every sync an update).
  for (const [role, , members] of perTeam) {
    for (const [kind, suffix] of [["User", ""], ["Group", "-groups"]] as const) {
      const of = members.filter((s) => s.kind === kind);
      if (of.length === 0) continue;
      children.push(buildObject(CHILD_TYPES.ClusterRoleBinding, { name: `${role}${suffix}`, labels: l }, {
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: uniqueSubjects(of, naming),
      }));
    }
  }
  return children;
}

/** The `namespaceQuota` ResourceQuotas and LimitRanges, quantities canonical. */
function namespaceQuota(spec: TeamSpec, ns: string, l: Labels): KubeObject[] {
  const children: KubeObject[] = [];
  for (const q of spec.namespaceQuota?.resourceQuotas ?? []) {
    children.push(
      buildObject(CHILD_TYPES.ResourceQuota, { name: q.name, namespace: ns, labels: l }, {
        spec: canonicalQuantities(q.spec, ["hard"]),
      }),
    );
  }
  for (const r of spec.namespaceQuota?.limitRanges ?? []) {
    const rs = r.spec as { limits?: unknown };
    const limits = Array.isArray(rs.limits)
      ? rs.limits.map((item) => canonicalQuantities(item, LIMIT_RANGE_LISTS))
      : rs.limits;
    children.push(
      buildObject(CHILD_TYPES.LimitRange, { name: r.name, namespace: ns, labels: l }, {
        spec: { ...rs, ...(limits === undefined ? {} : { limits }) },
      }),
    );
  }
  return children;
}
