/**
 * Quotas hold at the controllers, with real Metacontroller (docs/security.md#quotas-without-an-authenticated-api-server):
 * with no admission webhook in the way (as with components/without-admission-webhooks, or two reviews
 * racing past an unauthenticated one), two clusters of a team limited to one are both stored; never do both start,
 * the Team holds what does not fit, and deleting one lets the other start. And two started clusters of a team
 * limited to 4 CPUs both grown at once (1 -> 2 and 1 -> 3: 5 of 4): never does what they run pass 4, one change is
 * held with why while its cluster keeps running as admitted, and scaling it back lets it through.
 */
import assert from "node:assert/strict";
import { getObject, kubectl, kubectlOk } from "../api/cluster.ts";
import { eventually } from "./wait.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const TEAM = "race";
const NS = `team-${TEAM}`;
const PC = "race-aws";

const admitted = (o: Obj | undefined) =>
  (o?.status?.conditions ?? []).find((c: Obj) => c.type === "Admitted") as Obj | undefined;

const cluster = (name: string) => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "TenantCluster",
  metadata: { name, namespace: NS },
  spec: { providerConfigRef: { name: PC }, kubernetesVersion: "v1.31.0", workers: { replicas: 1 } },
});

Deno.test("two clusters past a team's limit, stored together: the Team holds them, never both start", async (t) => {
  const pc = (await Deno.readTextFile("examples/providerconfigs/aws-us-east.yaml")).replace(
    /name: aws-us-east\n/,
    `name: ${PC}\n`,
  );
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: pc });
  await kubectlOk(["apply", "--server-side", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: TEAM },
      spec: {
        access: { users: [{ name: "ray@example.com", role: "admin" }] },
        resourceLimits: { maxClusters: 1 },
      },
    }),
  });
  const webhooks = JSON.parse(
    await kubectlOk(["get", "validatingwebhookconfiguration", "butler-admission", "-o", "json"]),
  );
  try {
    await eventually(
      "the team namespace",
      async () => (await getObject("namespace", NS)) ? true : undefined,
      60,
    );
    // No webhook refuses the second create: both are stored.
    await kubectlOk(["delete", "validatingwebhookconfiguration", "butler-admission"]);
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: [cluster("r1"), cluster("r2")].map((c) => JSON.stringify(c)).join("\n"),
    });

    await t.step("one at most starts; what does not fit is held, with why", async () => {
      let held: Obj[] = [];
      const deadline = Date.now() + 90_000;
      let quietUntil = Infinity;
      while (Date.now() < Math.min(deadline, quietUntil)) {
        const both = await Promise.all(["r1", "r2"].map((n) => getObject("tenantcluster", n, NS))) as Obj[];
        const started = both.filter((o) => admitted(o)?.status === "True");
        assert.ok(started.length <= 1, `both started: ${JSON.stringify(both.map(admitted))}`);
        held = both.filter((o) => admitted(o)?.reason === "QuotaExceeded");
        // Once something is held, watch a while longer that nothing else starts.
        if (held.length && quietUntil === Infinity) quietUntil = Date.now() + 10_000;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.ok(held.length >= 1, "a cluster is held");
      for (const o of held) {
        assert.equal(o.status.phase, "Pending");
        assert.match(
          admitted(o)!.message,
          /team "race" holds this cluster: team "race" already has 1 cluster\(s\); team quota limits to 1/,
        );
        const ready = o.status.conditions.find((c: Obj) => c.type === "Ready");
        assert.deepEqual([ready.status, ready.reason], ["False", "QuotaExceeded"]);
      }
      const team = await getObject("team", TEAM) as Obj;
      assert.ok((team.status.admission?.held ?? []).length >= 1, JSON.stringify(team.status.admission));
    });

    await t.step("deleting r2 lets r1 start, and it stays started", async () => {
      await kubectlOk(["delete", "tenantcluster", "r2", "-n", NS]);
      const r1 = await eventually("r1 Ready", async () => {
        const o = await getObject("tenantcluster", "r1", NS) as Obj | undefined;
        return o?.status?.phase === "Ready" ? o : undefined;
      }, 90);
      assert.equal(admitted(r1)?.status, "True");
      const team = await eventually("the Team names no waiting cluster", async () => {
        const o = await getObject("team", TEAM) as Obj | undefined;
        return o && !o.status?.admission ? o : undefined;
      });
      assert.equal(team.status.clusterCount, 1);
    });
  } finally {
    delete webhooks.metadata.resourceVersion;
    delete webhooks.metadata.uid;
    delete webhooks.metadata.managedFields;
    delete webhooks.metadata.creationTimestamp;
    delete webhooks.metadata.generation;
    await kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], {
      stdin: JSON.stringify(webhooks),
    });
    await kubectl(["delete", "team", TEAM, "--wait=false"]);
    await eventually("team gone", async () => (await getObject("team", TEAM)) ? undefined : true, 120);
    await kubectl(["delete", "providerconfig", PC, "-n", "butler-system", "--wait=false"]);
  }
});

const GROW = "grow";
const GROW_NS = `team-${GROW}`;
const GROW_PC = "grow-aws";

const sized = (name: string, cpu: string) => ({
  apiVersion: "butler.butlerlabs.dev/v1alpha1",
  kind: "TenantCluster",
  metadata: { name, namespace: GROW_NS },
  spec: {
    providerConfigRef: { name: GROW_PC },
    kubernetesVersion: "v1.31.0",
    workers: { replicas: 1, machineTemplate: { cpu } },
  },
});

