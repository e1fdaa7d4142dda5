/**
 * `kubectl butler env migrate` against a real API server with the shipped admission (the policies, and the
 * webhooks as their own ServiceAccount), run as the program users install (`cli/main.ts` with the plugin's
 * permissions) and as impersonated members of the seed's payments team: a team admin moves a cluster (label and
 * annotation together, the annotation removed after), an operator outside the environment is refused in the
 * policy's words, and a bulk migration with one refusal (the per-member cap) moves the other, in a dry run
 * first (which changes nothing) and then for real.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { computeUsage, desiredChildren, effectiveAccess } from "../../hooks/team/mod.ts";
import { type ObservedCluster, TeamSpec } from "../../lib/api/mod.ts";
import { renderUsageText } from "../../cli/team_usage.ts";
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { pluginPermissions } from "../../cli/shim.ts";
import { poolReport, renderPoolSvg, renderPoolText } from "../../cli/pool_show.ts";
import { ledgerReport } from "../../cli/ledger.ts";
import { LAB_ALLOCATIONS, LAB_SPEC, labAllocations, labGrants, labStatus } from "../cli/lab_pool.ts";
import {
  api,
  applyObject,
  cluster,
  ensureNamespaces,
  getObject,
  installManifests,
  kubectl,
  kubectlOk,
  ROOT,
  serveAdmission,
  shippedWebhooks,
  untilRun,
} from "./cluster.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const TEAM = "cli-payments";
const NS = `team-${TEAM}`;
const ENV = "butler.butlerlabs.dev/environment";
const MIGRATION = "butler.butlerlabs.dev/migration-operation";

/**
 * The plugin as installed (the launcher's permissions, cli/shim.ts), with the test cluster's kubeconfig; a last
 * options object runs it from `cwd`, or (`offline`) without a kubeconfig flag (plan takes only its own).
 */
async function butler(
  ...args: (string | { cwd?: string; offline?: boolean })[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const last = args.at(-1);
  const options = typeof last === "object" ? last : {};
  const words = args.filter((a): a is string => typeof a === "string");
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...pluginPermissions(Deno.env.get("TMPDIR") ?? "/tmp"),
      `${ROOT}/cli/main.ts`,
      ...words,
      ...(options.offline ? [] : [`--kubeconfig=${cluster().kubeconfig}`]),
    ],
    cwd: options.cwd ?? ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

const tenantCluster = (name: string, creator: string, env?: string) => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: {
    name,
    namespace: NS,
    ...(env ? { labels: { [ENV]: env } } : {}),
    annotations: { "butler.butlerlabs.dev/creator-email": creator },
  },
  spec: {
    kubernetesVersion: "v1.31.0",
    providerConfigRef: { name: "cli-harvester" },
    workers: { replicas: 1, machineTemplate: { cpu: "2", memory: "4Gi", diskSize: "20Gi" } },
  },
});

/** carol creates a cluster on cli-harvester in an environment of the team. */
const carolCreates = (name: string, env: string, ...extra: string[]) =>
  butler(
    "cluster",
    "create",
    name,
    "--team",
    TEAM,
    "--environment",
    env,
    "--provider",
    "cli-harvester",
    "--as",
    "carol@example.com",
    ...extra,
  );

/** alice moves the team's clusters without an environment to prod. */
const bulk = (...extra: string[]) =>
  butler(
    "env",
    "migrate",
    "--team",
    TEAM,
    "--unlabelled",
    "--to",
    "prod",
    "--as",
    "alice@example.com",
    ...extra,
  );

const stored = async (name: string) =>
  await getObject("tenantcluster", name, NS) as { metadata: { labels?: Obj; annotations?: Obj } };

