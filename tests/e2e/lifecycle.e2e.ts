/**
 * Whole lifecycles with real Metacontroller calling the real hook service (admission webhooks included) on a real
 * API server: a Team gets its namespace and RBAC; a static-IPAM TenantCluster gets IPAllocations from the pool's
 * ledger and its MetalLB ConfigMap; with admission unreachable, its provider's deletion waits for it; deleting it
 * releases every address and removes every finalizer; the seed's pinned range is adopted by its cluster, which
 * relies on its Team's default provider; deleting a Team with clusters and grants in it releases everything; a
 * NetworkPool stored by version 0.1 (`status.grants`) is migrated without a grant moving.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { cluster, getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { installButler } from "./stack.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const conditionTrue = (o: Obj | undefined, type: string) =>
  (o?.status?.conditions ?? []).some((c: Obj) => c.type === type && c.status === "True");

Deno.test("install: the controllers point at the hook service, over TLS with Metacontroller's certificate", async () => {
  const [hooks, webhooks] = [Deno.env.get("BUTLER_HOOKS_URL"), Deno.env.get("BUTLER_WEBHOOKS_URL")];
  assert.ok(hooks && webhooks, "BUTLER_HOOKS_URL and BUTLER_WEBHOOKS_URL are set by tests/e2e/run.ts");
  // No cert-manager runs here: installButler writes the Secrets its Certificates would.
  await installButler(cluster().dir, hooks, webhooks);
});

Deno.test("Team: namespace, RoleBindings and ClusterRoles, then deletion", async (t) => {
  // The example plus a namespace quota (a LimitRange sorts before the Namespace in Metacontroller's create order)
  // and dave, a viewer elevated to operator in prod (a Role of the environment).
  const team = parse(await Deno.readTextFile("examples/teams/payments.yaml")) as Obj;
  team.spec.access.users.push({ name: "dave@example.com", role: "viewer" });
  team.spec.environments[1].access.users.push({ name: "dave@example.com", role: "operator" });
  team.spec.namespaceQuota = {
    resourceQuotas: [{ name: "compute", spec: { hard: { "requests.cpu": "8", "requests.memory": "16Gi" } } }],
    limitRanges: [{
      name: "cpu",
      spec: { limits: [{ type: "Container", default: { cpu: "500m" }, defaultRequest: { cpu: "500m" } }] },
    }],
  };
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(team) });
  await t.step("the namespace team-payments appears and the Team is Ready", async () => {
    await eventually("namespace team-payments", () => getObject("namespace", "team-payments"));
    const team = await eventually("Team payments Ready", async () => {
      const o = await getObject("team", "payments") as Obj | undefined;
      return o?.status?.phase === "Ready" ? o : undefined;
    });
    assert.equal(team.status.namespace, "team-payments");
  });
  await t.step("each member is bound in the team namespace, and the Team has its ClusterRoles", async () => {
    const bindings = await eventually("five RoleBindings", async () => {
      const list = JSON.parse(await kubectlOk(["get", "rolebindings", "-n", "team-payments", "-o", "json"]));
      return list.items.length >= 5 ? list.items as Obj[] : undefined;
    });
    const bound = (b: Obj) => (b.subjects ?? []).map((s: Obj) => `${b.roleRef.name}:${s.kind}:${s.name}`);
    const subjects = bindings.flatMap(bound).sort();
    // bob is operator on the team and admin only in prod: the namespace binding carries his team role.
    for (
      const want of [
        "butler-team-admin:User:alice@example.com",
        "butler-team-operator:User:bob@example.com",
        "butler-team-operator:User:carol@example.com",
        "butler-team-viewer:User:dave@example.com",
      ]
    ) assert.ok(subjects.includes(want), `${want}: ${subjects}`);
    const envBinding = bindings.find((b) => b.roleRef.kind === "Role");
    assert.deepEqual(bound(envBinding!), [`${envBinding!.roleRef.name}:User:dave@example.com`]);
    const role = await getObject("role", envBinding!.roleRef.name, "team-payments") as Obj;
    assert.deepEqual(role.rules[1].resourceNames, ["prod"]);
    // The Team's own ClusterRoles and bindings: members read the Team, its admins update it and its environment
    // limits, nobody else does.
    const names = (kind: string) =>
      eventually(`${kind}s of the Team`, async () => {
        const out = await kubectlOk(["get", kind, "-l", "butler.butlerlabs.dev/team=payments", "-o", "name"]);
        const list = out.trim().split("\n").filter(Boolean).sort();
        return list.length === 2 ? list : undefined;
      });
    assert.deepEqual(await names("clusterroles"), [
      "clusterrole.rbac.authorization.k8s.io/butler-team-payments-admin",
      "clusterrole.rbac.authorization.k8s.io/butler-team-payments-member",
    ]);
    assert.deepEqual(await names("clusterrolebindings"), [
      "clusterrolebinding.rbac.authorization.k8s.io/butler-team-payments-admin",
      "clusterrolebinding.rbac.authorization.k8s.io/butler-team-payments-member",
    ]);
    const canI = async (user: string, ...args: string[]) =>
      (await kubectl(["auth", "can-i", ...args, `--as=${user}`])).stdout.trim();
    assert.equal(await canI("alice@example.com", "update", "teams.butler.butlerlabs.dev/payments"), "yes");
    assert.equal(
      await canI(
        "alice@example.com",
        "update",
        "teams.butler.butlerlabs.dev/payments",
        "--subresource=environmentlimits",
      ),
      "yes",
    );
    assert.equal(await canI("carol@example.com", "get", "teams.butler.butlerlabs.dev/payments"), "yes");
    assert.equal(await canI("carol@example.com", "update", "teams.butler.butlerlabs.dev/payments"), "no");
    assert.equal(await canI("dave@example.com", "update", "teams.butler.butlerlabs.dev/payments"), "no");
    assert.equal(await canI("mallory@example.com", "get", "teams.butler.butlerlabs.dev/payments"), "no");
  });
  await t.step("the namespace quota's ResourceQuota and LimitRange are in the namespace", async () => {
    await eventually("ResourceQuota compute", () => getObject("resourcequota", "compute", "team-payments"));
    await eventually("LimitRange cpu", () => getObject("limitrange", "cpu", "team-payments"));
  });
  await t.step(
    "the first syncs raised no SyncError: namespaced children wait for the Namespace",
    async () => {
      // Metacontroller creates children in group/version/kind order; a RoleBinding or LimitRange asked for before its
      // Namespace exists fails with a Warning event on the Team.
      const events = JSON.parse(
        await kubectlOk([
          "get",
          "events",
          "-A",
          "--field-selector",
          "involvedObject.kind=Team,involvedObject.name=payments,type=Warning",
          "-o",
          "json",
        ]),
      );
      assert.deepEqual(events.items.map((e: Obj) => `${e.reason}: ${e.message}`), []);
    },
  );
  await t.step("deleting the Team removes its namespace and then the Team", async () => {
    await kubectlOk(["delete", "team", "payments", "--wait=false"]);
    await eventually(
      "Team payments gone",
      async () => (await getObject("team", "payments")) ? undefined : true,
      120,
    );
    await eventually(
      "namespace team-payments gone",
      async () => (await getObject("namespace", "team-payments")) ? undefined : true,
      120,
    );
  });
});

const apply = (path: string) => kubectlOk(["apply", "--server-side", "-f", path]);

/**
 * The seeds' IPAM setup both IPAM lifecycles start from: the single-pool example (its credentials Secret,
 * NetworkPool and ProviderConfig) and the platform team, whose namespace is there when this returns.
 */
