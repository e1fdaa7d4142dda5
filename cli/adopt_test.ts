import assert from "node:assert/strict";
import fc from "fast-check";
import { parseAllDocuments } from "yaml";
import { KubeApiError } from "../lib/kube/mod.ts";
import { adoptions, CHILD_KINDS, type Listed, type Parents, renderAdoptions } from "./adopt.ts";
import { type CliIo, runCli } from "./main.ts";

const ROOT = new URL("..", import.meta.url).pathname;

/** The child kinds (and attachments) of a shipped controller, `apiVersion resource`. */
function shipped(file: string, field: "childResources" | "attachments"): string[] {
  const docs = parseAllDocuments(Deno.readTextFileSync(`${ROOT}${file}`)).map((d) => d.toJS());
  const spec = docs.find((d) => d?.kind?.endsWith("Controller")).spec;
  return (spec[field] as { apiVersion: string; resource: string }[]).map((c) =>
    `${c.apiVersion} ${c.resource}`
  )
    .sort();
}

const kindsOf = (controller: string) =>
  CHILD_KINDS.filter((k) => k.controller === controller).map((k) => `${k.apiVersion} ${k.resource}`).sort();

const team = (name: string, uid: string): Listed => ({ metadata: { name, uid } });
const tc = (ns: string, name: string, uid: string): Listed => ({ metadata: { namespace: ns, name, uid } });
const PARENTS: Parents = {
  Team: new Map([["payments", team("payments", "team-new")]]),
  TenantCluster: new Map([["team-payments/web", tc("team-payments", "web", "tc-new")]]),
  IPAddressClaim: new Map([["team-payments/node-0", tc("team-payments", "node-0", "claim-new")]]),
};
const kind = (resource: string, controller = "") =>
  CHILD_KINDS.find((k) => k.resource === resource && (!controller || k.controller === controller))!;

Deno.test("adopt: every child kind of the shipped controllers, and no other", () => {
  assert.deepEqual(kindsOf("butler-team"), shipped("manifests/controllers/team.yaml", "childResources"));
  assert.deepEqual(
    kindsOf("butler-tenantcluster"),
    shipped("manifests/controllers/tenantcluster.yaml", "childResources"),
  );
  assert.deepEqual(
    kindsOf("butler-ipaddressclaim"),
    shipped("manifests/components/cluster-api-ipam/decoratorcontroller.yaml", "attachments"),
  );
});