const condition = (o: Obj | undefined, type: string) =>
  (o?.status?.conditions ?? []).find((c: Obj) => c.type === type) as Obj | undefined;

/** CPUs a cluster runs with: its effective workers times CPU per worker, once it started. */
const running = (o: Obj | undefined) =>
  admitted(o)?.status === "True"
    ? o!.status.effective.workerCount.value * Number(o!.status.effective.workerCPU.value)
    : 0;

/** CPUs a cluster's quota record says its Team admitted. */
async function recorded(name: string): Promise<number> {
  const cm = await getObject("configmap", `${name}-quota`, GROW_NS) as Obj | undefined;
  const a = cm?.data?.admitted && JSON.parse(cm.data.admitted);
  return a ? a.workerCount.value * Number(a.workerCPU.value) : 0;
}

Deno.test("two started clusters grown together past a team's CPU: one change is held, none runs past it", async (t) => {
  const pc = (await Deno.readTextFile("examples/providerconfigs/aws-us-east.yaml")).replace(
    /name: aws-us-east\n/,
    `name: ${GROW_PC}\n`,
  );
  await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: pc });
  await kubectlOk(["apply", "--server-side", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "Team",
      metadata: { name: GROW },
      spec: {
        access: { users: [{ name: "ray@example.com", role: "admin" }] },
        resourceLimits: { maxCPUCores: "4" },
      },
    }),
  });
  const webhooks = JSON.parse(
    await kubectlOk(["get", "validatingwebhookconfiguration", "butler-admission", "-o", "json"]),
  );
  const both = async () =>
    await Promise.all(["g1", "g2"].map((n) => getObject("tenantcluster", n, GROW_NS))) as Obj[];
  try {
    await eventually(
      "the team namespace",
      async () => (await getObject("namespace", GROW_NS)) ? true : undefined,
      60,
    );
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: [sized("g1", "1"), sized("g2", "1")].map((c) => JSON.stringify(c)).join("\n"),
    });
    await t.step("both start, 1 CPU each", async () => {
      await eventually("g1 and g2 Ready", async () => {
        const o = await both();
        return o.every((c) => c?.status?.phase === "Ready") ? o : undefined;
      }, 90);
    });

    // No webhook checks the updates against each other: both are stored, each asking for more than fits beside
    // the other (2 + 3 = 5 of 4).
    await kubectlOk(["delete", "validatingwebhookconfiguration", "butler-admission"]);
    await kubectlOk(["apply", "--server-side", "-f", "-"], {
      stdin: [sized("g1", "2"), sized("g2", "3")].map((c) => JSON.stringify(c)).join("\n"),
    });

    await t.step("never past 4 CPUs; one change held with why, its cluster running as admitted", async () => {
      let held: Obj | undefined;
      const deadline = Date.now() + 90_000;
      let quietUntil = Infinity;
      while (Date.now() < Math.min(deadline, quietUntil)) {
        const o = await both();
        const inForce = running(o[0]) + running(o[1]);
        assert.ok(
          inForce <= 4,
          `running ${inForce} CPUs: ${JSON.stringify(o.map((c) => c?.status?.effective))}`,
        );
        const records = (await recorded("g1")) + (await recorded("g2"));
        assert.ok(records <= 4, `records admit ${records} CPUs`);
        held = o.find((c) => condition(c, "ChangeAdmitted")?.reason === "QuotaExceeded");
        if (held && quietUntil === Infinity) quietUntil = Date.now() + 10_000;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.ok(held, "a change is held");
      assert.match(
        condition(held, "ChangeAdmitted")!.message,
        /team "grow" holds this change \(CPU per worker 1 -> [23]\): total CPU \(5\) would exceed team "grow" CPU quota \(4\); the cluster runs as admitted until it fits/,
      );
      // Still running, as admitted: Ready, started, its effective CPU the one admitted.
      assert.equal(held!.status.phase, "Ready");
      assert.equal(admitted(held)?.status, "True");
      assert.equal(held!.status.effective.workerCPU.value, "1");
      const team = await getObject("team", GROW) as Obj;
      assert.equal(team.status.admission?.held?.length, 1, JSON.stringify(team.status.admission));
    });

    await t.step("scaled back to fit, the held change is admitted and applied", async () => {
      const o = await both();
      const held = o.find((c) => condition(c, "ChangeAdmitted")?.reason === "QuotaExceeded")!;
      const other = o.find((c) => c !== held)!;
      const room = String(4 - running(other));
      await kubectlOk(["apply", "--server-side", "-f", "-"], {
        stdin: JSON.stringify(sized(held.metadata.name, room)),
      });
      await eventually(`${held.metadata.name} runs with ${room} CPU`, async () => {
        const c = await getObject("tenantcluster", held.metadata.name, GROW_NS) as Obj | undefined;
        return c?.status?.effective?.workerCPU?.value === room &&
            condition(c, "ChangeAdmitted")?.status === "True"
          ? c
          : undefined;
      }, 90);
      const after = await both();
      assert.ok(running(after[0]) + running(after[1]) <= 4);
    });
  } finally {
    delete webhooks.metadata.resourceVersion;
    delete webhooks.metadata.uid;
    delete webhooks.metadata.managedFields;
    delete webhooks.metadata.creationTimestamp;
    delete webhooks.metadata.generation;
    await kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], {
      stdin: JSON.stringify(webhooks),
    });
    await kubectl(["delete", "team", GROW, "--wait=false"]);
    await eventually("team gone", async () => (await getObject("team", GROW)) ? undefined : true, 120);
    await kubectl(["delete", "providerconfig", GROW_PC, "-n", "butler-system", "--wait=false"]);
  }
});
