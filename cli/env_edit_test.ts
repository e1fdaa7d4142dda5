import assert from "node:assert/strict";
import { computeUsage } from "../hooks/team/usage.ts";
import { type ObservedCluster, TeamSpec } from "../lib/api/mod.ts";
import {
  environmentRows,
  renderEnvironments,
  type TeamObject,
  withEnvironment,
  withoutEnvironment,
} from "./env_edit.ts";

const team = (): TeamObject => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "Team",
  metadata: { name: "payments", resourceVersion: "7" },
  spec: {
    access: { users: [{ name: "alice@example.com", role: "admin" }] },
    environments: [
      { name: "dev", limits: { maxClustersPerMember: 2 } },
      { name: "prod", description: "Customer-facing", limits: { maxClusters: 4 } },
    ],
  },
});

const tc = (name: string, env: string, deleting = false): ObservedCluster => ({
  metadata: {
    name,
    namespace: "team-payments",
    labels: { "butler.butlerlabs.dev/environment": env },
    annotations: { "butler.butlerlabs.dev/creator-email": "carol@example.com" },
    ...(deleting ? { deletionTimestamp: "2026-11-24T00:00:00Z" } : {}),
  },
  spec: {},
});

Deno.test("env list, add, remove", async (t) => {
  await t.step("add appends the environment with its limits, under the Team's resourceVersion", () => {
    const r = withEnvironment(team(), { name: "staging", description: "RCs", maxClusters: 0 });
    assert.ok(r.ok);
    assert.deepEqual(r.team.spec.environments!.at(-1), {
      name: "staging",
      description: "RCs",
      limits: { maxClusters: 0 },
    });
    assert.equal(r.team.metadata.resourceVersion, "7");
    const again = withEnvironment(r.team, { name: "dev" });
    assert.deepEqual(again, { ok: false, message: 'team "payments" already has environment "dev"' });
  });
  await t.step("remove is put to the Team webhook's decision first: in use is refused in its words", () => {
    const inUse = withoutEnvironment(team(), "prod", [tc("a", "prod"), tc("b", "prod"), tc("c", "dev")]);
    assert.deepEqual(inUse, {
      ok: false,
      message:
        'cannot remove environment "prod" from team "payments": TenantClusters team-payments/a, team-payments/b still use it',
    });
    const deleting = withoutEnvironment(team(), "prod", [tc("a", "prod", true)]);
    assert.ok(deleting.ok, "a cluster being deleted does not hold it");
    assert.deepEqual(deleting.team.spec.environments!.map((e) => e.name), ["dev"]);
    assert.deepEqual(withoutEnvironment(team(), "qa", []), {
      ok: false,
      message: 'team "payments" has no environment "qa"',
    });
  });
  await t.step("list: limits, clusters, use and the Team controller's verdict", () => {
    const spec = TeamSpec.parse(team().spec);
    const clusters = [tc("a", "prod"), tc("b", "prod"), tc("c", "prod"), tc("d", "dev"), tc("e", "dev")];
    const rows = environmentRows(spec, computeUsage(spec, clusters));
    assert.equal(
      renderEnvironments("payments", rows),
      "NAME  CLUSTERS  MAX  PER MEMBER  USE  QUOTA    DESCRIPTION\n" +
        "dev   2         -    2           -    Warning\n" +
        "prod  3         4    -           75%  OK       Customer-facing\n",
    );
    assert.equal(renderEnvironments("plain", []), 'team "plain" defines no environments\n');
  });
});
