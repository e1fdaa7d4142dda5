/**
 * A TenantCluster belongs to a team (docs/tenancy.md#tenantcluster-tc-and-loadbalancerinventory-lbi): admission
 * and the controller agree on which clusters those are, for every namespace and `teamRef` a writer can choose.
 *
 * - The shipped policy `butler-tenantcluster-references` (evaluated in CEL as the API server does) admits a create
 *   only in a team namespace: `team-<t>`, labelled `butler.butlerlabs.dev/team: <t>` as its Team's controller makes
 *   it, with no `teamRef` or `teamRef: <t>`. Everywhere else it refuses, in upstream's words where the cluster
 *   names its team.
 * - The sync hook gives a cluster children (addresses) only where the policy would have admitted it and its Team
 *   exists; a cluster stored outside (before the policy) is `Failed` and keeps exactly the children it has.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { admissionPolicies, type AdmissionPolicy } from "../../lib/schema/mod.ts";
import { readInstall } from "../../lib/plan/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FIXTURE =
  `${ROOT}tests/fixtures/tenantcluster/sync/stored-before-rule-outside-team-namespaces-keeps-children`;
const policies: AdmissionPolicy[] = admissionPolicies(readInstall(ROOT));
const { app } = createTestApp(HOOK_ROUTES);
const TEAM = { access: { users: [{ name: "alice@example.com", role: "admin" }] } };

/** A namespace and cluster a writer can choose, and whether the team the namespace names exists. */
interface Case {
  readonly namespace: string;
  /** The namespace's `butler.butlerlabs.dev/team` label, if any. */
  readonly label?: string | undefined;
  readonly teamRef?: string | undefined;
  readonly teamExists: boolean;
  readonly hasChildren: boolean;
}

const name = fc.constantFrom("payments", "platform", "a", "team-payments", "x-y");
const arbitraryCase: fc.Arbitrary<Case> = fc.record({
  namespace: fc.oneof(
    name.map((t) => `team-${t}`),
    fc.constantFrom("default", "butler-system", "team-", "teams-payments", "payments", "kube-system"),
  ),
  label: fc.option(name, { nil: undefined }),
  teamRef: fc.option(name, { nil: undefined }),
  teamExists: fc.boolean(),
  hasChildren: fc.boolean(),
}).map((c) => ({
  ...c,
  // A Team's namespace is its controller's child, labelled with the Team's name: where the Team exists, so does
  // the label (a platform admin may label other namespaces too).
  label: c.teamExists && c.namespace.startsWith("team-") ? c.namespace.slice(5) : c.label,
}));

/** The team whose namespace admits the cluster, or `undefined`: the rule both sides must follow. */
function owningTeam(c: Case): string | undefined {
  const team = c.namespace.startsWith("team-") && c.namespace.length > 5 ? c.namespace.slice(5) : undefined;
  if (!team || c.label !== team) return undefined;
  return c.teamRef === undefined || c.teamRef === team ? team : undefined;
}

function cluster(c: Case) {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "web", namespace: c.namespace, uid: "tc-web", generation: 1 },
    spec: {
      providerConfigRef: { name: "harvester-prod", namespace: "butler-system" },
      kubernetesVersion: "v1.31.0",
      ...(c.teamRef ? { teamRef: { name: c.teamRef } } : {}),
    },
  };
}

function denial(c: Case, operation: "CREATE" | "UPDATE" = "CREATE"): string | undefined {
  const object = cluster(c);
  for (const p of policies) {
    const d = p.judge({
      operation,
      group: "butler.butlerlabs.dev",
      version: "v1alpha1",
      resource: "tenantclusters",
      kind: "TenantCluster",
      object,
      ...(operation === "UPDATE" ? { oldObject: object } : {}),
      namespaceObject: {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: {
          name: c.namespace,
          ...(c.label ? { labels: { "butler.butlerlabs.dev/team": c.label } } : {}),
        },
      },
      userInfo: { username: "platform-admin", groups: ["system:authenticated"] },
    });
    if (d) return `${d.policy}: ${d.message}`;
  }
  return undefined;
}

