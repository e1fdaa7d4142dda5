/**
 * Butler as a platform team runs it with Argo CD (issue #49): the Applications of `manifests/argocd/applications.yaml`
 * pointed at a local git repository, the production overlay synced in its waves with every resource Healthy, the
 * platform objects Healthy once the hooks converge, an invalid one Degraded with our message, a refused one a sync
 * failure in admission's words, a TenantCluster removed from git pruned with its addresses released; and our
 * health checks judged by Argo CD's own Lua test harness. Started by `run.ts`.
 */
import assert from "node:assert/strict";
import { parse, parseAllDocuments } from "yaml";
import { cluster, getObject, kubectl, kubectlOk, ROOT } from "../api/cluster.ts";
import { runCommand } from "../../lib/testing/mod.ts";
import { eventually } from "../e2e/wait.ts";
import { GitRepo, installKustomization, makeRepo } from "./repo.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const WAVE = "argocd.argoproj.io/sync-wave";

/** The Applications a user applies: ours, pointed at `repo` (install/ and platform/), platform objects pruned. */
function applications(repo: GitRepo): Obj[] {
  const apps = parseAllDocuments(Deno.readTextFileSync(`${ROOT}/manifests/argocd/applications.yaml`))
    .map((d) => d.toJS() as Obj);
  for (const app of apps) {
    app.spec.source.repoURL = repo.url;
    app.spec.source.targetRevision = "main";
    app.spec.source.path = app.metadata.name === "butler" ? "install" : "platform";
    if (app.metadata.name !== "butler") app.spec.syncPolicy.automated.prune = true;
  }
  return apps;
}

async function application(name: string): Promise<Obj> {
  return JSON.parse(await kubectlOk(["get", "applications.argoproj.io", name, "-n", "argocd", "-o", "json"]));
}

/** Tells Argo CD the repository changed, as a git webhook to its API server would (it polls every 3 minutes). */
async function refresh(name: string): Promise<void> {
  await kubectlOk([
    "annotate",
    "applications.argoproj.io",
    name,
    "-n",
    "argocd",
    "--overwrite",
    "argocd.argoproj.io/refresh=normal",
  ]);
}

/** The Application once it has synced `revision` and settled: its operation finished and its health assessed. */
function settled(name: string, revision: string, health: string, seconds = 240): Promise<Obj> {
  return eventually(`Application ${name} synced ${revision.slice(0, 7)} and ${health}`, async () => {
    const app = await application(name);
    const op = app.status?.operationState;
    return app.status?.sync?.status === "Synced" && app.status?.sync?.revision === revision &&
        op?.phase === "Succeeded" && op?.syncResult?.revision === revision &&
        app.status?.health?.status === health
      ? app
      : undefined;
  }, seconds);
}

function resource(app: Obj, kind: string, name: string): Obj | undefined {
  return (app.status?.resources ?? []).find((r: Obj) => r.kind === kind && r.name === name);
}

const ca = () => btoa(Deno.readTextFileSync(`${cluster().dir}/ca.crt`));
const platformFile = (name: string) => `platform/${name}`;

let repo: GitRepo;

