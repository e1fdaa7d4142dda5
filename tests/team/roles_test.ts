import assert from "node:assert/strict";
import { discoverGoldenCases, loadKustomization, type Manifest } from "../../lib/testing/mod.ts";

const objects = loadKustomization(new URL("../../manifests", import.meta.url).pathname);
const role = (name: string) => objects.find((o) => o.kind === "ClusterRole" && o.metadata.name === name)!;

/** `group/resource -> sorted verbs` for a ClusterRole. */
function verbs(name: string): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const rule of role(name).rules as Manifest[]) {
    for (const g of rule.apiGroups) {
      for (const r of rule.resources) {
        for (const v of rule.verbs) (out[`${g || "core"}/${r}`] ??= new Set()).add(v);
      }
    }
  }
  return Object.fromEntries(Object.entries(out).sort().map(([k, v]) => [k, [...v].sort()]));
}

const READ = ["get", "list", "watch"];
const WRITE = ["create", "delete", "patch", "update"];
const ALL = [...READ, ...WRITE].sort();
const butlerRead = {
  "butler.butlerlabs.dev/ipallocations": READ,
  "butler.butlerlabs.dev/loadbalancerinventories": READ,
  "butler.butlerlabs.dev/providerconfigs": READ,
  "butler.butlerlabs.dev/tenantclusters": READ,
};

Deno.test("team roles grant exactly these verbs", async (t) => {
  await t.step(
    "viewer reads Butler resources, nothing else",
    () => assert.deepEqual(verbs("butler-team-viewer"), butlerRead),
  );
  await t.step(
    "operator also creates, updates and deletes TenantClusters",
    () =>
      assert.deepEqual(verbs("butler-team-operator"), {
        ...butlerRead,
        "butler.butlerlabs.dev/tenantclusters": ALL,
        "butler.butlerlabs.dev/tenantclusters/environment": ["create", "delete", "update"],
      }),
  );
  await t.step(
    "admin also manages team ProviderConfigs and their credential Secrets",
    () =>
      assert.deepEqual(verbs("butler-team-admin"), {
        ...butlerRead,
        "butler.butlerlabs.dev/tenantclusters": ALL,
        "butler.butlerlabs.dev/tenantclusters/environment": ["create", "delete", "update"],
        "butler.butlerlabs.dev/providerconfigs": ALL,
        "core/secrets": ALL,
      }),
  );
  await t.step("no wildcards anywhere", () => {
    for (const r of ["viewer", "operator", "admin"]) {
      assert.doesNotMatch(JSON.stringify(role(`butler-team-${r}`).rules), /"\*"/);
    }
  });
});

Deno.test("no Team ever binds cluster-admin, edit or admin, and every binding names a shipped role", () => {
  const shipped = new Set(["butler-team-viewer", "butler-team-operator", "butler-team-admin"]);
  const cases = discoverGoldenCases(new URL("../fixtures", import.meta.url).pathname).filter((c) =>
    c.kind === "team"
  );
  let bindings = 0;
  let roles = 0;
  for (const c of cases) {
    const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
    for (const child of res.children ?? []) {
      if (child.kind === "Role") {
        // An environment elevation: TenantCluster changes, narrowed to its environment by the admission policy.
        assert.deepEqual(child.rules.map((r: Manifest) => r.resources), [
          ["tenantclusters"],
          ["tenantclusters/environment"],
        ]);
        assert.equal(child.rules[1].resourceNames.length, 1, `${c.name}: one environment per Role`);
        roles++;
      }
      if (child.kind !== "RoleBinding") continue;
      bindings++;
      if (child.metadata.name === "butler-reporter-kubeconfigs") {
        // The reporter's ServiceAccount only, to get the tenant kubeconfig Secrets of this namespace.
        assert.deepEqual(child.roleRef, {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: "butler-reporter-kubeconfigs",
        });
        assert.deepEqual(child.subjects, [
          { kind: "ServiceAccount", name: "butler-reporter", namespace: "butler-system" },
        ]);
        continue;
      }
      const ok = child.roleRef.kind === "Role"
        ? res.children.some((r: Manifest) => r.kind === "Role" && r.metadata.name === child.roleRef.name)
        : shipped.has(child.roleRef.name);
      assert.ok(ok, `${c.name}: ${child.roleRef.kind} ${child.roleRef.name}`);
    }
    for (const child of res.children ?? []) {
      if (child.kind === "ClusterRoleBinding") {
        assert.match(child.roleRef.name, /^butler-team-.+-(member|admin)$/);
      }
    }
  }
  assert.ok(bindings > 10);
  assert.ok(roles >= 2, "the fixtures elevate someone in an environment");
});