/** The sync of the case's cluster: the fixture's provider and pools, its Team if it exists, its children if any. */
async function sync(c: Case) {
  const request = JSON.parse(Deno.readTextFileSync(`${FIXTURE}/request.json`));
  const parent = cluster(c);
  request.parent = { ...parent, metadata: { ...parent.metadata, creationTimestamp: "2026-11-21T08:30:00Z" } };
  const team = c.teamRef ?? (c.namespace.startsWith("team-") ? c.namespace.slice(5) : undefined);
  request.related["Team.butler.butlerlabs.dev/v1alpha1"] = c.teamExists && team
    ? {
      [team]: {
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "Team",
        metadata: { name: team },
        spec: TEAM,
      },
    }
    : {};
  const allocations = request.children["IPAllocation.butler.butlerlabs.dev/v1alpha1"];
  request.children["IPAllocation.butler.butlerlabs.dev/v1alpha1"] = c.hasChildren
    ? Object.fromEntries(
      Object.values(allocations).map((a) => {
        const child = a as { metadata: { name: string; namespace: string } };
        child.metadata.namespace = c.namespace;
        return [`${c.namespace}/${child.metadata.name}`, child];
      }),
    )
    : {};
  const res = await app.request("/hooks/tenantcluster/sync", {
    method: "POST",
    headers: { "content-type": "application/json", "x-butler-now": "2026-11-21T09:00:00Z" },
    body: JSON.stringify(request),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  const names = (body.children as { kind: string; metadata: { name: string } }[])
    .filter((o) => o.kind === "IPAllocation").map((o) => o.metadata.name).sort();
  return {
    body,
    names,
    observed: Object.values(request.children["IPAllocation.butler.butlerlabs.dev/v1alpha1"]),
  };
}

Deno.test("admission admits a TenantCluster only in its team's namespace, on create", async (t) => {
  await t.step("the cases the issue names", () => {
    const base = { teamExists: false, hasChildren: false };
    assert.equal(
      denial({ ...base, namespace: "default" }),
      'butler-tenantcluster-references: TenantCluster must be in a team namespace ("team-<team>", labelled butler.butlerlabs.dev/team by its Team), got "default"',
    );
    assert.equal(
      denial({ ...base, namespace: "default", teamRef: "payments" }),
      'butler-tenantcluster-references: TenantCluster must be in team namespace "team-payments", got "default"',
    );
    // A namespace named like a team's that no Team made: the webhooks, which select team namespaces by the
    // label, would never see its clusters.
    assert.match(denial({ ...base, namespace: "team-payments" }) ?? "", /got "team-payments"/);
    assert.equal(denial({ ...base, namespace: "team-payments", label: "payments" }), undefined);
  });
  await t.step("generated namespaces, labels and teamRefs", () => {
    fc.assert(
      fc.property(arbitraryCase, (c) => {
        assert.equal(denial(c) === undefined, owningTeam(c) !== undefined, JSON.stringify(c));
      }),
      { numRuns: 400 },
    );
  });
  await t.step("an update of a cluster stored before the rule is let through (its finalizer can go)", () => {
    assert.equal(denial({ namespace: "default", teamExists: false, hasChildren: true }, "UPDATE"), undefined);
  });
});

Deno.test("the controller gives addresses only to a cluster its team's namespace admits", async (t) => {
  await t.step("generated namespaces, teams and children", async () => {
    await fc.assert(
      fc.asyncProperty(arbitraryCase, async (c) => {
        const { body, names, observed } = await sync(c);
        const admitted = owningTeam(c) !== undefined;
        if (!admitted || !c.teamExists) {
          // Never more than it has, never fewer (never lose data).
          const kept = observed.map((o) => (o as { metadata: { name: string } }).metadata.name).sort();
          assert.deepEqual(names, kept, JSON.stringify(c));
        } else assert.ok(names.length > 0, `${JSON.stringify(c)}: its allocations`);
        if (!owningTeam({ ...c, label: c.namespace.slice(5) })) {
          assert.equal(body.status.phase, "Failed", JSON.stringify(c));
        }
      }),
      { numRuns: 150 },
    );
  });
  await t.step("one in default: Failed, with admission's words, and not admitted", async () => {
    const { body, names } = await sync({ namespace: "default", teamExists: false, hasChildren: false });
    assert.deepEqual(names, []);
    const ready = body.status.conditions.find((c: { type: string }) => c.type === "Ready");
    assert.equal(ready.reason, "InvalidSpec");
    assert.match(
      ready.message,
      /^TenantCluster must be in a team namespace \("team-<team>", .*got "default"/,
    );
    const admitted = body.status.conditions.find((c: { type: string }) => c.type === "Admitted");
    assert.equal(admitted?.status, "False");
  });
});