Deno.test("the production overlay synced by Argo CD: waves in order, every resource Healthy", async (t) => {
  const install = await installKustomization(
    Deno.env.get("BUTLER_HOOKS_URL")!,
    Deno.env.get("BUTLER_WEBHOOKS_URL")!,
    ca(),
  );
  repo = await makeRepo(`${cluster().dir}/gitops`, install);
  const revision = await repo.git("rev-parse", "HEAD");
  const started = new Date();
  for (const app of applications(repo)) {
    await kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(app) });
  }
  const app = await settled("butler", revision, "Healthy", 300);

  await t.step(
    "every resource Argo CD assesses is Healthy (CRDs and Service as stored; workloads and certificates as the stand-in writes them)",
    () => {
      const assessed = (app.status.resources as Obj[]).filter((r) => r.health);
      const unhealthy = assessed.filter((r) => r.health.status !== "Healthy");
      assert.deepEqual(unhealthy, []);
      const kinds = new Set(assessed.map((r) => r.kind));
      for (const kind of ["Deployment", "PodDisruptionBudget", "Certificate", "Issuer", "Service"]) {
        assert.ok(kinds.has(kind), `Argo CD assessed no ${kind}: ${[...kinds]}`);
      }
      console.log(
        `butler: ${app.status.resources.length} resources, ${assessed.length} with a health: ` +
          assessed.map((r) => `${r.kind}/${r.name}`).join(", "),
      );
    },
  );

  await t.step("the waves ran in order: each wave's objects created after the previous wave's", async () => {
    const rendered = parseAllDocuments(await kubectlOk(["kustomize", `${repo.dir}/install`]))
      .map((d) => d.toJS() as Obj).filter(Boolean);
    const created: { wave: number; at: number; name: string }[] = [];
    for (const o of rendered) {
      const ns = o.metadata.namespace ? ["-n", o.metadata.namespace] : [];
      const live = await kubectl([
        "get",
        `${o.kind}.${o.apiVersion.split("/")[0]}`,
        o.metadata.name,
        ...ns,
        "-o",
        "json",
      ]);
      const got = live.code === 0
        ? JSON.parse(live.stdout)
        : await getObject(o.kind, o.metadata.name, o.metadata.namespace);
      assert.ok(got, `${o.kind}/${o.metadata.name} is not in the cluster`);
      const at = Date.parse(got.metadata.creationTimestamp);
      // Made before the sync (the namespace, ServiceAccount and Secrets the test control plane needed first).
      if (at < started.getTime() - 1000) continue;
      created.push({
        wave: Number(o.metadata.annotations?.[WAVE] ?? 0),
        at,
        name: `${o.kind}/${o.metadata.name}`,
      });
    }
    const waves = [...new Set(created.map((c) => c.wave))].sort((a, b) => a - b);
    assert.ok(waves.length >= 3, `waves ${waves}`);
    for (let i = 1; i < waves.length; i++) {
      const before = created.filter((c) => c.wave === waves[i - 1]);
      const after = created.filter((c) => c.wave === waves[i]);
      const last = Math.max(...before.map((c) => c.at));
      const first = Math.min(...after.map((c) => c.at));
      assert.ok(last <= first, `wave ${waves[i - 1]} ended after wave ${waves[i]} began`);
    }
    console.log(
      "waves: " +
        waves.map((w) => `${w}: ${created.filter((c) => c.wave === w).map((c) => c.name).join(" ")}`)
          .join(" | "),
    );
  });
});

