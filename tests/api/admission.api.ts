/**
 * The ValidatingAdmissionPolicies of manifests/admission on a real API server, with impersonated users: who may
 * change a Team's limits (platform admins through butler-platform-admin, team admins through the Team's own
 * ClusterRole as its hook computes it), the environment label migration, creator/owner annotations that name
 * the requester, and environment roles that stay in their environment (the RBAC the Team hook writes plus the
 * policy). No webhook is involved: these hold with the hook service down.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { desiredChildren, effectiveAccess } from "../../hooks/team/mod.ts";
import type { TeamSpec } from "../../lib/api/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import {
  applyObject,
  type As,
  ensureNamespaces,
  installManifests,
  kubectl,
  kubectlOk,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const alice: As = { user: "alice@example.com" }; // team admin of payments
const bob: As = { user: "bob@example.com" }; // operator, admin only in prod
const carol: As = { user: "carol@example.com" }; // operator
const dave: As = { user: "dave@example.com" }; // viewer, operator only in prod (added to the seed's team here)
const pat: As = { user: "pat@example.com" }; // platform admin
const editor: As = { user: "editor@example.com" }; // may update and create Teams, holds no limit authority
const consoleSA: As = { user: "system:serviceaccount:butler-system:test-console" }; // impersonates users

const TEAM = "admission-payments";
const NS = `team-${TEAM}`;

const apply = (obj: unknown, as?: As) => applyObject(obj, as ? { as } : {});

/** A JSON merge patch as `as`, server-side dry run: the admission answer without changing anything. */
const patch = (resource: string, name: string, body: unknown, as: As, namespace?: string) =>
  kubectl([
    "patch",
    resource,
    name,
    ...(namespace ? ["-n", namespace] : []),
    "--type=merge",
    "--dry-run=server",
    "-p",
    JSON.stringify(body),
  ], { as });

const create = (obj: unknown, as: As) =>
  kubectl(["create", "--dry-run=server", "-f", "-"], { stdin: JSON.stringify(obj), as });

function denied(r: { code: number; stderr: string }, message: string): void {
  assert.notEqual(r.code, 0, "refused");
  assert.ok(r.stderr.includes(message), `expected "${message}" in: ${r.stderr}`);
}

function allowed(r: { code: number; stderr: string }): void {
  assert.equal(r.code, 0, r.stderr);
}

