/**
 * The stored adversary (issue #55, part a): a team stores, on the real API server, objects at the bounds of every
 * field its roles may write, in the costliest JSON shapes (`generate.ts`, read from the CRDs and RBAC), while the
 * shipped hook service (its admission cache watching) and the shipped reporter run as the kubelet runs them
 * (restarted after an exit), and a benign team's syncs and reviews go on. Then both are restarted with everything
 * stored, as after a rollout. Measured against a quiet phase of the same run: process exits and out-of-memory
 * ends, `/readyz` against what the reviews got (an answer that the service cannot decide while `/readyz` said ready
 * is a lie), the benign p99 in each phase, and peak resident memory against each Deployment's limit.
 *
 * A benign team's Team is changed in each phase (its cluster limit to 0, and back): the reviews must follow within
 * seconds, or the service decides on what is no longer stored while `/readyz` says ready.
 *
 * By default (CI's slice) the shapes of many small nodes are stored at 96 KiB (the API server takes over a minute
 * to store 1.4 MB of them on a busy machine); `HOSTILE_EXTENT=full` stores every shape at the object's bound.
 */
import assert from "node:assert/strict";
import { desiredChildren, effectiveAccess } from "../../hooks/team/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { api, applyObject, installManifests, kubectl, ROOT } from "../api/cluster.ts";
import { client } from "../api/shipped.ts";
import { b64 } from "../api/tenant.ts";
import {
  againstQuiet,
  benignLoop,
  benignReview,
  benignTeam,
  benignTeamSync,
  type Loop,
  readinessLies,
  readinessProbe,
} from "./benign.ts";
import { benignTenant, serveTenant, tenantKubeconfig } from "./fake_tenant.ts";
import { type Context, type Extent, generatePoints, providerConfigSpec } from "./generate.ts";
import { record } from "./measure.ts";
import {
  installReporterRbac,
  reporterMemoryLimit,
  shippedReporter,
  shippedService,
  supervise,
} from "./processes.ts";
import { type Prunes, type Stored, storePoint } from "./store.ts";
import { hostileTeamSpec, TEAM_USERS, writableTargets } from "./writable.ts";

const TEAM = "hostile";
const NS = `team-${TEAM}`;
const GROUP = "/apis/butler.butlerlabs.dev/v1alpha1";
const QUIET_MS = 12_000;
const SETTLE_MS = 8_000;
const AFTER_RESTART_MS = 12_000;
/** How long the restarted service may take to list everything stored before it is ready (a busy machine). */
const READY_MS = 300_000;
/** The hook Deployment's memory limit (manifests/hooks/deployment.yaml): 768Mi. */
const SERVICE_LIMIT_BYTES = 768 * 1024 * 1024;

