/**
 * TenantCluster quotas at admission on a real API server, with the webhook's own ServiceAccount (the shipped
 * RBAC) and the shipped ledger policy: refusals through the API server with the seed's messages, the ledger a
 * user can read but not edit, deletes releasing their reservation, and the race: 50 concurrent creates for the
 * last free slot, and for the last CPU, through two webhook instances reading from their watch caches, exactly one
 * admitted every round and no refusal for contention, 20 rounds each; the same with both caches two seconds
 * behind; dry runs (server-side, `kubectl diff`) that leave the ledger untouched; and a burst of 1,000 concurrent
 * creates into one team: no overshoot, and every refusal a limit's or the ledger bound's, never an error.
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import assert from "node:assert/strict";
import { createKubeCache, createKubeClient, type KubeCache } from "../../lib/kube/mod.ts";
import { ADMISSION_CACHE } from "../../lib/api/mod.ts";
import { SETTLE_AFTER_SECONDS } from "../../hooks/tenantcluster/reservations.ts";
import {
  api,
  applyObject,
  cluster,
  hookService,
  installManifests,
  kubectl,
  kubectlOk,
  serveHookTls,
  shippedAdmissionObjects,
  untilRun,
} from "./cluster.ts";
import { lagging } from "./lagging.ts";

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
  // Two webhook instances, each with its own watch cache as the webhook's ServiceAccount; requests alternate.
  // Two more whose caches lag two seconds behind the API server.
  const caches: KubeCache[] = [0, 2000, 0, 2000].map((lag) => {
    const client = createKubeClient({ server: cluster().server, token: () => token });
    return createKubeCache({ client: lag ? lagging(client, lag) : client, collections: ADMISSION_CACHE });
  });
  const instances = caches.map((kube) => hookService(kube));
  let turn = 0;
  let lagged = false;
  // Timely instances 0 and 2, or lagging 1 and 3.
  const server = serveHookTls((req, info) =>
    instances[(turn++ % 2) * 2 + (lagged ? 1 : 0)]!.app.fetch(req, info)
  );
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
        /the admission webhook.s account may only write the ConfigMaps butler-quota-ledger of team namespaces \(labelled butler.butlerlabs.dev\/team\) and butler-system\/butler-pool-registry/,
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
          for (const m of messages) assert.match(m, /team quota limits to/, `round ${round}: ${m}`);
        }
        const items = (await api("GET", `/apis/${API}/namespaces/team-quota/tenantclusters`)).body
          .items as Obj[];
        assert.equal(items.length, ROUNDS + 1);
        const names = new Set(items.map((i) => i.metadata.name));
        for (const key of Object.keys(await ledger("team-quota"))) {
          assert.ok(names.has(key), `${key} is reserved but was never stored`);
        }
        // The ledger keeps only what is in flight: reservations their stored clusters cover are dropped by the
        // next write once a few seconds old (SETTLE_AFTER_SECONDS).
        await new Promise((r) => setTimeout(r, (SETTLE_AFTER_SECONDS + 1) * 1000));
        await setLimits("quota", { maxClusters: ROUNDS + 2 });
        const next = await create("team-quota", tenantCluster("settles", "team-quota"));
        assert.equal(next.status, 201, JSON.stringify(next.body));
        assert.deepEqual(Object.keys(await ledger("team-quota")), ["settles"]);
        await kubectlOk(["delete", "tenantcluster", "settles", "-n", "team-quota", "--wait=true"]);
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
            assert.match(m, /would exceed team "quota-cpu" CPU quota/, `round ${round}: ${m}`);
          }
        }
      },
    );

    await t.step(
      `with both caches 2 s behind the API server: exactly one admitted, ${ROUNDS / 2} rounds`,
      async () => {
        lagged = true;
        let contended = 0;
        try {
          for (let round = ROUNDS + 1; round <= ROUNDS + ROUNDS / 2; round++) {
            await setLimits("quota", { maxClusters: round + 1 });
            const { admitted, messages } = await race("team-quota", round);
            assert.equal(
              admitted,
              1,
              `round ${round}: ${admitted} admitted; ${messages.slice(0, 2).join(" | ")}`,
            );
            // Caches this far behind make decisions conflict and read the API again; a group that kept losing
            // within the budget would be told to try again, never admitted on a stale view: counted, not failed.
            for (const m of messages) {
              assert.match(m, /team quota limits to|kept changing; try again/, `round ${round}: ${m}`);
              if (/try again/.test(m)) contended++;
            }
            const stored =
              ((await api("GET", `/apis/${API}/namespaces/team-quota/tenantclusters`)).body as Obj)
                .items as Obj[];
            assert.ok(stored.length <= round + 1, `round ${round}: ${stored.length} stored, over the quota`);
          }
          console.log(
            `caches 2 s behind: ${contended} of ${(ROUNDS / 2) * CONTENDERS} creates told to try again`,
          );
          // Bring the team to a known count for the steps after: `first`, one per round.
          await setLimits("quota", { maxClusters: ROUNDS + ROUNDS / 2 + 1 });
          const stored = ((await api("GET", `/apis/${API}/namespaces/team-quota/tenantclusters`)).body as Obj)
            .items as Obj[];
          for (let i = stored.length; i < ROUNDS + ROUNDS / 2 + 1; i++) {
            const r = await create("team-quota", tenantCluster(`fill-${i}`, "team-quota"));
            assert.equal(r.status, 201, JSON.stringify(r.body));
          }
        } finally {
          lagged = false;
        }
      },
    );

    await t.step(
      "dry runs write nothing: a server-side dry-run create, kubectl diff, a dry-run apply",
      async () => {
        await setLimits("quota", { maxClusters: 1000 });
        const before = (await api("GET", "/api/v1/namespaces/team-quota/configmaps/butler-quota-ledger"))
          .body as Obj;
        const dry = await create("team-quota", tenantCluster("dry-one", "team-quota"), true);
        assert.equal(dry.status, 201, JSON.stringify(dry.body));
        const manifest = JSON.stringify({
          apiVersion: "v1",
          kind: "List",
          items: [
            tenantCluster("dry-two", "team-quota"),
            tenantCluster("first", "team-quota", "2"), // an existing cluster, scaled up
          ],
        });
        const diff = await kubectl(["diff", "-f", "-"], { stdin: manifest });
        assert.equal(diff.code, 1, `kubectl diff shows the changes: ${diff.stderr}`);
        assert.match(diff.stdout, /dry-two/);
        const applied = await kubectl(["apply", "--dry-run=server", "-f", "-"], { stdin: manifest });
        assert.equal(applied.code, 0, applied.stderr);
        const after = (await api("GET", "/api/v1/namespaces/team-quota/configmaps/butler-quota-ledger"))
          .body as Obj;
        assert.equal(
          after.metadata.resourceVersion,
          before.metadata.resourceVersion,
          "ledger untouched",
        );
        const names = ((await api("GET", `/apis/${API}/namespaces/team-quota/tenantclusters`)).body as Obj)
          .items
          .map((i: Obj) => i.metadata.name);
        assert.ok(!names.includes("dry-one") && !names.includes("dry-two"), "nothing stored");
      },
    );

    await t.step(
      "1,000 concurrent creates into one team: no overshoot, no error, only the limit refuses",
      async () => {
        await applyObject({
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: "team-burst", labels: { "butler.butlerlabs.dev/team": "burst" } },
        });
        await applyObject({
          apiVersion: API,
          kind: "Team",
          metadata: { name: "burst" },
          spec: {
            access: { users: [{ name: "alice@example.com", role: "admin" }] },
            resourceLimits: { maxClusters: 600 },
          },
        });
        namespaces.push("team-burst");
        // Names of 60 characters: the ledger's in-flight reservations approach its bound.
        const name = (i: number) => `burst-${String(i).padStart(4, "0")}-${"x".repeat(49)}`;
        const answers = await Promise.all(
          Array.from({ length: 1000 }, (_, i) => create("team-burst", tenantCluster(name(i), "team-burst"))),
        );
        const byStatus: Record<string, number> = {};
        for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
        const admitted = answers.filter((a) => a.status === 201).length;
        for (const a of answers.filter((a) => a.status !== 201)) {
          assert.ok(
            // The limit; the ledger's bound; or "try again" when the API server is too slow for the ledger's
            // write or keeps it changing: every answer is the webhook's, never the API server's webhook timeout.
            (a.status === 403 && /team quota limits to 600/.test(String(a.body.message))) ||
              (a.status === 429 && /over its bound of 262144 bytes/.test(String(a.body.message))) ||
              (a.status === 429 && /did not answer .* in time; try again/.test(String(a.body.message))) ||
              (a.status === 409 && /kept changing; try again/.test(String(a.body.message))),
            `${a.status}: ${a.body.message} (${JSON.stringify(byStatus)})`,
          );
        }
        assert.ok(admitted <= 600, `${admitted} admitted over a limit of 600`);
        const stored = (await api("GET", `/apis/${API}/namespaces/team-burst/tenantclusters`)).body
          .items as Obj[];
        assert.equal(stored.length, admitted);
        console.log(`1,000 concurrent creates, limit 600: ${JSON.stringify(byStatus)}`);
        for (const status of Object.keys(byStatus).filter((s) => s !== "201")) {
          console.log(`  ${status}: ${answers.find((a) => String(a.status) === status)?.body.message}`);
        }
      },
    );

    await t.step("a delete releases its reservation; the slot is free again", async () => {
      // `first`, one per round, and one per lagged round: the team is full; a delete frees one slot.
      await setLimits("quota", { maxClusters: ROUNDS + ROUNDS / 2 + 1 });
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
    await Promise.all(caches.map((c) => c.stop()));
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