async function setUp(): Promise<Obj> {
  await installManifests();
  await ensureNamespaces([NS]);
  // The seed's payments team under a name of its own: other files of this tier use "payments".
  const team = parse(await Deno.readTextFile("examples/teams/payments.yaml")) as Obj;
  team.metadata.name = TEAM;
  team.spec.access.users.push({ name: "dave@example.com", role: "viewer" });
  team.spec.environments[1].access.users.push({ name: "dave@example.com", role: "operator" });
  await apply(team);
  // The Team's own ClusterRoles and bindings, exactly as its hook asks Metacontroller for them.
  const spec = team.spec as TeamSpec;
  const access = effectiveAccess(spec);
  assert.ok(access.ok);
  for (const child of desiredChildren({ name: TEAM, spec }, access.subjects, DEFAULT_HOOK_CONFIG)) {
    if (["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(child.kind)) {
      await apply(child);
    }
  }
  const rbac = `
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: test-platform-admins }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: butler-platform-admin }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: pat@example.com }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: test-team-editor }
rules:
  - { apiGroups: [butler.butlerlabs.dev], resources: [teams], verbs: [get, create, update, patch] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: test-team-editor }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test-team-editor }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: editor@example.com }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: test-console }
rules:
  - { apiGroups: [""], resources: [users], verbs: [impersonate] }
  - { apiGroups: [butler.butlerlabs.dev], resources: [tenantclusters], verbs: [get, create, update, patch] }
  - { apiGroups: [butler.butlerlabs.dev], resources: [tenantclusters/environment], verbs: [create, update] }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: { name: test-console }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: test-console }
subjects: [{ kind: ServiceAccount, name: test-console, namespace: butler-system }]
`;
  await kubectlOk(["apply", "--server-side", "--field-manager=butler-tests", "-f", "-"], { stdin: rbac });
  // A new policy binding takes effect within seconds, not at once: wait until it answers.
  const mark = "ValidatingAdmissionPolicy 'butler-team-limits'";
  const r = await untilRun(
    () => patch("team", TEAM, { spec: { resourceLimits: { maxClusters: 41 } } }, alice),
    (r) => r.stderr.includes(mark),
  );
  if (!r.stderr.includes(mark)) throw new Error(`the Team policy never took effect: ${r.stderr || r.code}`);
  return team;
}

Deno.test("who may change a Team's limits", async (t) => {
  await setUp();
  await t.step("a team admin may not change resourceLimits", async () => {
    denied(
      await patch("team", TEAM, { spec: { resourceLimits: { maxClusters: 40 } } }, alice),
      'spec.resourceLimits may only be modified by platform admins; user "alice@example.com" is not a platform admin',
    );
  });
  await t.step("a platform admin may", async () => {
    allowed(await patch("team", TEAM, { spec: { resourceLimits: { maxClusters: 40 } } }, pat));
  });
  const envLimits = {
    spec: {
      environments: [
        { name: "dev", limits: { maxClustersPerMember: 3 } },
        { name: "prod", limits: { maxClusters: 6, maxClustersPerMember: 1 } },
      ],
    },
  };
  await t.step("a team admin may change environment limits, and so may a platform admin", async () => {
    allowed(await patch("team", TEAM, envLimits, alice));
    allowed(await patch("team", TEAM, envLimits, pat));
  });
  await t.step("someone who may update Teams but is neither may not", async () => {
    denied(
      await patch("team", TEAM, envLimits, editor),
      'spec.environments[].limits may only be modified by team admins of "admission-payments" or platform admins; user "editor@example.com" is neither',
    );
    allowed(await patch("team", TEAM, { spec: { description: "any other field" } }, editor));
  });
  await t.step("an environment-only admin is not a team admin: RBAC refuses the update itself", async () => {
    const r = await patch("team", TEAM, { spec: { description: "x" } }, bob);
    assert.match(r.stderr, /User "bob@example\.com" cannot patch resource "teams"/);
  });
  await t.step("spec.namespaceQuota is the platform's too: a team admin may not change it", async () => {
    const quota = {
      spec: {
        namespaceQuota: { resourceQuotas: [{ name: "compute", spec: { hard: { "requests.cpu": "64" } } }] },
      },
    };
    denied(
      await patch("team", TEAM, quota, alice),
      'spec.namespaceQuota may only be modified by platform admins; user "alice@example.com" is not a platform admin',
    );
    allowed(await patch("team", TEAM, quota, pat));
  });
  await t.step("creating a Team with limits takes a platform admin", async () => {
    const team = (spec: Obj) => ({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: "new-team" },
      spec: { access: { users: [{ name: "editor@example.com", role: "admin" }] }, ...spec },
    });
    denied(
      await create(team({ resourceLimits: { maxClusters: 2 } }), editor),
      'spec.resourceLimits may only be set by platform admins; user "editor@example.com" is not a platform admin',
    );
    denied(
      await create(
        team({ environments: [{ name: "dev" }, { name: "prod", limits: { maxClusters: 1 } }] }),
        editor,
      ),
      'spec.environments[1].limits on a new team may only be set by platform admins; user "editor@example.com" is not a platform admin',
    );
    allowed(await create(team({ environments: [{ name: "dev" }] }), editor));
    allowed(await create(team({ resourceLimits: { maxClusters: 2 } }), pat));
    denied(
      await create(
        team({ namespaceQuota: { limitRanges: [{ name: "small", spec: { limits: [] } }] } }),
        editor,
      ),
      'spec.namespaceQuota may only be set by platform admins; user "editor@example.com" is not a platform admin',
    );
  });
});

