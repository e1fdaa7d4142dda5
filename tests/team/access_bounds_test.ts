/**
 * Issue #46, item 1: a Team edit cannot exhaust a hook. Effective access is held as the raises environments
 * make (linear in what the Team writes), never as users × environments; a Team past a CRD bound is refused by
 * the sync in bounded words and keeps every child.
 */
import assert from "node:assert/strict";
import { effectiveAccess, syncTeam } from "../../hooks/team/mod.ts";
import { MESSAGE_MAX } from "../../lib/conditions/mod.ts";
import { type CompositeRequest, groupKey } from "../../lib/contract/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { TEAM_BOUNDS, type TeamSpec } from "../../lib/api/mod.ts";
import { CHILD_TYPES } from "../../hooks/team/rbac.ts";
import { teamShapeSyncBody } from "../../bench/team_data.ts";

const context = { now: new Date("2026-01-01T00:00:00Z"), config: DEFAULT_HOOK_CONFIG };

/** The reproduction: 2,000 viewers and 2,000 environments, none of which raises anyone. */
function wideTeam(users: number, environments: number, raising = 0): TeamSpec {
  return {
    access: { users: Array.from({ length: users }, (_, i) => ({ name: `viewer${i}@example.com` })) },
    environments: Array.from({ length: environments }, (_, e) => ({
      name: `env-${e}`,
      ...(e < raising
        ? { access: { users: [{ name: `viewer${e}@example.com`, role: "operator" as const }] } }
        : {}),
    })),
  };
}

function request(spec: unknown, children: Record<string, Record<string, unknown>> = {}): CompositeRequest {
  return {
    controller: { metadata: { name: "butler-team" } },
    parent: {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: "wide", uid: "u", generation: 2 },
      spec,
    },
    children: Object.fromEntries(
      Object.values(CHILD_TYPES).map((t) => [groupKey(t), children[groupKey(t)] ?? {}]),
    ),
    related: {
      "TenantCluster.butler.butlerlabs.dev/v1alpha1": {},
      "ConfigMap.v1": {},
      "ProviderConfig.butler.butlerlabs.dev/v1alpha1": {},
    },
    finalizing: false,
  } as unknown as CompositeRequest;
}

Deno.test("effective access holds the raises a Team writes, never users × environments", async (t) => {
  await t.step("2,000 viewers × 2,000 environments that raise no one: no entry held", () => {
    const access = effectiveAccess(wideTeam(2000, 2000));
    assert.ok(access.ok);
    assert.equal(access.subjects.length, 2000);
    assert.equal(access.subjects.reduce((n, s) => n + Object.keys(s.elevations).length, 0), 0);
  });
  await t.step("one entry held per raise written", () => {
    const access = effectiveAccess(wideTeam(2000, 2000, 300));
    assert.ok(access.ok);
    const held = access.subjects.flatMap((s) => Object.entries(s.elevations));
    assert.equal(held.length, 300);
    assert.ok(held.every(([, role]) => role === "operator"));
  });
  await t.step("a raise to the team role or below is not held", () => {
    const access = effectiveAccess({
      access: { users: [{ name: "a@x", role: "operator" }, { name: "b@x", role: "admin" }] },
      environments: [{
        name: "prod",
        access: { users: [{ name: "A@x", role: "operator" }, { name: "b@x", role: "operator" }] },
      }],
    });
    assert.ok(access.ok);
    assert.deepEqual(access.subjects.map((s) => s.elevations), [{}, {}]);
  });
});

Deno.test("the Team sync at the bounds, and past them", async (t) => {
  await t.step(
    "at every list bound: Ready, one RoleBinding per subject, an elevation Role per environment",
    () => {
      const body = JSON.parse(teamShapeSyncBody({
        users: TEAM_BOUNDS.users,
        groups: TEAM_BOUNDS.groups,
        environments: TEAM_BOUNDS.environments,
        environmentUsers: TEAM_BOUNDS.environmentUsers,
        environmentGroups: TEAM_BOUNDS.environmentGroups,
      }, 5));
      const res = syncTeam(body, context);
      const status = res.status as { phase: string; access: { environments?: Record<string, string> }[] };
      assert.equal(status.phase, "Ready");
      const kinds = (k: string) => (res.children ?? []).filter((c) => c.kind === k).length;
      assert.equal(status.access.length, TEAM_BOUNDS.users + TEAM_BOUNDS.groups);
      assert.equal(kinds("Role"), TEAM_BOUNDS.environments);
      // Every environment raises its first users and groups; the admin (user 0) is raised nowhere.
      const raised = status.access.reduce((n, a) => n + Object.keys(a.environments ?? {}).length, 0);
      assert.equal(
        raised,
        TEAM_BOUNDS.environments * (TEAM_BOUNDS.environmentUsers - 1 + TEAM_BOUNDS.environmentGroups),
      );
    },
  );
  const observed = {
    [groupKey(CHILD_TYPES.Namespace)]: {
      "team-wide": { apiVersion: "v1", kind: "Namespace", metadata: { name: "team-wide" } },
    },
    [groupKey(CHILD_TYPES.RoleBinding)]: {
      "team-wide/keep-me": {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "RoleBinding",
        metadata: { name: "keep-me", namespace: "team-wide" },
      },
    },
  };
  for (
    const [label, spec] of [
      ["one user past the bound", wideTeam(TEAM_BOUNDS.users + 1, 0)],
      ["one environment past the bound", wideTeam(1, TEAM_BOUNDS.environments + 1)],
      ["the issue's 2,000 viewers × 2,000 environments", wideTeam(2000, 2000)],
    ] as const
  ) {
    await t.step(`${label}: Failed, why in bounded words, every child kept`, () => {
      const res = syncTeam(request(spec, observed), context);
      const status = res.status as {
        phase: string;
        conditions: { type: string; reason: string; message: string }[];
      };
      assert.equal(status.phase, "Failed");
      const ready = status.conditions.find((c) => c.type === "Ready")!;
      assert.equal(ready.reason, "InvalidSpec");
      assert.match(ready.message, /Too big: expected array to have <=\d+ items/);
      assert.ok(ready.message.length <= MESSAGE_MAX);
      assert.deepEqual((res.children ?? []).map((c) => c.metadata.name).sort(), ["keep-me", "team-wide"]);
    });
  }
  await t.step("a condition message never passes its cap, whatever the spec holds", () => {
    // Every environment at its bound, each entry an outsider with a name at its bound: 512 problems.
    const res = syncTeam(
      request({
        access: {},
        environments: Array.from({ length: TEAM_BOUNDS.environments }, (_, e) => ({
          name: `env-${e}`,
          access: {
            users: Array.from({ length: TEAM_BOUNDS.environmentUsers }, (_, u) => ({
              name: `${u}-${e}`.padEnd(TEAM_BOUNDS.subjectName, "x"),
            })),
          },
        })),
      }, observed),
      context,
    );
    const ready = (res.status as { conditions: { type: string; message: string }[] }).conditions
      .find((c) => c.type === "Ready")!;
    assert.ok(ready.message.length <= MESSAGE_MAX, `${ready.message.length}`);
    // Ten problems of a thousand characters each: cut at the cap, and marked as cut.
    assert.ok(ready.message.endsWith("..."));
  });
});
