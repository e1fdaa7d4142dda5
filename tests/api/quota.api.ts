/**
 * TenantCluster quotas at admission on a real API server, with the webhook's own ServiceAccount (the shipped
 * RBAC) and the shipped ledger policy: refusals through the API server with the seed's messages, the ledger a
 * user can read but not edit, deletes releasing their reservation, and the race: 50 concurrent creates for the
 * last free slot, and for the last CPU, through two webhook instances, exactly one admitted every round, 20
 * rounds each.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { createKubeClient } from "../../lib/kube/mod.ts";
import {
  api,
  applyObject,
  cluster,
  installManifests,
  kubectl,
  kubectlOk,
  serveHookTls,
  shippedAdmissionObjects,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const SA = "system:serviceaccount:butler-system:butler-hooks";
const ROUNDS = 20;
const CONTENDERS = 50;

const tenantCluster = (name: string, namespace: string, cpu = "1") => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: { name, namespace },
  spec: {
    providerConfigRef: { name: "quota-harvester" },
    workers: { replicas: 1, machineTemplate: { cpu, memory: "1Gi", diskSize: "10Gi" } },
  },
});

const create = (namespace: string, obj: unknown, dryRun = false) =>
  api("POST", `/apis/${API}/namespaces/${namespace}/tenantclusters${dryRun ? "?dryRun=All" : ""}`, obj);

async function ledger(namespace: string): Promise<Record<string, string>> {
  const r = await api("GET", `/api/v1/namespaces/${namespace}/configmaps/butler-quota-ledger`);
  return r.status === 200 ? (r.body.data ?? {}) as Record<string, string> : {};
}

async function setLimits(team: string, resourceLimits: Obj): Promise<void> {
  await kubectlOk([
    "patch",
    "team",
    team,
    "--type=merge",
    "-p",
    JSON.stringify({ spec: { resourceLimits } }),
  ]);
}

/** Fires `CONTENDERS` creates at once; returns how many were admitted and the refusals' messages. */
async function race(
  namespace: string,
  round: number,
  cpu = "1",
): Promise<{ admitted: number; messages: string[] }> {
  const answers = await Promise.all(
    Array.from(
      { length: CONTENDERS },
      (_, i) => create(namespace, tenantCluster(`r${round}-${i}`, namespace, cpu)),
    ),
  );
  const messages = answers.filter((a) => a.status !== 201).map((a) => String(a.body.message));
  return { admitted: answers.filter((a) => a.status === 201).length, messages };
}