Deno.test("adopt: what a restore leaves, and what is written", async (t) => {
  const restored = (labels: Record<string, string>, extra: Partial<Listed["metadata"]> = {}): Listed => ({
    metadata: { name: "team-payments", labels, ...extra },
  });
  const teamLabels = { "butler.butlerlabs.dev/team": "payments", "controller-uid": "team-old" };
  await t.step("a Team's namespace with the old UID: relabelled with the new one", () => {
    const [a, ...rest] = adoptions(kind("namespaces"), [restored(teamLabels)], PARENTS);
    assert.equal(rest.length, 0);
    assert.equal(a!.write, "label");
    assert.equal(a!.parent, "Team payments");
    const m = (a!.object as { metadata: Listed["metadata"] }).metadata;
    assert.equal(m.labels!["controller-uid"], "team-new");
    assert.equal(m.labels!["butler.butlerlabs.dev/team"], "payments");
    assert.equal((a!.object as { kind: string }).kind, "Namespace");
  });
  await t.step("nothing for one already labelled, owned, being deleted, or naming no Team", () => {
    const none = [
      restored({ ...teamLabels, "controller-uid": "team-new" }),
      restored(teamLabels, { ownerReferences: [{ controller: true, uid: "x" }] }),
      restored(teamLabels, { deletionTimestamp: "2026-11-21T09:00:00Z" }),
      restored({ ...teamLabels, "butler.butlerlabs.dev/team": "gone" }),
      { metadata: { name: "other", labels: teamLabels } }, // not the Team's namespace
    ];
    assert.deepEqual(adoptions(kind("namespaces"), none, PARENTS), []);
  });
  await t.step("a Role outside the Team's namespace names no Team", () => {
    const role = (namespace: string): Listed => ({ metadata: { name: "r", namespace, labels: teamLabels } });
    assert.equal(adoptions(kind("roles"), [role("team-payments")], PARENTS).length, 1);
    assert.equal(adoptions(kind("roles"), [role("team-other")], PARENTS).length, 0);
  });
  await t.step("a TenantCluster's ConfigMap: by its tenant label, in its namespace", () => {
    const cm = (namespace: string): Listed => ({
      metadata: {
        name: "web-metallb",
        namespace,
        labels: { "butler.butlerlabs.dev/tenant": "web", "controller-uid": "tc-old" },
      },
    });
    const [a] = adoptions(kind("configmaps"), [cm("team-payments"), cm("team-other")], PARENTS);
    assert.equal(a?.parent, "TenantCluster team-payments/web");
    assert.equal(adoptions(kind("configmaps"), [cm("team-other")], PARENTS).length, 0);
  });
  await t.step("a claim's IPAllocation and IPAddress: the claim as controller, other owners kept", () => {
    const annotations = { "metacontroller.k8s.io/decorator-controller": "butler-ipaddressclaim" };
    const ipa: Listed = {
      metadata: {
        name: "claim-node-0",
        namespace: "team-payments",
        labels: { "butler.butlerlabs.dev/ipaddressclaim": "node-0" },
        annotations,
        ownerReferences: [{ uid: "keep" }],
      },
    };
    const ip: Listed = {
      metadata: { name: "node-0", namespace: "team-payments", annotations },
      spec: { claimRef: { name: "node-0" } },
    };
    const [a] = adoptions(kind("ipallocations", "butler-ipaddressclaim"), [ipa], PARENTS);
    const refs = (a!.object as { metadata: { ownerReferences: Record<string, unknown>[] } }).metadata
      .ownerReferences;
    assert.deepEqual(refs, [{ uid: "keep" }, {
      apiVersion: "ipam.cluster.x-k8s.io/v1beta2",
      kind: "IPAddressClaim",
      name: "node-0",
      uid: "claim-new",
      controller: true,
      blockOwnerDeletion: true,
    }]);
    assert.equal(adoptions(kind("ipaddresses"), [ip], PARENTS)[0]?.write, "owner");
    // Not made by the claims' decorator: not its attachment.
    assert.equal(
      adoptions(kind("ipaddresses"), [{ ...ip, metadata: { ...ip.metadata, annotations: {} } }], PARENTS)
        .length,
      0,
    );
  });
  await t.step("the lines it prints", () => {
    const [a] = adoptions(kind("namespaces"), [restored(teamLabels)], PARENTS);
    assert.equal(
      renderAdoptions([a!], true),
      "namespace team-payments would be labelled controller-uid for its Team payments\n",
    );
    assert.match(renderAdoptions([], false), /nothing to adopt/);
  });
});

