/**
 * Seed conformance on a real API server, through the shipped webhooks and policies, on the path a platform team
 * takes: clusters that rely on their Team's default ProviderConfig are checked and counted against it (its
 * allowedProviders, its per-team limits, its deletion), a limit of 0 freezes, a limit that is not a quantity is
 * refused by the CRD, and an operator at her per-member cap cannot hand a cluster to someone else to make room.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { parse } from "yaml";
import { desiredChildren, effectiveAccess } from "../../hooks/team/mod.ts";
import type { TeamSpec } from "../../lib/api/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import {
  applyObject,
  type As,
  installManifests,
  kubectl,
  kubectlOk,
  serveAdmission,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const PLAIN = "conf-plain";
const PAYMENTS = "conf-payments";
const carol: As = { user: "carol@example.com" };

const harvester = (name: string, limits?: Obj, finalizers?: string[]) => ({
  apiVersion: API,
  kind: "ProviderConfig",
  metadata: { name, namespace: "butler-system", ...(finalizers ? { finalizers } : {}) },
  spec: {
    provider: "harvester",
    credentialsRef: { name: "harvester-kubeconfig" },
    harvester: { namespace: "default", networkName: "default/vlan40" },
    ...(limits ? { limits } : {}),
  },
});

const tenantCluster = (
  team: string,
  name: string,
  options: { ref?: string; env?: string; creator?: string } = {},
) => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: {
    name,
    namespace: `team-${team}`,
    ...(options.env ? { labels: { "butler.butlerlabs.dev/environment": options.env } } : {}),
    ...(options.creator ? { annotations: { "butler.butlerlabs.dev/creator-email": options.creator } } : {}),
  },
  spec: {
    kubernetesVersion: "v1.31.0",
    workers: { replicas: 1, machineTemplate: { cpu: "2", memory: "4Gi", diskSize: "20Gi" } },
    ...(options.ref ? { providerConfigRef: { name: options.ref } } : {}),
  },
});

const create = (obj: unknown, as?: As) =>
  kubectl(["create", "-f", "-"], { stdin: JSON.stringify(obj), ...(as ? { as } : {}) });

const patchTeam = (team: string, spec: Obj) =>
  kubectl(["patch", "team", team, "--type=merge", "-p", JSON.stringify({ spec })]);

function refused(r: { code: number; stderr: string }, message: string): void {
  assert.notEqual(r.code, 0, `refused, expected "${message}"`);
  assert.ok(r.stderr.includes(message), `expected "${message}" in: ${r.stderr}`);
}

function allowed(r: { code: number; stderr: string }): void {
  assert.equal(r.code, 0, r.stderr);
}

async function teamNamespace(team: string): Promise<void> {
  await applyObject({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: `team-${team}`, labels: { "butler.butlerlabs.dev/team": team } },
  });
}

Deno.test("seed conformance: the Team's default provider, zero limits, ownership claims", async (t) => {
  await installManifests();
  const server = await serveAdmission();
  try {
    await teamNamespace(PLAIN);
    await teamNamespace(PAYMENTS);
    await applyObject(harvester("conf-harvester", { maxClustersPerTeam: 2 }));
    await applyObject(harvester("conf-doomed", undefined, ["butler.butlerlabs.dev/test-hold"]));
    await applyObject({
      apiVersion: API,
      kind: "Team",
      metadata: { name: PLAIN },
      spec: {
        access: { users: [{ name: "alice@example.com", role: "admin" }] },
        providerConfigRef: { name: "conf-harvester" },
      },
    });
    // The seed's payments team under a name of its own, with the RBAC its hook gives its members.
    const payments = parse(await Deno.readTextFile("examples/teams/payments.yaml")) as Obj;
    payments.metadata.name = PAYMENTS;
    payments.spec.providerConfigRef = { name: "conf-harvester-payments" };
    await applyObject(payments);
    const access = effectiveAccess(payments.spec as TeamSpec);
    assert.ok(access.ok);
    for (
      const child of desiredChildren(
        { name: PAYMENTS, spec: payments.spec },
        access.subjects,
        DEFAULT_HOOK_CONFIG,
      )
    ) {
      if (["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(child.kind)) {
        await applyObject(child);
      }
    }
    await applyObject(await shippedWebhooks(`https://127.0.0.1:${server.addr.port}`));

    await t.step("clusters on the Team's default count against the ProviderConfig's limits", async () => {
      // A new webhook configuration takes effect within seconds: the first create waits for it.
      allowed(await untilRun(() => create(tenantCluster(PLAIN, "p1")), (r) => r.code === 0));
      allowed(await create(tenantCluster(PLAIN, "p2", { ref: "conf-harvester" })));
      refused(
        await create(tenantCluster(PLAIN, "p3")),
        'spec: Forbidden: team namespace "team-conf-plain" already has 2 cluster(s); ProviderConfig "conf-harvester" limits to 2',
      );
    });
    await t.step("and the Team's allowedProviders judge the default", async () => {
      await kubectlOk([
        "patch",
        "team",
        PLAIN,
        "--type=merge",
        "-p",
        '{"spec":{"resourceLimits":{"allowedProviders":["nutanix"]}}}',
      ]);
      refused(
        await create(tenantCluster(PLAIN, "p4")),
        'provider "harvester" (ProviderConfig "conf-harvester") is not allowed for team "conf-plain"; allowed: "nutanix"',
      );
    });
    await t.step("a ProviderConfig in use through the Team's default is not deleted", async () => {
      refused(
        await kubectl([
          "delete",
          "providerconfig",
          "conf-harvester",
          "-n",
          "butler-system",
          "--dry-run=server",
        ]),
        'cannot delete ProviderConfig "conf-harvester": TenantClusters team-conf-plain/p1, team-conf-plain/p2 still reference it',
      );
    });
    await t.step("a ProviderConfig being deleted takes no new cluster", async () => {
      await kubectlOk(["delete", "providerconfig", "conf-doomed", "-n", "butler-system", "--wait=false"]);
      await kubectlOk([
        "patch",
        "team",
        PLAIN,
        "--type=json",
        "-p",
        '[{"op":"remove","path":"/spec/resourceLimits"}]',
      ]);
      refused(
        await create(tenantCluster(PLAIN, "p5", { ref: "conf-doomed" })),
        'spec.providerConfigRef: Forbidden: ProviderConfig "conf-doomed" is being deleted; new TenantClusters cannot use it',
      );
    });
    await t.step("a limit of 0 freezes the team", async () => {
      allowed(await patchTeam(PLAIN, { resourceLimits: { maxClusters: 0 } }));
      refused(
        await create(tenantCluster(PLAIN, "p6", { ref: "conf-other" })),
        'team "conf-plain" already has 2 cluster(s); team quota limits to 0',
      );
    });
    await t.step("a limit that is not a quantity is refused by the CRD", async () => {
      refused(
        await patchTeam(PLAIN, { resourceLimits: { maxMemory: "480GB" } }),
        "spec.resourceLimits.maxMemory: Invalid value",
      );
      const r = await patchTeam(PLAIN, { resourceLimits: { maxMemory: "480GB" } });
      assert.match(r.stderr, /must be a non-negative Kubernetes quantity/);
      allowed(await patchTeam(PLAIN, { resourceLimits: { maxMemory: "480Gi", maxCPUCores: 120 } }));
      refused(await patchTeam(PLAIN, { resourceLimits: { maxCPUCores: "-4" } }), "non-negative");
    });
    await t.step("an operator at her per-member cap cannot hand a cluster to someone else", async () => {
      for (const name of ["carol-dev-1", "carol-dev-2"]) {
        allowed(
          await create(tenantCluster(PAYMENTS, name, { env: "dev", creator: "carol@example.com" }), carol),
        );
      }
      refused(
        await kubectl([
          "annotate",
          "tenantcluster",
          "carol-dev-1",
          "-n",
          `team-${PAYMENTS}`,
          "butler.butlerlabs.dev/owner=alice@example.com",
        ], { as: carol }),
        'butler.butlerlabs.dev/owner must match the requesting identity "carol@example.com"; an annotation cannot claim a different user',
      );
      refused(
        await create(
          tenantCluster(PAYMENTS, "carol-dev-3", { env: "dev", creator: "carol@example.com" }),
          carol,
        ),
        'user "carol@example.com" already owns 2 cluster(s) in environment "dev"; env limits to 2 per member',
      );
    });
  } finally {
    await server.shutdown();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl([
      "patch",
      "providerconfig",
      "conf-doomed",
      "-n",
      "butler-system",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    ]);
    for (const team of [PLAIN, PAYMENTS]) {
      await kubectl(["delete", "team", team, "--ignore-not-found", "--wait=false"]);
      await kubectl(["delete", "namespace", `team-${team}`, "--ignore-not-found", "--wait=false"]);
      for (const kind of ["clusterrolebinding", "clusterrole"]) {
        await kubectl(["delete", kind, "-l", `butler.butlerlabs.dev/team=${team}`, "--ignore-not-found"]);
      }
    }
    await kubectl([
      "delete",
      "providerconfig",
      "conf-harvester",
      "-n",
      "butler-system",
      "--ignore-not-found",
      "--wait=false",
    ]);
  }
});