Deno.test("TenantCluster: environment label migration and the requester's identity", async (t) => {
  await setUp();
  const cluster = (name: string, annotations: Record<string, string> = {}, env = "dev") => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: {
      name,
      namespace: NS,
      labels: { "butler.butlerlabs.dev/environment": env },
      annotations,
    },
    spec: { providerConfigRef: { name: "harvester-prod" } },
  });
  await t.step("creator-email and owner may name the requester (any case), nobody else", async () => {
    allowed(
      await create(cluster("c1", { "butler.butlerlabs.dev/creator-email": "Carol@Example.com" }), carol),
    );
    denied(
      await create(cluster("c2", { "butler.butlerlabs.dev/creator-email": "bob@example.com" }), carol),
      'butler.butlerlabs.dev/creator-email must match the requesting identity "carol@example.com"; an annotation cannot claim a different user',
    );
    denied(
      await create(cluster("c3", { "butler.butlerlabs.dev/owner": "bob@example.com" }), carol),
      'butler.butlerlabs.dev/owner must match the requesting identity "carol@example.com"',
    );
  });
  await t.step(
    "unless the requester may impersonate that user (the console) or is a platform admin",
    async () => {
      allowed(
        await create(cluster("c4", { "butler.butlerlabs.dev/creator-email": "bob@example.com" }), consoleSA),
      );
      allowed(await create(cluster("c5", { "butler.butlerlabs.dev/owner": "bob@example.com" }), pat));
    },
  );
  await t.step("the environment label changes only through a migration", async () => {
    await apply(cluster("migrating", { "butler.butlerlabs.dev/creator-email": "carol@example.com" }));
    const move = { metadata: { labels: { "butler.butlerlabs.dev/environment": "prod" } } };
    const message =
      'env label changes require the "butler.butlerlabs.dev/migration-operation" annotation set to "true"; use `butleradm env migrate`';
    denied(await patch("tenantcluster", "migrating", move, carol, NS), message);
    denied(await patch("tenantcluster", "migrating", move, pat, NS), message);
    const removed = { metadata: { labels: { "butler.butlerlabs.dev/environment": null } } };
    denied(await patch("tenantcluster", "migrating", removed, carol, NS), message);
    const migration = {
      metadata: {
        labels: { "butler.butlerlabs.dev/environment": "prod" },
        annotations: { "butler.butlerlabs.dev/migration-operation": "true" },
      },
    };
    allowed(await patch("tenantcluster", "migrating", migration, carol, NS));
  });
  await t.step("a migration annotation left on the cluster permits no later label change", async () => {
    const migrated = {
      metadata: {
        labels: { "butler.butlerlabs.dev/environment": "prod" },
        annotations: { "butler.butlerlabs.dev/migration-operation": "true" },
      },
    };
    await kubectlOk([
      "patch",
      "tenantcluster",
      "migrating",
      "-n",
      NS,
      "--type=merge",
      "-p",
      JSON.stringify(migrated),
    ]);
    const back = { metadata: { labels: { "butler.butlerlabs.dev/environment": "dev" } } };
    denied(
      await patch("tenantcluster", "migrating", back, carol, NS),
      'env label changes require the "butler.butlerlabs.dev/migration-operation" annotation set to "true" by the same update; it is left over from an earlier migration: remove it, then set it again together with the label',
    );
    denied(
      await patch("tenantcluster", "migrating", back, pat, NS),
      "it is left over from an earlier migration",
    );
    // The documented way: remove the annotation, then set it again together with the label.
    await kubectlOk([
      "annotate",
      "tenantcluster",
      "migrating",
      "-n",
      NS,
      "butler.butlerlabs.dev/migration-operation-",
    ]);
    denied(
      await patch("tenantcluster", "migrating", back, carol, NS),
      'env label changes require the "butler.butlerlabs.dev/migration-operation" annotation set to "true"; use `butleradm env migrate`',
    );
    allowed(
      await patch(
        "tenantcluster",
        "migrating",
        { ...back, metadata: { ...back.metadata, annotations: migrated.metadata.annotations } },
        carol,
        NS,
      ),
    );
  });
  await t.step(
    "adding creator-email or owner to an existing cluster is a claim: only for oneself",
    async () => {
      await apply(cluster("unowned"));
      for (const key of ["butler.butlerlabs.dev/owner", "butler.butlerlabs.dev/creator-email"]) {
        denied(
          await patch(
            "tenantcluster",
            "unowned",
            { metadata: { annotations: { [key]: "alice@example.com" } } },
            carol,
            NS,
          ),
          `${key} must match the requesting identity "carol@example.com"; an annotation cannot claim a different user`,
        );
        allowed(
          await patch(
            "tenantcluster",
            "unowned",
            { metadata: { annotations: { [key]: "carol@example.com" } } },
            carol,
            NS,
          ),
        );
        allowed(
          await patch(
            "tenantcluster",
            "unowned",
            { metadata: { annotations: { [key]: "alice@example.com" } } },
            consoleSA,
            NS,
          ),
        );
      }
      await kubectlOk(["delete", "tenantcluster", "unowned", "-n", NS, "--wait=false"]);
    },
  );
  await t.step("creator-email and owner are immutable", async () => {
    denied(
      await patch(
        "tenantcluster",
        "migrating",
        { metadata: { annotations: { "butler.butlerlabs.dev/creator-email": "eve@example.com" } } },
        pat,
        NS,
      ),
      'butler.butlerlabs.dev/creator-email is immutable; cannot change from "carol@example.com" to "eve@example.com"',
    );
    allowed(
      await patch(
        "tenantcluster",
        "migrating",
        { metadata: { annotations: { "example.com/note": "other annotations change freely" } } },
        carol,
        NS,
      ),
    );
  });
  await kubectlOk(["delete", "tenantcluster", "migrating", "-n", NS, "--wait=false"]);
});

