/**
 * The built-in kinds `plan` knows (lib/plan/builtin_kinds.ts) are the ones the real API server serves: its
 * discovery, without the groups of the CRDs installed in it, is the table of its minor version, kind for kind and
 * scope for scope. A kind Kubernetes adds or removes in a release shows here first.
 */
import assert from "node:assert/strict";
import { builtinKinds } from "../../lib/plan/mod.ts";
import { kubectlOk } from "./cluster.ts";
import { KUBERNETES_VERSION } from "./tools.ts";

interface ResourceList {
  groupVersion: string;
  resources: { name: string; kind: string; namespaced: boolean }[];
}

async function discovered(): Promise<string[]> {
  const crdGroups = new Set(
    (await kubectlOk(["get", "crd", "-o", 'jsonpath={range .items[*]}{.spec.group}{"\\n"}{end}'])).split(
      "\n",
    ),
  );
  const groups = JSON.parse(await kubectlOk(["get", "--raw", "/apis"])) as {
    groups: { name: string; versions: { groupVersion: string }[] }[];
  };
  const versions = [
    "/api/v1",
    ...groups.groups.filter((g) => !crdGroups.has(g.name)).flatMap((g) =>
      g.versions.map((v) => `/apis/${v.groupVersion}`)
    ),
  ];
  const out: string[] = [];
  for (const path of versions) {
    const list = JSON.parse(await kubectlOk(["get", "--raw", path])) as ResourceList;
    for (const r of list.resources.filter((r) => !r.name.includes("/"))) {
      out.push(`${list.groupVersion} ${r.kind} ${r.namespaced ? "namespaced" : "cluster"}`);
    }
  }
  return out.sort();
}

Deno.test("plan's built-in kinds are the API server's", async () => {
  const minor = Number(KUBERNETES_VERSION.split(".")[1]);
  const ours = builtinKinds(minor).map((k) =>
    `${k.group ? `${k.group}/${k.version}` : k.version} ${k.kind} ${k.namespaced ? "namespaced" : "cluster"}`
  ).sort();
  assert.deepEqual(ours, await discovered());
});