Deno.test("quotas at admission on a real API server", async (t) => {
  // The base installs the webhooks' RBAC and the ledger policy as shipped.
  await installManifests();
  const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=1h"]))
    .trim();
  // Two webhook instances, each with its own client as the webhook's ServiceAccount; requests alternate.
  const instances = [0, 1].map(() =>
    createApp({
      bodyLimitBytes: 1 << 24,
      clockOverride: false,
      hookConfig: DEFAULT_HOOK_CONFIG,
      routes: HOOK_ROUTES,
      kube: createKubeClient({ server: cluster().server, token: () => token }),
    })
  );
  let turn = 0;
  const server = serveHookTls((req, info) => instances[turn++ % 2]!.app.fetch(req, info));
  const base = `https://127.0.0.1:${server.addr.port}`;
  const namespaces = ["team-quota", "team-quota-cpu"];
  try {
    for (const ns of namespaces) {
      await applyObject({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns, labels: { "butler.butlerlabs.dev/team": ns.slice(5) } },
      });
      await applyObject({
        apiVersion: API,
        kind: "Team",
        metadata: { name: ns.slice(5) },
        spec: { access: { users: [{ name: "alice@example.com", role: "admin" }] } },
      });
    }
    await applyObject({
      apiVersion: API,
      kind: "ProviderConfig",
      metadata: { name: "quota-harvester", namespace: "butler-system" },
      spec: {
        provider: "harvester",
        credentialsRef: { name: "harvester-kubeconfig" },
        harvester: { namespace: "default", networkName: "default/vlan40" },
      },
    });
    await setLimits("quota", { maxClusters: 1 });
    await applyObject(
      (await shippedAdmissionObjects(base)).find((d) => d.kind === "ValidatingWebhookConfiguration"),
    );

    await t.step(
      "the first cluster is admitted and reserved; the next is refused with the seed's message",
      async () => {
        const first = await untilRun(
          async () => {
            const r = await create("team-quota", tenantCluster("first", "team-quota"));
            return { code: r.status === 201 ? 0 : 1, stdout: "", stderr: JSON.stringify(r.body) };
          },
          (r) => r.code === 0,
        );
        assert.equal(first.code, 0, first.stderr);
        const reserved = JSON.parse((await ledger("team-quota")).first ?? "{}");
        assert.equal(reserved.nodes, 1);
        assert.equal(reserved.cpu, "1");
        const second = await untilRun(
          async () => {
            const r = await create("team-quota", tenantCluster("second", "team-quota"));
            return { code: r.status === 201 ? 0 : 1, stdout: "", stderr: String(r.body.message) };
          },
          (r) => r.stderr.includes("team quota limits"),
        );
        assert.equal(
          second.stderr,
          'admission webhook "tenantclusters.admission.butler.butlerlabs.dev" denied the request: spec: Forbidden: team "quota" already has 1 cluster(s); team quota limits to 1',
        );
      },
    );

    await t.step("a dry run is decided but reserves nothing", async () => {
      await setLimits("quota", { maxClusters: 2 });
      const r = await create("team-quota", tenantCluster("dry", "team-quota"), true);
      assert.equal(r.status, 201, JSON.stringify(r.body));
      assert.deepEqual(Object.keys(await ledger("team-quota")), ["first"]);
    });

    await t.step("the ledger is readable and only the webhook writes it", async () => {
      const edit = await kubectl([
        "patch",
        "configmap",
        "butler-quota-ledger",
        "-n",
        "team-quota",
        "--type=merge",
        "-p",
        '{"data":{"first":null}}',
      ]);
      assert.notEqual(edit.code, 0);
      assert.match(
        edit.stderr,
        /ConfigMap butler-quota-ledger holds the quota reservations of this team and is written by the TenantCluster admission webhook only; user "[^"]+" may not update it/,
      );
      const other = await kubectl(["create", "configmap", "other", "-n", "team-quota", "--dry-run=server"], {
        as: { user: SA },
      });
      assert.notEqual(other.code, 0);
      assert.match(
        other.stderr,
        /the admission webhook's account may only write the ConfigMap butler-quota-ledger/,
      );
      const secrets = await kubectl(["get", "secrets", "-n", "team-quota"], { as: { user: SA } });
      assert.notEqual(secrets.code, 0, "the webhook's account reads no Secrets");
    });

    await t.step(
      `${CONTENDERS} concurrent creates for the last free slot: exactly one admitted, ${ROUNDS} rounds`,
      async () => {
        for (let round = 1; round <= ROUNDS; round++) {
          await setLimits("quota", { maxClusters: round + 1 }); // `first` plus one per round so far
          const { admitted, messages } = await race("team-quota", round);
          assert.equal(
            admitted,
            1,
            `round ${round}: ${admitted} admitted; ${messages.slice(0, 2).join(" | ")}`,
          );
          for (const m of messages) {
            assert.match(m, /team quota limits to|kept changing; try again/, `round ${round}: ${m}`);
          }
        }
        const items = (await api("GET", `/apis/${API}/namespaces/team-quota/tenantclusters`)).body
          .items as Obj[];
        assert.equal(items.length, ROUNDS + 1);
        // The ledger keeps only what is in flight: reservations the stored clusters cover are dropped.
        const names = new Set(items.map((i) => i.metadata.name));
        const reserved = Object.keys(await ledger("team-quota"));
        assert.ok(reserved.length >= 1 && reserved.length < ROUNDS, reserved.join(", "));
        for (const key of reserved) assert.ok(names.has(key), `${key} is reserved but was never stored`);
      },
    );

    await t.step(
      `${CONTENDERS} concurrent creates for the last CPU: exactly one admitted, ${ROUNDS} rounds`,
      async () => {
        for (let round = 1; round <= ROUNDS; round++) {
          // Each create asks for 2 CPU; the quota leaves room for exactly one more.
          await setLimits("quota-cpu", { maxCPUCores: String(round * 2 + 1) });
          const { admitted, messages } = await race("team-quota-cpu", round, "2");
          assert.equal(
            admitted,
            1,
            `round ${round}: ${admitted} admitted; ${messages.slice(0, 2).join(" | ")}`,
          );
          for (const m of messages) {
            assert.match(
              m,
              /would exceed team "quota-cpu" CPU quota|kept changing; try again/,
              `round ${round}: ${m}`,
            );
          }
        }
      },
    );

    await t.step("a delete releases its reservation; the slot is free again", async () => {
      await setLimits("quota", { maxClusters: ROUNDS + 1 });
      await kubectlOk(["delete", "tenantcluster", "first", "-n", "team-quota", "--wait=true"]);
      const again = await create("team-quota", tenantCluster("again", "team-quota"));
      assert.equal(again.status, 201, JSON.stringify(again.body));
      assert.ok((await ledger("team-quota")).again, "reserved");
      await kubectlOk(["delete", "tenantcluster", "again", "-n", "team-quota", "--wait=true"]);
      assert.equal((await ledger("team-quota")).again, undefined, "released by the delete");
    });
    await t.step(
      "a team namespace is deleted with its ledger (the policy lets a terminating namespace go)",
      async () => {
        await kubectlOk(["delete", "namespace", "team-quota-cpu", "--wait=false"]);
        await kubectlOk(["wait", "--for=delete", "namespace/team-quota-cpu", "--timeout=60s"]);
      },
    );
  } finally {
    await server.shutdown();
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    for (const ns of namespaces) {
      await kubectl(["delete", "team", ns.slice(5), "--ignore-not-found", "--wait=false"]);
      await kubectl(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]);
    }
    await kubectl([
      "delete",
      "providerconfig",
      "quota-harvester",
      "-n",
      "butler-system",
      "--ignore-not-found",
    ]);
  }
});
