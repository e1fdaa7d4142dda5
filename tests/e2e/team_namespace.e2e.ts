/**
 * Every TenantCluster belongs to a team (docs/tenancy.md), with real Metacontroller: a create outside every team
 * namespace is refused by the shipped policy; a cluster stored there before the policy (made here by lifting the
 * policy's binding, as an upgrade finds one) gets no address, says why, and can still be deleted; and a cluster in
 * its team's namespace starts as before.
 */
import assert from "node:assert/strict";
import { getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const TEAM = "homed";
const PC = "homed-harvester";
const POOL = "homed-pool";

const condition = (o: Obj | undefined, type: string) =>
  (o?.status?.conditions ?? []).find((c: Obj) => c.type === type) as Obj | undefined;

const cluster = (name: string, namespace: string) => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "TenantCluster",
  metadata: { name, namespace },
  spec: { providerConfigRef: { name: PC }, kubernetesVersion: "v1.31.0", workers: { replicas: 1 } },
});

/** An IPAM provider of its own, on a pool of its own: a cluster that starts takes addresses from it. */
const PROVIDER = [
  {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "homed-kubeconfig", namespace: "butler-system" },
    stringData: { kubeconfig: "apiVersion: v1" },
  },
  {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name: POOL, namespace: "butler-system" },
    spec: { cidr: "10.77.0.0/24" },
  },
  {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: PC, namespace: "butler-system" },
    spec: {
      provider: "harvester",
      credentialsRef: { name: "homed-kubeconfig" },
      harvester: { networkName: "default/vlan77" },
      network: {
        mode: "ipam",
        poolRefs: [{ name: POOL, priority: 0 }],
        loadBalancer: { defaultPoolSize: 4 },
      },
    },
  },
];

const apply = (o: unknown) => kubectl(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(o) });

Deno.test("a TenantCluster outside every team namespace: refused, and one stored before never starts", async (t) => {
  for (const o of PROVIDER) assert.equal((await apply(o)).code, 0);
  await kubectlOk(["apply", "--server-side", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: TEAM },
      spec: { access: { users: [{ name: "hana@example.com", role: "admin" }] } },
    }),
  });
  await eventually("the team namespace", () => getObject("namespace", `team-${TEAM}`), 60);

  await t.step("a create in default is refused with the policy's words", async () => {
    const r = await apply(cluster("stray", "default"));
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /ValidatingAdmissionPolicy 'butler-tenantcluster-references' .*denied request: TenantCluster must be in a team namespace \("team-<team>", labelled butler\.butlerlabs\.dev\/team by its Team\), got "default"/,
    );
  });

  await t.step("so is one in a namespace named like a team's that no Team made", async () => {
    await kubectlOk(["create", "namespace", "team-nobody"]);
    const r = await apply(cluster("stray", "team-nobody"));
    assert.match(r.stderr, /must be in a team namespace .*got "team-nobody"/);
    await kubectlOk(["delete", "namespace", "team-nobody", "--wait=false"]);
  });

  await t.step("in the team's namespace it starts", async () => {
    assert.equal((await apply(cluster("home", `team-${TEAM}`))).code, 0);
    await eventually("home Ready", async () => {
      const o = await getObject("tenantcluster", "home", `team-${TEAM}`) as Obj | undefined;
      return o?.status?.phase === "Ready" ? o : undefined;
    }, 120);
  });

  await t.step("one stored before the policy gets nothing, says why, and is deleted", async () => {
    const binding = JSON.parse(
      await kubectlOk([
        "get",
        "validatingadmissionpolicybinding",
        "butler-tenantcluster-references",
        "-o",
        "json",
      ]),
    );
    await kubectlOk(["delete", "validatingadmissionpolicybinding", "butler-tenantcluster-references"]);
    try {
      await eventually("the create admitted without the binding", async () => {
        const r = await apply(cluster("legacy", "default"));
        return r.code === 0 ? true : undefined;
      }, 30);
    } finally {
      const { metadata, ...rest } = binding;
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin: JSON.stringify({
          ...rest,
          metadata: { name: metadata.name, annotations: metadata.annotations },
        }),
      });
    }
    const legacy = await eventually("legacy reported", async () => {
      const o = await getObject("tenantcluster", "legacy", "default") as Obj | undefined;
      return condition(o, "Ready")?.reason === "InvalidSpec" ? o : undefined;
    }, 60);
    assert.equal(legacy.status.phase, "Failed");
    assert.match(
      condition(legacy, "Ready")!.message,
      /^TenantCluster must be in a team namespace .*got "default"/,
    );
    assert.equal(condition(legacy, "Admitted")?.reason, "NoTeam");
    const allocations = JSON.parse(await kubectlOk(["get", "ipallocations", "-n", "default", "-o", "json"]));
    assert.deepEqual(allocations.items, [], "no address taken");
    // The pool holds home's addresses (4 LB, 5 nodes) and nothing of legacy's.
    const pool = await getObject("networkpool", POOL, "butler-system") as Obj;
    assert.equal(pool.status.allocatedIPs, 9);
    // Its finalizer goes through an update the policy lets through: the delete finishes.
    await kubectlOk(["delete", "tenantcluster", "legacy", "-n", "default", "--wait=false"]);
    await eventually(
      "legacy gone",
      async () => (await getObject("tenantcluster", "legacy", "default")) ? undefined : true,
      60,
    );
  });

  await kubectlOk(["delete", "team", TEAM, "--wait=false"]);
  await eventually("team gone", async () => (await getObject("team", TEAM)) ? undefined : true, 120);
  for (const o of [...PROVIDER].reverse()) {
    await kubectl(["delete", "-f", "-", "--ignore-not-found", "--wait=true", "--timeout=60s"], {
      stdin: JSON.stringify(o),
    });
  }
});
