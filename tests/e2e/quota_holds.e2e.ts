/**
 * Quotas hold at the controllers, with real Metacontroller
 * (docs/security.md#quotas-without-an-authenticated-api-server): with no admission webhook in the way (as with components/without-admission-webhooks, or two creates
 * racing past an unauthenticated one), two clusters of a team limited to one are both stored; never do both start,
 * the Team holds what does not fit, and deleting one lets the other start.
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
          /do not fit within team "race"'s limits together \(.*team quota limits to 1\)/,
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