async function platformOnSinglePool(): Promise<void> {
  await apply("examples/ipam/single-pool/");
  await apply("examples/teams/platform.yaml");
  await eventually("namespace team-platform", () => getObject("namespace", "team-platform"));
}

Deno.test("TenantCluster with static IPAM: allocations, ledger, MetalLB, and release on deletion", async (t) => {
  await platformOnSinglePool();
  await apply("examples/tenantclusters/prod-cluster.yaml");

  await t.step("the TenantCluster becomes Ready with 8 LB addresses and 5 node addresses", async () => {
    const tc = await eventually("TenantCluster Ready", async () => {
      const o = await getObject("tenantcluster", "prod-cluster", "team-platform") as Obj | undefined;
      return o?.status?.phase === "Ready" ? o : undefined;
    }, 120);
    assert.deepEqual(tc.status.loadBalancer.addresses.length, 1);
    const allocations = JSON.parse(
      await kubectlOk(["get", "ipallocations", "-n", "team-platform", "-o", "json"]),
    )
      .items as Obj[];
    const byName = Object.fromEntries(allocations.map((a) => [a.metadata.name, a]));
    assert.equal(byName["prod-cluster-lb"]?.status?.phase, "Allocated");
    assert.equal(byName["prod-cluster-nodes"]?.status?.phase, "Allocated");
    assert.equal(byName["prod-cluster-lb"].status.allocatedCount, 8);
    assert.equal(byName["prod-cluster-nodes"].status.allocatedCount, 5);
  });
  await t.step("the pool's ledger holds both grants", async () => {
    const pool = await eventually("pool with 2 grants", async () => {
      const o = await getObject("networkpool", "lab-pool", "butler-system") as Obj | undefined;
      return o?.status?.allocationCount === 2 ? o : undefined;
    });
    assert.equal(pool.status.ledger.grants.length, 2);
    assert.equal(pool.status.grants, undefined);
    assert.equal(pool.status.allocatedIPs, 13);
    assert.ok(conditionTrue(pool, "Ready"));
  });
  await t.step("the MetalLB ConfigMap carries the LB range", async () => {
    const cm = await eventually(
      "ConfigMap prod-cluster-metallb",
      () => getObject("configmap", "prod-cluster-metallb", "team-platform"),
    ) as Obj;
    const text = Object.values(cm.data as Record<string, string>).join("\n");
    const tc = await getObject("tenantcluster", "prod-cluster", "team-platform") as Obj;
    assert.ok(text.includes(tc.status.loadBalancer.addresses[0]), text);
  });
  await t.step(
    "with the webhook unreachable, deleting the provider is held by its finalizer while the cluster uses it",
    async () => {
      // The ProviderConfig relates TenantClusters only once it is being deleted: this proves Metacontroller asks
      // the customize hook again when deletion starts, so the finalizer sees the cluster.
      const path = "/webhooks/0/clientConfig/url";
      const config = JSON.parse(
        await kubectlOk(["get", "validatingwebhookconfiguration", "butler-admission", "-o", "json"]),
      ) as Obj;
      assert.equal(config.webhooks[0].name, "providerconfigs.admission.butler.butlerlabs.dev");
      const url = config.webhooks[0].clientConfig.url as string;
      const patch = (value: string) =>
        kubectlOk([
          "patch",
          "validatingwebhookconfiguration",
          "butler-admission",
          "--type=json",
          `-p=${JSON.stringify([{ op: "replace", path, value }])}`,
        ]);
      await patch("https://127.0.0.1:1/webhooks/validate/providerconfig");
      try {
        await kubectlOk(["delete", "providerconfig", "harvester-lab", "-n", "butler-system", "--wait=false"]);
      } finally {
        await patch(url);
      }
      const pc = await eventually("ProviderConfig DeletionBlocked", async () => {
        const o = await getObject("providerconfig", "harvester-lab", "butler-system") as Obj | undefined;
        const ready = (o?.status?.conditions ?? []).find((c: Obj) => c.type === "Ready");
        return ready?.reason === "DeletionBlocked" ? ready : undefined;
      }, 60);
      assert.equal(
        pc.message,
        'cannot delete ProviderConfig "harvester-lab": TenantCluster team-platform/prod-cluster still references it',
      );
    },
  );
  await t.step("deleting the TenantCluster releases every address and removes every finalizer", async () => {
    await kubectlOk(["delete", "tenantcluster", "prod-cluster", "-n", "team-platform", "--wait=false"]);
    await eventually(
      "TenantCluster gone",
      async () => (await getObject("tenantcluster", "prod-cluster", "team-platform")) ? undefined : true,
      120,
    );
    const left = await kubectlOk(["get", "ipallocations", "-n", "team-platform", "-o", "name"]);
    assert.equal(left.trim(), "");
    const pool = await eventually("empty ledger", async () => {
      const o = await getObject("networkpool", "lab-pool", "butler-system") as Obj | undefined;
      return o?.status?.allocationCount === 0 ? o : undefined;
    });
    assert.deepEqual(pool.status.ledger.grants, []);
  });
  await t.step("the pool, provider and Team can then be deleted", async () => {
    for (
      const args of [["team", "platform"], ["providerconfig", "harvester-lab", "-n", "butler-system"], [
        "networkpool",
        "lab-pool",
        "-n",
        "butler-system",
      ]]
    ) {
      await kubectlOk(["delete", ...args, "--wait=false", "--ignore-not-found"]);
    }
    for (
      const [kind, name, ns] of [["team", "platform"], ["providerconfig", "harvester-lab", "butler-system"], [
        "networkpool",
        "lab-pool",
        "butler-system",
      ]]
    ) {
      await eventually(
        `${kind} ${name} gone`,
        async () => (await getObject(kind!, name!, ns)) ? undefined : true,
        120,
      );
    }
  });
  await kubectl(["delete", "secret", "harvester-kubeconfig", "-n", "butler-system", "--ignore-not-found"]);
});