Deno.test("environment roles stay in their environment", async (t) => {
  await setUp();
  const cluster = (name: string, env?: string) => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: {
      name,
      namespace: NS,
      ...(env ? { labels: { "butler.butlerlabs.dev/environment": env } } : {}),
    },
    spec: { providerConfigRef: { name: "harvester-prod" } },
  });
  const canI = async (verb: string, resource: string, as: As) =>
    (await kubectl(["auth", "can-i", verb, resource, "-n", NS], { as })).stdout.trim();
  const remove = (name: string, as: As) =>
    kubectl(["delete", "tenantcluster", name, "-n", NS, "--dry-run=server"], { as });
  const refusal = (user: string, verb: string, name: string, env: string) =>
    `user "${user}" may not ${verb} TenantCluster "${name}" in environment "${env}"; an operator or admin role in the team or in that environment is required`;

  await t.step("an operator only in prod creates a prod cluster and nothing in dev", async () => {
    allowed(await create(cluster("dave-prod", "prod"), dave));
    // A new policy binding takes effect within seconds: the first refusal is waited for.
    const r = await untilRun(() => create(cluster("dave-dev", "dev"), dave), (r) => r.code !== 0);
    denied(r, refusal("dave@example.com", "create", "dave-dev", "dev"));
    denied(
      await create(cluster("dave-none"), dave),
      'user "dave@example.com" may not create TenantCluster "dave-none" without an environment label; an operator or admin role in the team is required',
    );
  });
  await t.step("nor changes, migrates or deletes a dev cluster; a prod one he may", async () => {
    await apply(cluster("shared-dev", "dev"));
    await apply(cluster("shared-prod", "prod"));
    denied(
      await patch("tenantcluster", "shared-dev", { spec: { workers: { replicas: 5 } } }, dave, NS),
      refusal("dave@example.com", "update", "shared-dev", "dev"),
    );
    const migrate = {
      metadata: {
        labels: { "butler.butlerlabs.dev/environment": "prod" },
        annotations: { "butler.butlerlabs.dev/migration-operation": "true" },
      },
    };
    denied(
      await patch("tenantcluster", "shared-dev", migrate, dave, NS),
      refusal("dave@example.com", "update", "shared-dev", "dev"),
    );
    denied(await remove("shared-dev", dave), refusal("dave@example.com", "delete", "shared-dev", "dev"));
    allowed(await patch("tenantcluster", "shared-prod", { spec: { workers: { replicas: 5 } } }, dave, NS));
    allowed(await remove("shared-prod", dave));
  });
  await t.step("an elevation never grants Secrets, ProviderConfigs or the Team namespace-wide", async () => {
    assert.equal(await canI("get", "secrets", dave), "no");
    assert.equal(await canI("create", "providerconfigs.butler.butlerlabs.dev", dave), "no");
    // bob is operator on the team and admin only in prod: bound to the operator role, not the admin one.
    assert.equal(await canI("get", "secrets", bob), "no");
    assert.equal(await canI("create", "providerconfigs.butler.butlerlabs.dev", bob), "no");
    assert.equal(await canI("get", "secrets", alice), "yes");
  });
  await t.step("team operators and admins act in every environment and without one", async () => {
    for (const [who, as] of [["bob", bob], ["carol", carol], ["alice", alice]] as const) {
      for (const env of ["dev", "prod", undefined]) {
        allowed(await create(cluster(`${who}-${env ?? "none"}`, env), as));
      }
    }
    allowed(await remove("shared-dev", carol));
  });
  await t.step("a platform admin everywhere", async () => {
    allowed(await create(cluster("pat-dev", "dev"), pat));
    allowed(await remove("shared-dev", pat));
  });
  for (const name of ["shared-dev", "shared-prod"]) {
    await kubectlOk(["delete", "tenantcluster", name, "-n", NS, "--wait=false"]);
  }
});

Deno.test("clean up: the admission tests leave nothing behind", async () => {
  await kubectlOk(["delete", "team", TEAM, "--ignore-not-found", "--wait=false"]);
  for (const kind of ["clusterrolebinding", "clusterrole"]) {
    await kubectlOk(["delete", kind, "-l", `butler.butlerlabs.dev/team=${TEAM}`, "--ignore-not-found"]);
  }
  await kubectlOk([
    "delete",
    "clusterrolebinding",
    "test-platform-admins",
    "test-team-editor",
    "test-console",
    "--ignore-not-found",
  ]);
  await kubectlOk(["delete", "clusterrole", "test-team-editor", "test-console", "--ignore-not-found"]);
  await kubectlOk(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
});