Deno.test("kubectl butler env migrate, as the seed's team members", async (t) => {
  await installManifests();
  const server = await serveAdmission();
  try {
    await applyObject({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NS, labels: { "butler.butlerlabs.dev/team": TEAM } },
    });
    await applyObject({
      apiVersion: API,
      kind: "ProviderConfig",
      metadata: { name: "cli-harvester", namespace: "butler-system" },
      spec: {
        provider: "harvester",
        credentialsRef: { name: "harvester-kubeconfig" },
        harvester: { namespace: "default", networkName: "default/vlan40" },
      },
    });
    const team = parse(await Deno.readTextFile(`${ROOT}/examples/teams/payments.yaml`)) as Obj;
    team.metadata.name = TEAM;
    team.spec.access.users.push({ name: "dave@example.com", role: "viewer" });
    team.spec.environments[1].access.users.push({ name: "dave@example.com", role: "operator" });
    await applyObject(team);
    const access = effectiveAccess(team.spec as TeamSpec);
    assert.ok(access.ok);
    for (
      const child of desiredChildren({ name: TEAM, spec: team.spec }, access.subjects, DEFAULT_HOOK_CONFIG)
    ) {
      if (["ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(child.kind)) {
        await applyObject(child);
      }
    }
    // carol's dev cluster, and two without an environment, carol's and bob's: made before the webhooks, as
    // clusters that predate the team's environments are (the webhook requires the label on a new cluster).
    await applyObject(tenantCluster("d1", "carol@example.com", "dev"));
    await applyObject(tenantCluster("u1", "carol@example.com"));
    await applyObject(tenantCluster("u2", "bob@example.com"));
    await applyObject(await shippedWebhooks(`https://127.0.0.1:${server.addr.port}`));

    await t.step("a team admin moves a cluster: label set, migration annotation gone", async () => {
      // A new webhook configuration takes effect within seconds: the first migration waits for it.
      const r = await untilRun(
        () => butler("env", "migrate", "d1", "--to", "prod", "-n", NS, "--as", "alice@example.com"),
        (r) => r.code === 0,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.equal(r.stdout, `${NS}/d1: dev -> prod: moved\nmoved 1 of 1 cluster(s) to prod\n`);
      const c = await stored("d1");
      assert.equal(c.metadata.labels?.[ENV], "prod");
      assert.equal(c.metadata.annotations?.[MIGRATION], undefined);
    });

    await t.step("an operator only in prod may not move a cluster that is not in prod", async () => {
      for (const dry of [["--dry-run"], []]) {
        const r = await butler(
          "env",
          "migrate",
          "u1",
          "--to",
          "prod",
          "-n",
          NS,
          "--as",
          "dave@example.com",
          ...dry,
        );
        assert.equal(r.code, 1, r.stdout + r.stderr);
        assert.match(
          r.stdout,
          new RegExp(
            `^${NS}/u1: \\(no environment\\) -> prod: (would be )?refused: .*user "dave@example\\.com" may not update TenantCluster "u1"`,
          ),
        );
      }
      assert.equal((await stored("u1")).metadata.labels?.[ENV], undefined);
    });

    await t.step("a bulk migration: a dry run says what admission will do and changes nothing", async () => {
      const r = await bulk("--dry-run");
      assert.equal(r.code, 1, r.stdout + r.stderr);
      const lines = r.stdout.split("\n");
      // carol already has d1 in prod, where each member may have 1 cluster; bob has none.
      assert.match(
        lines[0]!,
        new RegExp(`^${NS}/u1: \\(no environment\\) -> prod: would be refused: .*carol@example\\.com`),
      );
      assert.equal(lines[1], `${NS}/u2: (no environment) -> prod: would move`);
      assert.equal(lines[2], "would move 1 of 2 cluster(s) to prod; 1 would be refused");
      for (const name of ["u1", "u2"]) {
        const c = await stored(name);
        assert.equal(c.metadata.labels?.[ENV], undefined, `${name} unchanged`);
        assert.equal(c.metadata.annotations?.[MIGRATION], undefined);
      }
    });

    await t.step(
      "and for real: the refusal does not stop the other; -o json says which and why",
      async () => {
        const r = await bulk("-o", "json");
        assert.equal(r.code, 1, r.stdout + r.stderr);
        const { dryRun, results } = JSON.parse(r.stdout) as { dryRun: boolean; results: Obj[] };
        assert.equal(dryRun, false);
        assert.deepEqual(results.map((x) => [x.name, x.outcome]), [["u1", "refused"], ["u2", "moved"]]);
        assert.match(results[0]!.message, /carol@example\.com/);
        assert.equal((await stored("u2")).metadata.labels?.[ENV], "prod");
        assert.equal((await stored("u2")).metadata.annotations?.[MIGRATION], undefined);
        assert.equal((await stored("u1")).metadata.labels?.[ENV], undefined);
      },
    );

    await t.step(
      "env list, add and remove, as the team admin; an operator may not edit the Team",
      async () => {
        const list = await butler("env", "list", "--team", TEAM, "--as", "alice@example.com");
        assert.equal(list.code, 0, list.stderr);
        assert.match(list.stdout, /^NAME +CLUSTERS +MAX +PER MEMBER +USE +QUOTA +DESCRIPTION\n/);
        assert.match(list.stdout, /\nprod +2 +6 +1 +33% +Warning +Customer-facing payments processing\n/);
        const add = await butler(
          "env",
          "add",
          "staging",
          "--team",
          TEAM,
          "--max-clusters",
          "2",
          "--as",
          "alice@example.com",
        );
        assert.equal(add.code, 0, add.stderr);
        assert.equal(add.stdout, `environment "staging" added to team "${TEAM}"\n`);
        const stored = JSON.parse(await kubectlOk(["get", "team", TEAM, "-o", "json"])) as Obj;
        assert.deepEqual(stored.spec.environments.at(-1), { name: "staging", limits: { maxClusters: 2 } });
        const carol = await butler("env", "add", "qa", "--team", TEAM, "--as", "carol@example.com");
        assert.equal(carol.code, 1);
        assert.match(carol.stderr, /^error: refused: .*carol@example\.com.* cannot update resource "teams"/);
        const inUse = await butler("env", "remove", "prod", "--team", TEAM, "--as", "alice@example.com");
        assert.equal(inUse.code, 1);
        assert.equal(
          inUse.stderr,
          `error: cannot remove environment "prod" from team "${TEAM}": TenantClusters ${NS}/d1, ${NS}/u2 still use it\n`,
        );
        const dry = await butler(
          "env",
          "remove",
          "staging",
          "--team",
          TEAM,
          "--dry-run",
          "--as",
          "alice@example.com",
        );
        assert.equal(dry.stdout, `environment "staging" would be removed from team "${TEAM}"\n`, dry.stderr);
        assert.ok(
          JSON.parse(await kubectlOk(["get", "team", TEAM, "-o", "json"])).spec.environments.some(
            (e: Obj) => e.name === "staging",
          ),
        );
        const removed = await butler("env", "remove", "staging", "--team", TEAM, "--as", "alice@example.com");
        assert.equal(removed.code, 0, removed.stderr);
        assert.ok(
          !JSON.parse(await kubectlOk(["get", "team", TEAM, "-o", "json"])).spec.environments.some(
            (e: Obj) => e.name === "staging",
          ),
        );
      },
    );

    await t.step(
      "cluster create: the caller is its creator, the shape shown first, admission decides",
      async () => {
        const dry = await carolCreates("carol-dev", "dev", "--dry-run");
        assert.equal(dry.code, 0, dry.stderr);
        assert.equal(
          dry.stdout,
          `TenantCluster ${NS}/carol-dev in environment dev, created by carol@example.com:\n` +
            "  kubernetesVersion  v1.31.0                      (team)\n" +
            "  workers            2                            (team)\n" +
            "  cpu per worker     2                            (team)\n" +
            "  memory per worker  2Gi                          (environment)\n" +
            "  disk per worker    100Gi                        (default)\n" +
            "  providerConfig     butler-system/cli-harvester  (explicit)\n" +
            `tenantcluster ${NS}/carol-dev would be created\n`,
        );
        assert.equal(
          (await kubectl(["get", "tenantcluster", "carol-dev", "-n", NS])).code,
          1,
          "a dry run creates nothing",
        );
        const real = await carolCreates("carol-dev", "dev");
        assert.equal(real.code, 0, real.stderr);
        const created = await stored("carol-dev");
        assert.equal(
          created.metadata.annotations?.["butler.butlerlabs.dev/creator-email"],
          "carol@example.com",
        );
        assert.equal(created.metadata.labels?.[ENV], "dev");
        // carol has d1 in prod already, where each member may have one.
        const capped = await carolCreates("carol-prod", "prod");
        assert.equal(capped.code, 1);
        assert.match(
          capped.stdout,
          /^TenantCluster .*carol-prod in environment prod, created by carol@example\.com:\n/,
        );
        assert.match(
          capped.stderr,
          /^error: refused: .*user "carol@example\.com" already owns 1 cluster\(s\) in environment "prod"; env limits to 1 per member\n$/,
        );
      },
    );

    await t.step("team usage: the team's bars, from the clusters as they are now", async () => {
      const r = await butler("team", "usage", TEAM);
      assert.equal(r.code, 0, r.stderr);
      const items = JSON.parse(
        await kubectlOk(["get", "tenantclusters", "-n", NS, "-o", "json"]),
      ).items as ObservedCluster[];
      const pcs = JSON.parse(
        await kubectlOk(["get", "providerconfigs", "-n", "butler-system", "-o", "json"]),
      ).items as { metadata: { name: string }; spec?: { limits?: Obj } }[];
      const expected = computeUsage(
        TeamSpec.parse(team.spec),
        items,
        pcs.map((p) => ({
          key: `butler-system/${p.metadata.name}`,
          maxClustersPerTeam: p.spec?.limits?.maxClustersPerTeam,
          maxNodesPerTeam: p.spec?.limits?.maxNodesPerTeam,
        })),
      );
      assert.equal(r.stdout, renderUsageText(TEAM, expected));
      // bob's u2 and carol's d1 moved to prod, where each member may have 1.
      assert.match(r.stdout, /clusters in environment prod +2 +6 +\[#########\.+\] +33%/);
      assert.match(r.stdout, /clusters of carol@example\.com in environment prod +1 +1 .*100% {2}near limit/);
      const alice = await butler("team", "usage", TEAM, "--as", "alice@example.com");
      assert.equal(alice.code, 0, alice.stderr);
      assert.ok(alice.stdout.startsWith(`Team ${TEAM}  quota `));
    });
  } finally {
    await kubectl(["delete", "validatingwebhookconfiguration", "butler-admission", "--ignore-not-found"]);
    await kubectl(["delete", "tenantclusters", "--all", "-n", NS, "--ignore-not-found", "--wait=false"]);
    await server.shutdown();
  }
});

Deno.test("kubectl butler pool show draws a stored pool exactly as the golden picture", async (t) => {
  await installManifests();
  await ensureNamespaces(["butler-cli", ...new Set(LAB_ALLOCATIONS.map((a) => a.namespace))]);
  const uids: string[] = [];
  for (const a of LAB_ALLOCATIONS) {
    const created = await api(
      "POST",
      `/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${a.namespace}/ipallocations`,
      {
        apiVersion: API,
        kind: "IPAllocation",
        metadata: { name: a.name, labels: { "butler.butlerlabs.dev/tenant": a.tenant } },
        spec: {
          poolRef: { name: "lab-pool", namespace: "butler-cli" },
          type: "loadbalancer",
          ...(a.pinned
            ? { pinnedRange: { startAddress: a.first, endAddress: "10.40.2.15" } }
            : { count: a.count }),
        },
      },
    );
    assert.equal(created.status, 201, JSON.stringify(created.body));
    uids.push((created.body.metadata as { uid: string }).uid);
  }
  // The pool in a namespace of its own (other tests apply the seed's lab-pool in butler-system), with the
  // ledger its controller would have written, through the status subresource.
  const pools = "/apis/butler.butlerlabs.dev/v1alpha1/namespaces/butler-cli/networkpools";
  const pool = await api("POST", pools, {
    apiVersion: API,
    kind: "NetworkPool",
    metadata: { name: "lab-pool" },
    spec: LAB_SPEC,
  });
  assert.equal(pool.status, 201, JSON.stringify(pool.body));
  const written = await api("PUT", `${pools}/lab-pool/status`, {
    ...pool.body,
    status: labStatus(labGrants(uids)),
  });
  assert.equal(written.status, 200, JSON.stringify(written.body).slice(0, 300));
  const expected = poolReport(
    {
      metadata: { name: "lab-pool", namespace: "butler-cli" },
      spec: LAB_SPEC,
      status: labStatus(labGrants(uids)),
    },
    labAllocations(uids),
  );
  assert.ok(expected.ok);

  await t.step(
    "text: the same bytes as the pure renderer (whose output for butler-system is the golden)",
    async () => {
      const r = await butler("pool", "show", "lab-pool", "-n", "butler-cli");
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, renderPoolText(expected.report));
      assert.match(r.stdout, /team-platform\/ingress \(pinned\)/);
    },
  );
  await t.step("-o json for scripts, and --svg FILE written under the current directory", async () => {
    const json = await butler("pool", "show", "lab-pool", "-n", "butler-cli", "-o", "json");
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), JSON.parse(JSON.stringify(expected.report)));
    const dir = await Deno.makeTempDir();
    try {
      const svg = await butler("pool", "show", "lab-pool", "-n", "butler-cli", "--svg", "pool.svg", {
        cwd: dir,
      });
      assert.equal(svg.code, 0, svg.stderr);
      assert.equal(Deno.readTextFileSync(`${dir}/pool.svg`), renderPoolSvg(expected.report));
      const outside = await butler(
        "pool",
        "show",
        "lab-pool",
        "-n",
        "butler-cli",
        "--svg",
        "/var/elsewhere.svg",
        {
          cwd: dir,
        },
      );
      assert.equal(outside.code, 1);
      assert.match(
        outside.stderr,
        /cannot write \/var\/elsewhere\.svg: the plugin writes only under the current directory/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
  await t.step(
    "who may read the pool but not list IPAllocations gets the picture, tenants unnamed, and a warning",
    async () => {
      await kubectlOk(["apply", "--server-side", "--field-manager=butler-tests", "-f", "-"], {
        stdin: `
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: { name: pool-reader, namespace: butler-cli }
rules: [{ apiGroups: [butler.butlerlabs.dev], resources: [networkpools], verbs: [get] }]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: { name: pool-reader, namespace: butler-cli }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: pool-reader }
subjects: [{ apiGroup: rbac.authorization.k8s.io, kind: User, name: viewer@example.com }]
`,
      });
      const r = await untilRun(
        () => butler("pool", "show", "lab-pool", "-n", "butler-cli", "--as", "viewer@example.com"),
        (r) => r.code === 0,
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /^warning: IPAllocations not listed, tenants not shown \(.*forbidden/);
      // Without the IPAllocations, grants are listed by UID and a pinned grant cannot be told from another.
      const unnamed = poolReport(
        {
          metadata: { name: "lab-pool", namespace: "butler-cli" },
          spec: LAB_SPEC,
          status: labStatus(labGrants(uids)),
        },
        [],
      );
      assert.ok(unnamed.ok);
      assert.equal(r.stdout, renderPoolText(unnamed.report));
      assert.equal(r.stdout.split("\n").filter((l) => l.includes(" uid ")).length, 4);
      const nobody = await butler(
        "pool",
        "show",
        "lab-pool",
        "-n",
        "butler-cli",
        "--as",
        "nobody@example.com",
      );
      assert.equal(nobody.code, 1);
      assert.match(nobody.stderr, /networkpools\.butler\.butlerlabs\.dev "lab-pool" is forbidden/);
    },
  );
  await t.step("ledger: the stored pool's ledger, as the pure report prints it", async () => {
    const r = await butler("ledger", "lab-pool", "-n", "butler-cli");
    assert.equal(r.code, 0, r.stderr);
    const storedPool = JSON.parse(
      await kubectlOk(["get", "networkpool", "lab-pool", "-n", "butler-cli", "-o", "json"]),
    );
    assert.equal(r.stdout, ledgerReport([storedPool], "table").out);
    assert.match(r.stdout, /^NetworkPool butler-cli\/lab-pool: 4 grant\(s\)\n/);
  });
  await t.step("plan through the plugin prints what main.ts plan prints", async () => {
    const files = [
      `${ROOT}/examples/teams/payments.yaml`,
      `${ROOT}/examples/tenantclusters/payments-carol-dev-1.yaml`,
    ];
    const args = [...files, "--now", "2026-11-24T00:00:00Z"];
    const viaPlugin = await butler("plan", ...args, { offline: true });
    const direct = await new Deno.Command(Deno.execPath(), {
      // deno task plan's permissions.
      args: [
        "run",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        "--allow-run",
        `${ROOT}/main.ts`,
        "plan",
        ...args,
      ],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(viaPlugin.code, direct.code, viaPlugin.stderr);
    assert.equal(viaPlugin.stdout, new TextDecoder().decode(direct.stdout));
    assert.match(viaPlugin.stdout, /Team payments/);
  });
  await t.step("a pool that does not exist: exit 1, said on stderr", async () => {
    const r = await butler("pool", "show", "no-such-pool", "-n", "butler-cli");
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "error: NetworkPool butler-cli/no-such-pool not found\n");
  });
});

Deno.test("kubectl butler adopt gives a restored Team's children back to it by name, and nothing else", async () => {
  // What a restore leaves: the Team under a new UID, its children labelled with the old one and owned by no one.
  await installManifests();
  await ensureNamespaces([NS]);
  const name = "cli-restored";
  const team = parse(await Deno.readTextFile(`${ROOT}/examples/teams/payments.yaml`)) as Obj;
  team.metadata.name = name;
  await applyObject(team);
  const uid = ((await getObject("team", name)) as Obj).metadata.uid as string;
  const access = effectiveAccess(team.spec as TeamSpec);
  assert.ok(access.ok);
  const children = desiredChildren({ name, spec: team.spec }, access.subjects, DEFAULT_HOOK_CONFIG)
    .filter((c) =>
      ["Namespace", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"].includes(c.kind)
    );
  const stale = (o: Obj) => ({
    ...o,
    metadata: { ...o.metadata, labels: { ...o.metadata.labels, "controller-uid": "uid-before-restore" } },
  });
  for (const child of children) await applyObject(stale(child));
  // Labelled for this Team but outside its namespace: no child of it, left alone.
  const stray = stale({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "stray", namespace: NS, labels: { "butler.butlerlabs.dev/team": name } },
    rules: [],
  });
  await applyObject(stray);
  const labelOf = async (o: Obj) =>
    ((await getObject(o.kind.toLowerCase(), o.metadata.name, o.metadata.namespace)) as Obj).metadata.labels[
      "controller-uid"
    ];

  const dry = await butler("adopt", "--dry-run");
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    new RegExp(`namespace team-${name} would be labelled controller-uid for its Team ${name}`),
  );
  for (const child of children) assert.equal(await labelOf(child), "uid-before-restore");

  const done = await butler("adopt");
  assert.equal(done.code, 0, done.stderr);
  for (const child of children) {
    assert.equal(await labelOf(child), uid, `${child.kind} ${child.metadata.name}`);
  }
  assert.equal(await labelOf(stray), "uid-before-restore");
  assert.equal(done.stdout.split("\n").filter(Boolean).length, children.length, done.stdout);

  const again = await butler("adopt", "-o", "json");
  assert.equal(again.code, 0, again.stderr);
  assert.deepEqual(JSON.parse(again.stdout).adopted, []);
  await kubectl(["delete", "team", name, "--wait=false"]);
  await kubectl(["delete", "namespace", `team-${name}`, "--wait=false"]);
});