Deno.test("the platform objects: Healthy once the hooks converge; invalid Degraded; refused a sync failure; pruned", async (t) => {
  const commit = async (message: string, files: Record<string, string | null>) => {
    for (const [path, text] of Object.entries(files)) {
      const to = `${repo.dir}/${platformFile(path)}`;
      if (text === null) await Deno.remove(to);
      else await Deno.writeTextFile(to, text);
    }
    const revision = await repo.commit(message);
    await refresh("butler-platform-objects");
    return revision;
  };
  const example = (path: string) => Deno.readTextFileSync(`${ROOT}/examples/${path}`);

  await t.step(
    "a Team, a pool, its provider and a TenantCluster: Synced and Healthy, the cluster Ready",
    async () => {
      const revision = await commit("platform objects", {
        "harvester-kubeconfig.yaml": example("ipam/single-pool/harvester-kubeconfig.yaml"),
        "harvester-lab.yaml": example("ipam/single-pool/harvester-lab.yaml"),
        "lab-pool.yaml": example("ipam/single-pool/lab-pool.yaml"),
        "platform-team.yaml": example("teams/platform.yaml"),
        "payments-team.yaml": example("teams/payments.yaml"),
        "prod-cluster.yaml": example("tenantclusters/prod-cluster.yaml"),
      });
      const app = await settled("butler-platform-objects", revision, "Healthy", 300);
      const tc = resource(app, "TenantCluster", "prod-cluster");
      assert.equal(tc?.health?.status, "Healthy", JSON.stringify(tc));
      const live = await getObject("tenantcluster", "prod-cluster", "team-platform") as Obj;
      assert.equal(live.status.phase, "Ready");
      console.log(
        "platform objects: " +
          (app.status.resources as Obj[]).map((r) => `${r.kind}/${r.name} ${r.health?.status ?? "-"}`)
            .join(", "),
      );
    },
  );

  await t.step("a ProviderConfig whose credentials are missing: Degraded, with our message", async () => {
    const revision = await commit("a provider without its credentials", {
      "aws-us-east.yaml": example("providerconfigs/aws-us-east.yaml"),
    });
    const app = await settled("butler-platform-objects", revision, "Degraded");
    const pc = resource(app, "ProviderConfig", "aws-us-east");
    const live = await getObject("providerconfig", "aws-us-east", "butler-system") as Obj;
    const ready = live.status.conditions.find((c: Obj) => c.type === "Ready");
    assert.equal(pc?.health?.status, "Degraded");
    assert.equal(pc?.health?.message, ready.message);
    console.log(`aws-us-east: ${pc.health.status}: ${pc.health.message}`);
  });

  await t.step("a TenantCluster admission refuses: the sync fails in admission's words", async () => {
    const file = example("invalid/tenantcluster-provider-of-another-team.yaml");
    const expected = /^# expect: (.*)$/m.exec(file)![1]!;
    const revision = await commit("a cluster on another team's provider", { "refused.yaml": file });
    // Failed, or Running while the automated sync retries it with backoff: the failed attempt is in the message.
    const app = await eventually("the sync failed", async () => {
      const a = await application("butler-platform-objects");
      const op = a.status?.operationState;
      const failed = ["Failed", "Error"].includes(op?.phase) ||
        /^one or more synchronization tasks completed unsuccessfully/.test(op?.message ?? "");
      return op?.operation?.sync?.revision === revision && failed ? a : undefined;
    }, 180);
    const op = app.status.operationState;
    const words = [op.message, ...(op.syncResult?.resources ?? []).map((r: Obj) => r.message)].join("\n");
    assert.ok(words.includes(expected), words);
    console.log(`refused: ${op.phase}: ${op.message}`);
  });

  await t.step("removed from git: the TenantCluster pruned, its addresses released", async () => {
    // The failed sync is still retried (Argo CD's automated sync: 5 retries over about 3 minutes) and holds the
    // next revision back: stopped as `argocd app terminate-op` stops it.
    await kubectlOk([
      "patch",
      "applications.argoproj.io",
      "butler-platform-objects",
      "-n",
      "argocd",
      "--type=merge",
      "-p",
      JSON.stringify({ status: { operationState: { phase: "Terminating" } } }),
    ]);
    const revision = await commit("prod-cluster retired", {
      "refused.yaml": null,
      "aws-us-east.yaml": null,
      "prod-cluster.yaml": null,
    });
    await settled("butler-platform-objects", revision, "Healthy");
    await eventually("prod-cluster gone", async () => {
      const r = await kubectl(["get", "tenantcluster", "prod-cluster", "-n", "team-platform"]);
      return r.code !== 0 && /NotFound/.test(r.stderr) ? true : undefined;
    }, 120);
    const pool = await eventually("lab-pool with no grant", async () => {
      const o = await getObject("networkpool", "lab-pool", "butler-system") as Obj | undefined;
      return o?.status?.allocationCount === 0 ? o : undefined;
    }, 120);
    assert.equal(pool.status.allocatedIPs, 0);
    const left = JSON.parse(await kubectlOk(["get", "ipallocations", "-A", "-o", "json"])).items;
    assert.deepEqual(left.map((o: Obj) => o.metadata.name), []);
  });
});