Deno.test("adopt: a child is only ever given the parent its own labels name, in its own namespace", () => {
  const names = ["a", "b", "payments"];
  const parents: Parents = {
    Team: new Map(names.map((n) => [n, team(n, `team-${n}-uid`)])),
    TenantCluster: new Map(names.map((n) => [`team-${n}/${n}`, tc(`team-${n}`, n, `tc-${n}-uid`)])),
    IPAddressClaim: new Map(names.map((n) => [`team-${n}/${n}`, tc(`team-${n}`, n, `claim-${n}-uid`)])),
  };
  const pick = fc.constantFrom(...names, "gone");
  const child = fc.record({
    kind: fc.constantFrom(...CHILD_KINDS),
    name: pick.map((n) => `team-${n}`),
    namespace: pick.map((n) => `team-${n}`),
    team: fc.option(pick, { nil: undefined }),
    tenant: fc.option(pick, { nil: undefined }),
    claim: fc.option(pick, { nil: undefined }),
    uid: fc.constantFrom("old", "team-a-uid", "tc-b-uid"),
    owned: fc.boolean(),
    decorated: fc.boolean(),
  });
  fc.assert(fc.property(child, (c) => {
    const labels: Record<string, string> = { "controller-uid": c.uid };
    if (c.team) labels["butler.butlerlabs.dev/team"] = c.team;
    if (c.tenant) labels["butler.butlerlabs.dev/tenant"] = c.tenant;
    if (c.claim) labels["butler.butlerlabs.dev/ipaddressclaim"] = c.claim;
    const o: Listed = {
      metadata: {
        name: c.name,
        ...(c.kind.namespaced ? { namespace: c.namespace } : {}),
        labels,
        annotations: c.decorated ? { "metacontroller.k8s.io/decorator-controller": c.kind.controller } : {},
        ownerReferences: c.owned ? [{ controller: true, uid: "someone" }] : [],
      },
      spec: { claimRef: { name: c.claim } },
    };
    for (const a of adoptions(c.kind, [o], parents)) {
      assert.ok(!c.owned, "an owned object is never adopted");
      const [kindName, key] = a.parent.split(" ") as [string, string];
      if (kindName === "Team") {
        assert.equal(key, c.team);
        if (c.kind.namespaced) assert.equal(c.namespace, `team-${c.team}`);
      } else {
        assert.equal(key.split("/")[0], c.namespace);
        assert.equal(key.split("/")[1], kindName === "TenantCluster" ? c.tenant : c.claim);
      }
      const meta = (a.object as { metadata: Listed["metadata"] }).metadata;
      const uid = a.write === "label"
        ? meta.labels!["controller-uid"]
        : meta.ownerReferences!.find((r) => r.controller)!.uid;
      const parent = parents[kindName as keyof Parents].get(key)!;
      assert.equal(uid, parent.metadata.uid);
    }
  }));
});

Deno.test("kubectl butler adopt: lists, writes with the precondition, says what it did", async () => {
  const out: string[] = [];
  const err: string[] = [];
  const writes: { method: string; path: string; body: unknown }[] = [];
  const ns: Listed = {
    metadata: {
      name: "team-payments",
      resourceVersion: "7",
      labels: { "butler.butlerlabs.dev/team": "payments", "controller-uid": "team-old" },
    } as Listed["metadata"],
  };
  const io: CliIo = {
    name: "kubectl butler",
    writeFile: () => {},
    readFile: () => "",
    readStdin: () => Promise.resolve(""),
    plan: () => Promise.resolve(0),
    stdout: (t) => out.push(t),
    stderr: (t) => err.push(t),
    connect: () => ({
      namespace: "default",
      kube: {
        get: () => Promise.resolve(undefined),
        list: (path) => {
          if (path.endsWith("/ipaddressclaims") || path.endsWith("/ipaddresses")) {
            return Promise.reject(new KubeApiError(404, "NotFound", "the server could not find it", path));
          }
          if (path === "/apis/butler.butlerlabs.dev/v1alpha1/teams") {
            return Promise.resolve([team("payments", "team-new")]);
          }
          return Promise.resolve(path === "/api/v1/namespaces" ? [ns] : []);
        },
        write: (method, path, body) => {
          writes.push({ method, path, body });
          return Promise.resolve(body);
        },
      },
    }),
  };
  assert.equal(await runCli(["adopt", "--dry-run"], io), 0);
  assert.deepEqual(writes.map((w) => `${w.method} ${w.path}`), [
    "PUT /api/v1/namespaces/team-payments?dryRun=All",
  ]);
  const body = writes[0]!.body as { apiVersion: string; metadata: { resourceVersion: string } };
  assert.equal(body.apiVersion, "v1");
  assert.equal(body.metadata.resourceVersion, "7");
  assert.match(
    out.join(""),
    /namespace team-payments would be labelled controller-uid for its Team payments/,
  );
  assert.match(err.join(""), /ipaddressclaims not listed/);
  assert.equal(await runCli(["adopt", "x"], io), 2);
});