Deno.test("the seed's pinned range with a Team default provider, then the Team deleted with everything in it", async (t) => {
  const ns = "team-platform";
  await platformOnSinglePool();
  // The seed's pinned allocation first, then its cluster, which names no ProviderConfig: the Team's default.
  await apply("examples/ipallocations/api-lb-pinned.yaml");
  const cluster = (name: string) => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: { name, namespace: ns },
    spec: { kubernetesVersion: "v1.31.0", workers: { replicas: 2 } },
  });
  for (const name of ["api-prod", "web"]) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(cluster(name)) });
  }

  await t.step(
    "api-prod uses the pinned range as its LB allocation, adopted, and makes none of its own",
    async () => {
      const tc = await eventually("api-prod Ready", async () => {
        const o = await getObject("tenantcluster", "api-prod", ns) as Obj | undefined;
        return o?.status?.phase === "Ready" ? o : undefined;
      }, 120);
      assert.deepEqual(tc.status.loadBalancer.addresses, ["10.40.2.0-10.40.2.7"]);
      assert.deepEqual(tc.status.effective.providerConfigRef, {
        value: { name: "harvester-lab", namespace: "butler-system" },
        source: "team",
      });
      assert.equal(tc.status.lbAllocationRef.name, "team-platform-api-lb");
      const pinned = await eventually("the pinned allocation owned by api-prod", async () => {
        const o = await getObject("ipallocation", "team-platform-api-lb", ns) as Obj | undefined;
        return conditionTrue(o, "TenantClusterBound") ? o : undefined;
      });
      assert.equal(pinned.metadata.ownerReferences[0].uid, tc.metadata.uid);
      assert.equal(pinned.status.startAddress, "10.40.2.0");
      assert.equal(await getObject("ipallocation", "api-prod-lb", ns), undefined);
      const cm = await getObject("configmap", "api-prod-metallb", ns) as Obj;
      assert.match(Object.values(cm.data as Record<string, string>).join("\n"), /10\.40\.2\.0-10\.40\.2\.7/);
    },
  );
  await t.step("web gets its own allocations on the Team's default", async () => {
    await eventually("web Ready", async () => {
      const o = await getObject("tenantcluster", "web", ns) as Obj | undefined;
      return o?.status?.phase === "Ready" ? o : undefined;
    }, 120);
    const pool = await eventually("four grants in the pool", async () => {
      const o = await getObject("networkpool", "lab-pool", "butler-system") as Obj | undefined;
      return o?.status?.allocationCount === 4 ? o : undefined;
    });
    assert.equal(pool.status.ledger.grants.length, 4);
  });
  await t.step(
    "deleting the Team takes the namespace, both clusters and every grant, then the Team goes",
    async () => {
      await kubectlOk(["delete", "team", "platform", "--wait=false"]);
      await eventually(
        "Team gone",
        async () => (await getObject("team", "platform")) ? undefined : true,
        180,
      );
      assert.equal(await getObject("namespace", ns), undefined);
      const pool = await eventually("empty ledger", async () => {
        const o = await getObject("networkpool", "lab-pool", "butler-system") as Obj | undefined;
        return o?.status?.allocationCount === 0 ? o : undefined;
      });
      assert.deepEqual(pool.status.ledger.grants, []);
      const left = JSON.parse(await kubectlOk(["get", "ipallocations", "-A", "-o", "json"])).items as Obj[];
      assert.deepEqual(
        left.map((a) => `${a.metadata.namespace}/${a.metadata.name}`),
        [],
      );
    },
  );
  await t.step("the pool and provider can then be deleted", async () => {
    await kubectlOk(["delete", "providerconfig", "harvester-lab", "-n", "butler-system", "--wait=false"]);
    await kubectlOk(["delete", "networkpool", "lab-pool", "-n", "butler-system", "--wait=false"]);
    for (const kind of ["providerconfig", "networkpool"]) {
      const name = kind === "providerconfig" ? "harvester-lab" : "lab-pool";
      await eventually(
        `${kind} gone`,
        async () => (await getObject(kind, name, "butler-system")) ? undefined : true,
        120,
      );
    }
  });
  await kubectl(["delete", "secret", "harvester-kubeconfig", "-n", "butler-system", "--ignore-not-found"]);
});