/** The hostile team: its Team (as the platform creates it), and its namespace and RBAC as its hook asks for them. */
async function hostileTeam(): Promise<void> {
  const spec = hostileTeamSpec();
  await applyObject({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "Team",
    metadata: { name: TEAM },
    spec,
  });
  const access = effectiveAccess(spec);
  assert.ok(access.ok);
  for (const child of desiredChildren({ name: TEAM, spec }, access.subjects, DEFAULT_HOOK_CONFIG)) {
    if (["Namespace", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"].includes(child.kind)) {
      await applyObject(child);
    }
  }
}

/** A merge patch that puts the hostile Team back as created: no annotations, labels or finalizers, no spec but access. */
function teamReset(spec: Record<string, unknown>): Record<string, unknown> {
  return {
    metadata: { annotations: null, labels: null, finalizers: null },
    spec: { ...Object.fromEntries(Object.keys(spec).map((k) => [k, null])), ...hostileTeamSpec() },
  };
}

/**
 * Changes the benign team's cluster limit to 0 and back, each time until the reviews answer as the stored Team
 * says (a create over the limit refused, then allowed): how long each took (ms), or `Infinity` past `maxMs`.
 */
async function followsChange(reviews: Loop, maxMs = 30_000): Promise<number[]> {
  const lags: number[] = [];
  for (const [maxClusters, allowed] of [[0, false], [20, true]] as const) {
    await api("PATCH", `${GROUP}/teams/payments`, { spec: { resourceLimits: { maxClusters } } }, {
      contentType: "application/merge-patch+json",
    });
    const from = performance.now();
    let lag = Infinity;
    while (performance.now() - from < maxMs && lag === Infinity) {
      await wait(100);
      const answered = reviews.calls.filter((c) => c.at > from && c.status === 200);
      if (answered.some((c) => c.text.includes(`"allowed":${allowed}`))) lag = performance.now() - from;
    }
    lags.push(Math.round(lag));
  }
  return lags;
}

/** The Reporting reason of each inventory in the team's namespace. */
async function inventoryReasons(): Promise<Record<string, string | undefined>> {
  const r = await api("GET", `${GROUP}/namespaces/${NS}/loadbalancerinventories`);
  const items = (r.body as {
    items?: { metadata: { name: string }; status?: { conditions?: { type: string; reason: string }[] } }[];
  })
    .items ?? [];
  return Object.fromEntries(
    items.map((i) => [i.metadata.name, i.status?.conditions?.find((c) => c.type === "Reporting")?.reason]),
  );
}

/** Removes what the points stored (their finalizers first: no controller runs here to remove them). */
async function cleanUp(): Promise<void> {
  for (const kind of ["tenantclusters", "providerconfigs", "secrets"]) {
    const names = (await kubectl(["get", kind, "-n", NS, "-o", "name"])).stdout.split("\n").filter(Boolean);
    for (const n of names.filter((n) => n.includes("finalizers"))) {
      await kubectl(["patch", n, "-n", NS, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
    }
  }
  await kubectl(["patch", "team", TEAM, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
  await kubectl(["delete", "team", TEAM, "--wait=false"]);
  await kubectl(["delete", "namespace", NS, "--wait=false"]);
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `url()/readyz` answers 200, up to `ms`. */
async function untilReady(url: () => string, ms: number): Promise<boolean> {
  const c = client();
  try {
    for (const end = performance.now() + ms; performance.now() < end; await wait(250)) {
      try {
        const res = await fetch(`${url()}/readyz`, { client: c, signal: AbortSignal.timeout(2000) });
        await res.body?.cancel();
        if (res.ok) return true;
      } catch { /* restarting */ }
    }
    return false;
  } finally {
    c.close();
  }
}

Deno.test("a team's stored objects, searched at the bounds of what its roles may write", async (t) => {
  await installManifests();
  await installReporterRbac();
  const reviewFixture = await benignTeam();
  await hostileTeam();
  const tenant = serveTenant(benignTenant);
  const ctx: Context = {
    team: TEAM,
    namespace: NS,
    providerConfig: "hostile-elastic",
    tenantServer: tenant.url,
    tenantCa: Deno.readTextFileSync(`${Deno.env.get("BUTLER_TEST_CLUSTER")}/ca.crt`),
  };
  const asAdmin = { as: { user: TEAM_USERS.admin } };
  // The team's own elastic ProviderConfig, a cluster using it and its kubeconfig: the reporter serves them.
  await applyObject({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: ctx.providerConfig, namespace: NS },
    spec: providerConfigSpec(ctx),
  }, asAdmin);
  await applyObject({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "benign", namespace: NS },
    spec: { providerConfigRef: { name: ctx.providerConfig, namespace: NS } },
  }, asAdmin);
  await applyObject({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "benign-kubeconfig", namespace: NS },
    data: { value: b64(tenantKubeconfig(tenant.url)) },
  }, asAdmin);

  const targets = writableTargets(ROOT, TEAM);
  const extent: Extent = Deno.env.get("HOSTILE_EXTENT") === "full" ? "full" : "slice";
  const points = generatePoints(targets, ctx, extent);
  const teamSchema = targets.find((x) => x.kind === "Team")!.schema.properties!.spec!.properties!;
  const resetTeam = async () => {
    await api("PATCH", `${GROUP}/teams/${TEAM}`, teamReset(teamSchema), {
      contentType: "application/merge-patch+json",
    });
  };
  const service = await supervise(await shippedService());
  const reporter = await supervise(await shippedReporter({ KUBECONFIG_RECHECK_SECONDS: "5" }));

  const teamBody = benignTeamSync();
  const syncs = benignLoop(() => `${service.current.url}/hooks/team/sync`, () => teamBody, "metacontroller");
  const reviews = benignLoop(
    () => `${service.current.webhooks}/webhooks/validate/tenantcluster`,
    benignReview(reviewFixture),
  );
  const probe = readinessProbe(() => service.current.url);
  const loops: Loop[] = [syncs, reviews];

  const quietFrom = performance.now() + 2000;
  await wait(QUIET_MS);
  const storeFrom = performance.now();
  const stored: Stored[] = [];
  const prunes: Prunes = new Map();
  for (const point of points) {
    if (point.family === "kubeconfig") {
      await applyObject({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "TenantCluster",
        metadata: { name: point.id, namespace: NS },
        spec: { providerConfigRef: { name: ctx.providerConfig, namespace: NS } },
      }, asAdmin);
    }
    stored.push(
      await storePoint(point, {
        namespace: NS,
        team: TEAM,
        prunes,
        parallel: 4,
        ...(point.kind === "Team" ? { before: resetTeam } : {}),
      }),
    );
  }
  await wait(SETTLE_MS);
  const lagsStored = await followsChange(reviews);
  const storeTo = performance.now();

  // A rollout with everything stored: both processes start again and list it all. The kubelet sends no traffic to
  // a pod until its /readyz says ready: the benign calls wait for it too.
  await Promise.all(loops.map((l) => l.pause()));
  probe.pause();
  const restarted = performance.now();
  await Promise.all([service.restart(), reporter.restart()]);
  const readyAfterRestart = await untilReady(() => service.current.url, READY_MS);
  const readyAfterRestartSeconds = +((performance.now() - restarted) / 1000).toFixed(1);
  for (const l of loops) l.resume();
  probe.resume();
  const restartFrom = performance.now();
  await wait(AFTER_RESTART_MS);
  const lagsRestarted = await followsChange(reviews);
  const restartTo = performance.now();
  const reasons = await inventoryReasons();

  await Promise.all([syncs.stop(), reviews.stop(), probe.stop()]);
  const [serviceCode, reporterCode] = await Promise.all([service.stop(), reporter.stop()]);
  await tenant.shutdown();

  const quiet: [number, number] = [quietFrom, storeFrom];
  const lies = readinessLies(reviews.calls, probe.samples);
  // A call answered "cannot decide" while /readyz said so too is one the API server would not have sent.
  const truthful = new Set(
    reviews.calls.filter((c) =>
      c.status === 503 && !lies.includes(c) && /CacheNotSynced|CacheBehind/.test(c.text)
    ),
  );
  const failedIn = (l: Loop, from: number, to: number) =>
    l.calls.filter((c) => c.at >= from && c.at < to && c.status !== 200 && !truthful.has(c));
  const phases = {
    storing: { from: storeFrom, to: storeTo },
    afterRestart: { from: restartFrom, to: restartTo },
  };
  const benign = Object.fromEntries(
    Object.entries(phases).map(([name, p]) => [name, {
      teamSync: {
        ...againstQuiet(syncs, quiet, [p.from, p.to]),
        failures: failedIn(syncs, p.from, p.to).length,
      },
      tenantClusterReview: {
        ...againstQuiet(reviews, quiet, [p.from, p.to]),
        failures: failedIn(reviews, p.from, p.to).length,
      },
    }]),
  );
  const ratios = Object.values(benign).flatMap((p) => [p.teamSync.ratio, p.tenantClusterReview.ratio]);
  const result = {
    targets: targets.map((x) => ({
      kind: x.kind,
      writers: x.writers,
      ...(x.names ? { names: x.names } : {}),
    })),
    points: {
      total: points.length,
      objects: stored.reduce((n, s) => n + s.stored, 0),
      megabytes: +(stored.reduce((n, s) => n + s.stored * s.bytes, 0) / 1e6).toFixed(1),
      storeSeconds: +((storeTo - storeFrom) / 1000).toFixed(1),
    },
    service: {
      ...service.exits(),
      exitCodeAtShutdown: serviceCode,
      peakResidentBytes: service.peakResident(),
      residentBytes: {
        storing: service.residentIn(storeFrom, storeTo),
        restart: service.residentIn(storeTo, restartTo),
      },
      podLimitBytes: SERVICE_LIMIT_BYTES,
      readyz: {
        probes: probe.probes,
        notReady: probe.failed.length,
        lies: lies.length,
        // How long after a change of the benign Team the reviews followed it (ms): while stored, after restart.
        followsChangeMs: { storing: lagsStored, afterRestart: lagsRestarted },
        readyAfterRestartSeconds: readyAfterRestart ? readyAfterRestartSeconds : null,
      },
      lies: lies.slice(0, 5).map((c) => c.text),
      tails: service.incarnations.flatMap((i) => i.tail ? [i.tail.slice(-600)] : []).slice(0, 3),
    },
    reporter: {
      ...reporter.exits(),
      exitCodeAtShutdown: reporterCode,
      peakResidentBytes: reporter.peakResident(),
      residentBytes: {
        storing: reporter.residentIn(storeFrom, storeTo),
        restart: reporter.residentIn(storeTo, restartTo),
      },
      podLimitBytes: reporterMemoryLimit(),
      benignTenant: reasons.benign,
      kubeconfigTenants: Object.fromEntries(
        Object.entries(reasons).filter(([k]) => k.startsWith("kubeconfig-")),
      ),
      tails: reporter.incarnations.flatMap((i) => i.tail ? [i.tail.slice(-600)] : []).slice(0, 3),
    },
    benign,
    benignP99Ratio: Math.max(...ratios),
    stored,
  };
  await record("stored", result);
  await cleanUp();

  await t.step("every point was stored, by the team where its roles allow", () => {
    const notStored = stored.filter((s) => s.stored < s.copies);
    assert.deepEqual(notStored.map((s) => `${s.id}: ${s.refused}`), []);
  });
  await t.step("neither process ended, or ran out of memory", () => {
    assert.deepEqual(
      service.exits(),
      { exits: 0, outOfMemory: 0, codes: [] },
      result.service.tails.join("\n---\n"),
    );
    assert.deepEqual(
      reporter.exits(),
      { exits: 0, outOfMemory: 0, codes: [] },
      result.reporter.tails.join("\n---\n"),
    );
    assert.equal(serviceCode, 0);
    assert.equal(reporterCode, 0);
  });
  await t.step("/readyz never said ready while a review got 'cannot decide'", () => {
    assert.deepEqual(lies.map((c) => c.text), []);
  });
  await t.step("the service became ready after the restart, and decided on what is stored", () => {
    assert.ok(readyAfterRestart, `not ready ${readyAfterRestartSeconds} s after the restart`);
    const lags = [...lagsStored, ...lagsRestarted];
    assert.ok(
      lags.every((ms) => ms <= 10_000),
      `reviews followed a change of the benign Team after ${lags} ms`,
    );
  });
  await t.step("no benign call failed while points were stored or after the restart", () => {
    const failed = loops.flatMap((l) => [
      ...failedIn(l, storeFrom, storeTo),
      ...failedIn(l, restartFrom, restartTo),
    ]);
    assert.deepEqual(failed.map((c) => `${c.status} ${c.text.slice(0, 200)}`).slice(0, 10), []);
  });
  await t.step("the benign p99 stayed within 3 times the quiet one", () => {
    assert.ok(result.benignP99Ratio <= 3, JSON.stringify(benign));
  });
  await t.step("resident memory stayed within each Deployment's limit", () => {
    assert.ok(result.service.peakResidentBytes < SERVICE_LIMIT_BYTES, `${result.service.peakResidentBytes}`);
    assert.ok(
      result.reporter.peakResidentBytes < result.reporter.podLimitBytes,
      `${result.reporter.peakResidentBytes}`,
    );
  });
  await t.step("the reporter still serves the benign tenant", () => {
    assert.equal(reasons.benign, "Watching");
  });
});
