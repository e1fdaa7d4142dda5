/**
 * docs/design.md#invariants: no RoleBinding ever grants more than the role the Team spec gives that subject: the
 * namespace-wide binding carries its team role; an environment elevation only adds TenantCluster changes in that
 * environment. Also: binding names are deterministic and never collide.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  desiredChildren,
  effectiveAccess,
  environmentRoleName,
  REPORTER_BINDING,
  roleBindingName,
  type SubjectAccess,
} from "../../hooks/team/mod.ts";
import { type Role, ROLES, type TeamSpec } from "../../lib/api/mod.ts";

const role = fc.constantFrom<Role>(...ROLES);
// Names chosen to collide after sanitising: dots, dashes, case, @.
const userName = fc.constantFrom(
  "a.b@x.io",
  "a-b@x.io",
  "A.B@x.io",
  "alice@example.com",
  "ALICE@example.com",
  "bob@x",
  "b@o.b",
  "ops@x.io", // also a group name: a User and a Group named alike
);
const groupName = fc.constantFrom("devs", "Devs", "d.e.v.s", "d-e-v-s", "CN=Ops,OU=x", "ops@x.io", "g:devs");
// Identity providers with and without a configured prefix, in either case; the "g:" prefix makes "devs" of
// google-workspace and the group named "g:devs" one subject.
const identityProvider = fc.option(fc.constantFrom("google-workspace", "Google-Workspace", "okta"), {
  nil: undefined,
});
const NAMING = { oidcGroupsPrefix: "oidc:", idpGroupPrefixes: { "google-workspace": "g:" } };
const NO_PREFIX = { oidcGroupsPrefix: "", idpGroupPrefixes: {} };

const spec: fc.Arbitrary<TeamSpec> = fc.record({
  users: fc.array(fc.record({ name: userName, role }), { maxLength: 5 }),
  groups: fc.array(
    fc.record({ name: groupName, role, identityProvider }).map(({ identityProvider, ...g }) =>
      identityProvider ? { ...g, identityProvider } : g
    ),
    { maxLength: 4 },
  ),
  envs: fc.array(
    fc.record({
      users: fc.array(fc.record({ name: userName, role }), { maxLength: 3 }),
      groups: fc.array(fc.record({ name: groupName, role }), { maxLength: 2 }),
    }),
    { maxLength: 3 },
  ),
}).map(({ users, groups, envs }) => ({
  access: { users, groups },
  environments: envs.map((e, i) => ({ name: `env${i}`, access: { users: e.users, groups: e.groups } })),
}));

const rank = (r: Role) => ROLES.indexOf(r);

Deno.test("RoleBindings never grant more than the spec gives; names are unique", () => {
  fc.assert(
    fc.property(spec, (s) => {
      const access = effectiveAccess(s);
      const known = (kind: string, n: string) =>
        kind === "User"
          ? (s.access.users ?? []).some((u) => u.name.toLowerCase() === n.toLowerCase())
          : (s.access.groups ?? []).some((g) => g.name === n);
      const everyEnvEntryKnown = (s.environments ?? []).every((e) =>
        (e.access?.users ?? []).every((u) => known("User", u.name)) &&
        (e.access?.groups ?? []).every((g) => known("Group", g.name))
      );
      assert.equal(access.ok, everyEnvEntryKnown, "refused exactly when an env entry names an outsider");
      if (!access.ok) return;
      const children = desiredChildren({ name: "t", spec: s }, access.subjects, NAMING);
      const bindings = children.filter((c) => c.kind === "RoleBinding") as unknown as {
        metadata: { name: string };
        roleRef: { name: string };
        subjects: { kind: string; name: string }[];
      }[];
      const names = bindings.map((b) => b.metadata.name);
      assert.equal(new Set(names).size, names.length, "no two bindings share a name");
      for (const b of names) assert.ok(b.length <= 63);
      // Which Team subject each binding is for, by its deterministic name.
      const teamSubjects = new Map(
        [
          ...(s.access.users ?? []).map((u) => ["User", u.name] as const),
          ...(s.access.groups ?? []).map((g) => ["Group", g.name] as const),
        ].map(([kind, name]) => [roleBindingName(kind, name), { kind, name }]),
      );
      // The reporter's: exactly its ServiceAccount, to read kubeconfig Secrets here; no Team subject.
      const reporter = bindings.filter((b) => b.metadata.name === REPORTER_BINDING);
      assert.equal(reporter.length, 1);
      assert.deepEqual(reporter[0]!.roleRef.name, REPORTER_BINDING);
      assert.deepEqual(reporter[0]!.subjects, [
        { kind: "ServiceAccount", name: "butler-reporter", namespace: "butler-system" },
      ]);
      const subjectBindings = bindings.filter((b) =>
        !b.metadata.name.startsWith("butler-env-") && b.metadata.name !== REPORTER_BINDING
      );
      for (const b of subjectBindings) {
        const { kind, name } = teamSubjects.get(b.metadata.name)!;
        const granted = b.roleRef.name.replace("butler-team-", "") as Role;
        const same = (n: string) => (kind === "User" ? n.toLowerCase() === name.toLowerCase() : n === name);
        const entries = (kind === "User" ? s.access.users ?? [] : s.access.groups ?? []).filter((e) =>
          same(e.name)
        );
        const teamRole = entries.reduce<Role>(
          (r, e) => (rank(e.role ?? "viewer") > rank(r) ? e.role ?? "viewer" : r),
          "viewer",
        );
        assert.equal(granted, teamRole, `${kind} ${name}: the namespace binding carries the team role`);
        if (kind === "User") {
          assert.deepEqual(b.subjects.map((x) => `${x.kind}:${x.name.toLowerCase()}`), [
            `User:${name.toLowerCase()}`,
          ]);
          continue;
        }
        // Groups: under the prefix of each identity provider the Team's entries name, or of every provider when
        // one entry names none.
        const team = (s.access.groups ?? []).filter((g) => g.name === name) as {
          identityProvider?: string;
        }[];
        const prefixOf = (idp: string) =>
          (NAMING.idpGroupPrefixes as Record<string, string>)[idp.toLowerCase()] ?? NAMING.oidcGroupsPrefix;
        const prefixes = team.some((g) => !g.identityProvider)
          ? [NAMING.oidcGroupsPrefix, ...Object.values(NAMING.idpGroupPrefixes)]
          : team.map((g) => prefixOf(g.identityProvider!));
        assert.deepEqual(
          b.subjects.map((x) => `${x.kind}:${x.name}`),
          [...new Set(prefixes.map((p) => `Group:${p}${name}`))].sort(),
        );
      }
      assert.equal(subjectBindings.length, access.subjects.length, "one binding per distinct subject");
      // Environment elevations: a Role per environment granting TenantCluster changes there and nothing else,
      // bound to exactly the team viewers the environment raises.
      const roles = children.filter((c) => c.kind === "Role") as unknown as {
        metadata: { name: string };
        rules: { resources: string[]; resourceNames?: string[]; verbs: string[] }[];
      }[];
      for (const env of s.environments ?? []) {
        const role = environmentRoleName(env.name);
        // From the spec, not from effectiveAccess: a team viewer named in this environment's access with a
        // higher role.
        const elevated: SubjectAccess[] = access.subjects.filter((x: SubjectAccess) => {
          const sameName = (n: string) =>
            x.kind === "User" ? n.toLowerCase() === x.name.toLowerCase() : n === x.name;
          const entries = x.kind === "User" ? env.access?.users ?? [] : env.access?.groups ?? [];
          return x.teamRole === "viewer" &&
            entries.some((e) => sameName(e.name) && (e.role ?? "viewer") !== "viewer");
        });
        const bound = bindings.filter((b) => b.roleRef.name === role).flatMap((b) => b.subjects);
        const expected: string[] = elevated.flatMap((x: SubjectAccess) =>
          x.kind === "User"
            ? [`User:${x.name}`]
            : bindings.find((b) => b.metadata.name === roleBindingName("Group", x.name))!.subjects.map((y) =>
              `Group:${y.name}`
            )
        );
        assert.deepEqual(
          bound.map((x) => `${x.kind}:${x.name}`).sort(),
          [...new Set(expected)].sort(),
          `environment ${env.name}`,
        );
        const r = roles.find((x) => x.metadata.name === role);
        assert.equal(
          Boolean(r),
          elevated.length > 0,
          `environment ${env.name}: a Role only when it elevates`,
        );
        if (!r) continue;
        assert.deepEqual(r.rules.map((x) => [x.resources, x.resourceNames ?? []]), [
          [["tenantclusters"], []],
          [["tenantclusters/environment"], [env.name]],
        ]);
      }
      assert.equal(roles.length, new Set(roles.map((r) => r.metadata.name)).size);
      // With no groups prefix a User and a Group can share a name; Metacontroller merges subjects by name.
      for (const c of desiredChildren({ name: "t", spec: s }, access.subjects, NO_PREFIX)) {
        const subjects = (c as { subjects?: { name: string }[] }).subjects;
        if (!subjects) continue;
        assert.ok(subjects.length > 0, `${c.metadata.name}: no empty subjects list`);
        const subjectNames = subjects.map((x) => x.name);
        assert.equal(new Set(subjectNames).size, subjectNames.length, `${c.metadata.name}: ${subjectNames}`);
      }
      assert.deepEqual(
        desiredChildren({ name: "t", spec: s }, effectiveAccess(s).ok ? access.subjects : [], NAMING),
        children,
      );
    }),
    { numRuns: 500 },
  );
});