Deno.test("a pool stored by version 0.1 (status.grants) is migrated by the controller without a grant moving", async (t) => {
  const ns = "team-migrate";
  await kubectl(["create", "namespace", ns]);
  // An invalid spec (a reserved range outside the CIDR) makes the hook grant nothing while the old ledger is written.
  const pool = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name: "mig-pool", namespace: "butler-system" },
    spec: { cidr: "10.77.0.0/24", reserved: [{ cidr: "10.99.0.0/28" }] },
  };
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(pool) });
  const POOL = ["networkpool", "mig-pool", "-n", "butler-system"];
  const getPool = () => getObject("networkpool", "mig-pool", "butler-system") as Promise<Obj | undefined>;
  const names = ["a", "b", "c"];
  for (const name of names) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "IPAllocation",
        metadata: { name, namespace: ns },
        spec: { poolRef: { name: "mig-pool", namespace: "butler-system" }, type: "loadbalancer", count: 4 },
      }),
    });
  }
  // Ranges best-fit would never choose, so that a re-allocation could not pass for the old grants.
  const old: Record<string, string> = { a: "10.77.0.40", b: "10.77.0.16", c: "10.77.0.200" };
  const uids: Record<string, string> = {};
  for (const name of names) {
    uids[name] =
      JSON.parse(await kubectlOk(["get", "ipallocation", name, "-n", ns, "-o", "json"])).metadata.uid;
  }
  // The pool sees its allocations once their hook has labelled them: all three refused for the invalid spec.
  await eventually("the pool sees the three allocations", async () => {
    const o = await getPool();
    return Object.keys(o?.status?.failures ?? {}).length === 3 ? o : undefined;
  });
  await t.step("the old ledger is read and rewritten as status.ledger, the spec still invalid", async () => {
    const grants = Object.fromEntries(names.map((n) => [uids[n], `${old[n]}+4@2026-11-01T00:00:00Z`]));
    await kubectlOk([
      "patch",
      ...POOL,
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { ledger: null, grants } }),
    ]);
    // The pool controller ignores status-only changes (its own writes); an annotation makes it sync now, as an
    // upgrade's first sync would.
    await kubectlOk(["annotate", ...POOL, "e2e/touch=1"]);
    const migrated = await eventually("status.ledger with 3 grants", async () => {
      const o = await getPool();
      return o?.status?.ledger?.grants?.length === 3 && !o.status.grants ? o : undefined;
    });
    assert.equal(migrated.status.conditions.find((c: Obj) => c.type === "Ready").reason, "InvalidSpec");
  });
  await t.step(
    "with the spec fixed, each IPAllocation holds exactly its old range since its old time",
    async () => {
      await kubectlOk(["patch", ...POOL, "--type=json", "-p", '[{"op":"remove","path":"/spec/reserved"}]']);
      for (const name of names) {
        const a = await eventually(`${name} Allocated`, async () => {
          const o = await getObject("ipallocation", name, ns) as Obj | undefined;
          return o?.status?.phase === "Allocated" ? o : undefined;
        });
        assert.equal(a.status.startAddress, old[name]);
        assert.equal(a.status.allocatedCount, 4);
        assert.equal(a.status.allocatedAt, "2026-11-01T00:00:00Z");
      }
      // The allocations read their grants from the migrated ledger, possibly before the pool synced its fixed
      // spec: wait for that sync rather than read the pool once.
      const pool = await eventually("the pool Ready with its fixed spec", async () => {
        const o = await getPool();
        return conditionTrue(o, "Ready") ? o : undefined;
      });
      assert.equal(pool.status.allocationCount, 3);
    },
  );
  await t.step("cleanup: allocations released, pool and namespace gone", async () => {
    await kubectlOk(["delete", "ipallocations", "--all", "-n", ns, "--wait=false"]);
    await eventually("allocations gone", async () => {
      const left = await kubectlOk(["get", "ipallocations", "-n", ns, "-o", "name"]);
      return left.trim() ? undefined : true;
    }, 120);
    await kubectlOk(["delete", ...POOL, "--wait=false"]);
    await eventually("pool gone", async () => (await getPool()) ? undefined : true, 120);
    await kubectl(["delete", "namespace", ns, "--wait=false"]);
  });
});