Deno.test("the Helm chart synced by Argo CD: the production overlay's objects, every resource Healthy", async () => {
  // The Application of Butler now takes the chart (a Helm source) with the values of the production overlay: the
  // objects are the overlay's, so Argo CD updates them in place (the hook URLs go back to the Service's, which
  // nothing after this test needs). The production overlay has no monitoring (examples/kustomize/production-monitoring
  // adds it), so neither do these values.
  const values = {
    reporter: { enabled: true },
    networkPolicy: { enabled: true, apiServerCIDR: "10.0.0.0/24", egressCIDR: "10.0.0.0/24" },
  };
  const revision = await repo.git("rev-parse", "HEAD");
  await kubectlOk([
    "patch",
    "applications.argoproj.io",
    "butler",
    "-n",
    "argocd",
    "--type=merge",
    "-p",
    JSON.stringify({
      spec: { source: { path: "charts/butler", helm: { releaseName: "butler", valuesObject: values } } },
    }),
  ]);
  await refresh("butler");
  const app = await eventually("Application butler synced from the chart", async () => {
    const a = await application("butler");
    return a.status?.sourceType === "Helm" && a.status?.sync?.status === "Synced" &&
        a.status?.operationState?.phase === "Succeeded" && a.status?.health?.status === "Healthy" &&
        a.status?.sync?.revision === revision
      ? a
      : undefined;
  }, 300);
  const overlay = parseAllDocuments(await kubectlOk(["kustomize", "examples/kustomize/production"]))
    .map((d) => d.toJS() as Obj).filter(Boolean).map((o) => `${o.kind}/${o.metadata.name}`).sort();
  const synced = (app.status.resources as Obj[]).map((r) => `${r.kind}/${r.name}`).sort();
  assert.deepEqual(synced, overlay, "the chart's objects are the production overlay's");
  const unhealthy = (app.status.resources as Obj[]).filter((r) => r.health && r.health.status !== "Healthy");
  assert.deepEqual(unhealthy, []);
  console.log(`chart: ${synced.length} resources synced from charts/butler, Healthy`);
});

Deno.test("Argo CD's own Lua test harness judges our health checks", async () => {
  const src = Deno.env.get("ARGOCD_SRC")!;
  const ours = `${src}/resource_customizations/butler.butlerlabs.dev`;
  const harness = `${src}/util/lua/butler_health_test.go`;
  await Deno.remove(ours, { recursive: true }).catch(() => {});
  await runCommand("cp", [
    "-r",
    `${ROOT}/manifests/argocd/resource_customizations/butler.butlerlabs.dev`,
    ours,
  ]);
  await Deno.copyFile(`${ROOT}/tests/gitops/butler_health_test.go`, harness);
  try {
    const run = await runCommand("go", [
      "test",
      "./util/lua",
      "-count=1",
      "-v",
      "-run",
      "TestLuaHealthScript/butler.butlerlabs.dev|TestButlerHealthAsConfigured",
    ], { cwd: src, env: { BUTLER_ROOT: ROOT } });
    const passed = run.stdout.split("\n").filter((l) =>
      /--- PASS: Test\w+\/.*butler/.test(l) || /--- PASS: \w+\/\w+\//.test(l)
    );
    console.log(passed.join("\n"));
    assert.equal(run.code, 0, run.stdout.slice(-4000) + run.stderr.slice(-2000));
    const cases = parse(
      Deno.readTextFileSync(
        `${ROOT}/manifests/argocd/resource_customizations/butler.butlerlabs.dev/TenantCluster/health_test.yaml`,
      ),
    ).tests.length;
    assert.ok(
      passed.filter((l) => l.includes("TestLuaHealthScript")).length >= cases,
      run.stdout.slice(-4000),
    );
    assert.ok(run.stdout.includes("--- PASS: TestButlerHealthAsConfigured"), run.stdout.slice(-4000));
  } finally {
    await Deno.remove(ours, { recursive: true }).catch(() => {});
    await Deno.remove(harness).catch(() => {});
  }
});
