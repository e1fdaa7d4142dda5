/**
 * The status every hook fixture writes survives a real status subresource write (the API server prunes what the
 * schema does not declare and refuses what it forbids), and `kubectl get` shows each kind's printer columns.
 */
import assert from "node:assert/strict";
import { discoverGoldenCases } from "../../lib/testing/mod.ts";
import { api, ensureNamespaces, installManifests, kubectlOk, ROOT } from "./cluster.ts";

const PLURAL: Record<string, string> = {
  NetworkPool: "networkpools",
  IPAllocation: "ipallocations",
  ProviderConfig: "providerconfigs",
  Team: "teams",
  TenantCluster: "tenantclusters",
  IPAddressClaim: "ipaddressclaims",
};

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: Record<string, unknown> & { name: string; namespace?: string };
  spec?: unknown;
  status?: Record<string, unknown>;
};

function pathOf(o: Obj): string {
  const ns = o.metadata.namespace ? `/namespaces/${o.metadata.namespace}` : "";
  return `/apis/${o.apiVersion}${ns}/${PLURAL[o.kind]}/${o.metadata.name}`;
}

/** The parent as a user would create it: no server-managed metadata, no status. */
function asCreated(o: Obj): Obj {
  const { name, namespace, labels, annotations } = o.metadata;
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      ...(labels ? { labels } : {}),
      ...(annotations ? { annotations } : {}),
    },
    ...(o.spec === undefined ? {} : { spec: o.spec }),
  };
}

/** Paths of `want` that `got` lacks or holds differently. */
function missing(got: unknown, want: unknown, path: string): string[] {
  if (Array.isArray(want)) {
    if (!Array.isArray(got) || got.length !== want.length) return [`${path}: ${JSON.stringify(got)}`];
    return want.flatMap((w, i) => missing(got[i], w, `${path}[${i}]`));
  }
  if (want && typeof want === "object") {
    if (!got || typeof got !== "object") return [`${path}: ${JSON.stringify(got)}`];
    return Object.entries(want).flatMap(([k, w]) =>
      missing((got as Record<string, unknown>)[k], w, `${path}.${k}`)
    );
  }
  return got === want ? [] : [`${path}: ${JSON.stringify(got)} instead of ${JSON.stringify(want)}`];
}

/** Creates the parent, writes the fixture's status through the status subresource, returns what was stored. */
async function roundTrip(parent: Obj, status: Record<string, unknown>): Promise<Obj> {
  const collection = pathOf(parent).replace(/\/[^/]+$/, "");
  await api("DELETE", pathOf(parent));
  const created = await api("POST", collection, asCreated(parent));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const written = await api("PUT", `${pathOf(parent)}/status`, { ...created.body, status });
  assert.equal(written.status, 200, JSON.stringify(written.body));
  return (await api("GET", pathOf(parent))).body as Obj;
}

const cases = discoverGoldenCases(`${ROOT}/tests/fixtures`)
  .filter((c) => c.hook !== "customize" && c.hook !== "admission" && !/\/stored-before-rule-/.test(c.dir));

Deno.test("every fixture status survives a status subresource write", async (t) => {
  await installManifests();
  const reqs = cases.map((c) => JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`)));
  const namespaces = new Set(reqs.map((r) => (r.parent ?? r.object).metadata.namespace).filter(Boolean));
  await ensureNamespaces([...namespaces]);
  let checked = 0;
  for (const [i, c] of cases.entries()) {
    const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
    if (!res.status) continue;
    const parent = (reqs[i].parent ?? reqs[i].object) as Obj;
    await t.step(c.dir.replace(`${ROOT}/tests/fixtures/`, ""), async () => {
      const stored = await roundTrip(parent, res.status);
      assert.deepEqual(missing(stored.status, res.status, "status"), []);
      await api("DELETE", pathOf(parent));
    });
    checked++;
  }
  assert.ok(checked >= 60, `${checked} statuses checked`);
});

/** One fixture per kind, with the columns `kubectl get` must print and values read from its status. */
const COLUMNS: { fixture: string; header: string[]; row: RegExp }[] = [
  {
    fixture: "networkpool/sync/lab-pool-first-grants",
    header: ["NAME", "CIDR", "TOTAL", "ALLOCATED", "AVAILABLE", "GRANTS", "FRAGMENTATION", "READY", "AGE"],
    row: /^lab-pool\s+10\.40\.0\.0\/21\s+1791\s+\d+\s+\d+\s+3\s+\d+\s+True\s+\S+$/,
  },
  {
    fixture: "ipallocation/sync/allocated",
    header: ["NAME", "POOL", "TYPE", "COUNT", "PHASE", "RANGE", "AGE"],
    row: /^\S+\s+\S+\s+(loadbalancer|nodes)\s+\d+\s+Allocated\s+\S+\s+\S+$/,
  },
  {
    fixture: "providerconfig/sync/harvester-prod",
    header: ["NAME", "PROVIDER", "SCOPE", "READY", "VALIDATED", "AGE"],
    row: /^harvester-prod\s+harvester\s+platform\s+(true|false)\s+true\s+\S+$/,
  },
  {
    fixture: "team/sync/platform-team-ready",
    header: ["NAME", "DISPLAY NAME", "PHASE", "NAMESPACE", "CLUSTERS", "QUOTA", "AGE"],
    row: /^platform-team\s+Platform Engineering\s+Ready\s+team-platform-team\s+\d+\s+\S+\s+\S+$/,
  },
  {
    fixture: "tenantcluster/sync/static-allocated-ready",
    header: ["NAME", "VERSION", "WORKERS", "PROVIDER", "ENVIRONMENT", "PHASE", "LB IPS", "AGE"],
    row: /^web\s+v1\.31\.0\s+3\s+harvester-prod\s+Ready\s+\["10\.40\.1\.0-10\.40\.1\.7"\]\s+\S+$/,
  },
];

Deno.test("kubectl get prints each kind's columns with values from status", async (t) => {
  await installManifests();
  for (const { fixture, header, row } of COLUMNS) {
    await t.step(fixture, async () => {
      const req = JSON.parse(Deno.readTextFileSync(`${ROOT}/tests/fixtures/${fixture}/request.json`));
      const res = JSON.parse(Deno.readTextFileSync(`${ROOT}/tests/fixtures/${fixture}/response.json`));
      const parent = (req.parent ?? req.object) as Obj;
      await ensureNamespaces(parent.metadata.namespace ? [parent.metadata.namespace] : []);
      await roundTrip(parent, res.status);
      const ns = parent.metadata.namespace ? ["-n", parent.metadata.namespace] : [];
      const [head, line] = (await kubectlOk(["get", PLURAL[parent.kind]!, parent.metadata.name, ...ns]))
        .trimEnd().split("\n");
      assert.deepEqual(head!.trim().split(/\s{2,}/), header);
      assert.match(line!, row);
      await api("DELETE", pathOf(parent));
    });
  }
});
