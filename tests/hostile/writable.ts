/**
 * What a team may write, read from what is shipped rather than listed by hand: the team roles' ClusterRoles
 * (`manifests/rbac/team-roles.yaml`) and the Roles and ClusterRoles the Team hook asks for (`hooks/team/rbac.ts`),
 * followed from the bindings that reach a team admin and a team operator; for each resource they may create,
 * update or patch, its schema: the CRD's `openAPIV3Schema` (`manifests/crds`), or, for a built-in kind, the
 * bounds the API server puts on it. A resource the roles may write and no schema here describes fails the
 * generator: a new grant is searched, or the tier says why not.
 *
 * @module
 */
import { desiredChildren, effectiveAccess } from "../../hooks/team/mod.ts";
import type { TeamSpec } from "../../lib/api/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { crdKinds, type Schema } from "../../lib/schema/mod.ts";
import { loadKustomization, type Manifest } from "../../lib/testing/mod.ts";

/** The team roles that may write (viewers write nothing). */
export type TeamRole = "admin" | "operator";

/** The verbs that store what a caller sends. */
export const WRITE_VERBS: readonly string[] = ["create", "update", "patch"];

export type { Schema };

/** A kind a team role may write, with who may, how, and its schema. */
export interface Target {
  readonly kind: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly namespaced: boolean;
  /** The roles that may write it, and the verbs each may use. */
  readonly writers: Readonly<Partial<Record<TeamRole, readonly string[]>>>;
  /** The names it may be written under, when a rule names them (a team's own Team). */
  readonly names?: readonly string[];
  readonly schema: Schema;
}

/**
 * The built-in kinds a team role may write, as the API server bounds them: a Secret's `data` holds at most
 * 1 MiB (`Too long: must have at most 1048576 bytes`), its keys are config keys.
 */
const BUILT_IN: Readonly<Record<string, Omit<Target, "writers" | "names">>> = {
  "/secrets": {
    kind: "Secret",
    apiVersion: "v1",
    resource: "secrets",
    namespaced: true,
    schema: {
      type: "object",
      properties: {
        type: { type: "string", maxLength: 253 },
        data: { type: "object", additionalProperties: { type: "string", format: "byte" } },
        stringData: { type: "object", additionalProperties: { type: "string" } },
      },
    },
  },
};

/** The members of a team: one admin, one operator, as the generator impersonates them. */
export const TEAM_USERS: Readonly<Record<TeamRole, string>> = {
  admin: "mallory@example.com",
  operator: "oscar@example.com",
};

interface Rule {
  readonly apiGroups?: readonly string[];
  readonly resources?: readonly string[];
  readonly verbs?: readonly string[];
  readonly resourceNames?: readonly string[];
}

/** The Team the generator's team is: its two members and nothing else. */
export function hostileTeamSpec(): TeamSpec {
  return {
    access: {
      users: [{ name: TEAM_USERS.admin, role: "admin" }, { name: TEAM_USERS.operator, role: "operator" }],
    },
  } as TeamSpec;
}

/** The rules that reach `user`: through every binding (shipped or the Team hook's) that names them. */
function rulesOf(user: string, objects: readonly Manifest[]): Rule[] {
  const roles = new Map(
    objects.filter((o) => o.kind === "ClusterRole" || o.kind === "Role")
      .map((o) => [`${o.kind}/${o.metadata.name}`, (o.rules ?? []) as Rule[]]),
  );
  return objects
    .filter((o) => o.kind === "ClusterRoleBinding" || o.kind === "RoleBinding")
    .filter((b) => (b.subjects ?? []).some((s: Manifest) => s.kind === "User" && s.name === user))
    .flatMap((b) => roles.get(`${b.roleRef.kind}/${b.roleRef.name}`) ?? []);
}

/**
 * The kinds a team admin or operator may write, derived from the shipped manifests under `root` and the Team
 * hook's children for team `team`.
 */
export function writableTargets(root: string, team: string): Target[] {
  const shipped = loadKustomization(`${root}/manifests`);
  const spec = hostileTeamSpec();
  const access = effectiveAccess(spec);
  if (!access.ok) throw new Error(access.problems.join("; "));
  const children = desiredChildren({ name: team, spec }, access.subjects, DEFAULT_HOOK_CONFIG) as Manifest[];
  const objects = [...shipped, ...children];
  const crds = new Map([...crdKinds(shipped).values()].map((k) => [`${k.group}/${k.plural}`, k]));
  const grants = new Map<string, { writers: Record<string, Set<string>>; names?: Set<string> }>();
  for (const role of Object.keys(TEAM_USERS) as TeamRole[]) {
    for (const rule of rulesOf(TEAM_USERS[role], objects)) {
      const verbs = (rule.verbs ?? []).filter((v) => WRITE_VERBS.includes(v) || v === "*");
      if (!verbs.length) continue;
      for (const group of rule.apiGroups ?? []) {
        // A virtual subresource (tenantclusters/environment) is a permission the policies ask about, not a store.
        for (const resource of (rule.resources ?? []).filter((r) => !r.includes("/"))) {
          const key = `${group}/${resource}`;
          const g = grants.get(key) ?? { writers: {} };
          for (const v of verbs) (g.writers[role] ??= new Set()).add(v);
          if (rule.resourceNames?.length) {
            g.names = new Set([...(g.names ?? []), ...rule.resourceNames]);
          }
          grants.set(key, g);
        }
      }
    }
  }
  return [...grants].sort(([a], [b]) => a < b ? -1 : 1).map(([key, g]) => {
    const writers = Object.fromEntries(Object.entries(g.writers).map(([r, v]) => [r, [...v].sort()]));
    const names = g.names ? { names: [...g.names].sort() } : {};
    const crd = crds.get(key);
    if (crd) {
      return {
        kind: crd.kind,
        apiVersion: `${crd.group}/${crd.version}`,
        resource: crd.plural,
        namespaced: crd.namespaced,
        writers,
        ...names,
        schema: crd.schema,
      };
    }
    const builtIn = BUILT_IN[key];
    if (!builtIn) throw new Error(`team roles may write ${key}, which the generator has no schema for`);
    return { ...builtIn, writers, ...names };
  });
}

/** Where a schema lets a writer put anything: `x-kubernetes-preserve-unknown-fields`, as paths (`[]`: any item). */
export function freeFormPaths(schema: Schema, path: readonly string[] = []): string[][] {
  const here = schema["x-kubernetes-preserve-unknown-fields"] && !schema.properties ? [[...path]] : [];
  const props = Object.entries(schema.properties ?? {})
    // Status is a subresource no team role writes; metadata is ObjectMeta (its places are the API server's).
    .filter(([k]) => !(path.length === 0 && (k === "status" || k === "metadata")))
    .flatMap(([k, s]) => freeFormPaths(s, [...path, k]));
  const items = schema.items ? freeFormPaths(schema.items, [...path, "[]"]) : [];
  return [...here, ...props, ...items];
}
