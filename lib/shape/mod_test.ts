import assert from "node:assert/strict";
import { type ClusterDefaults, recordedShape, resolveShape } from "./mod.ts";

/** The seed's `payments` team (team-environments.txt, "Worked example"). */
const PAYMENTS_TEAM: ClusterDefaults = {
  kubernetesVersion: "v1.31.0",
  workerCount: 2,
  workerCPU: 2,
  workerMemoryGi: 4,
};
const DEV: ClusterDefaults = { workerMemoryGi: 2 };
const PROD: ClusterDefaults = { workerCount: 3, workerCPU: 4, workerMemoryGi: 8 };
const summary = (r: ReturnType<typeof resolveShape>) =>
  Object.fromEntries(Object.entries(r.shape).map(([k, v]) => [k, [v.value, v.source]]));

Deno.test("the seed's payments team: effective cluster defaults in dev", () => {
  const r = resolveShape({ cluster: {}, team: PAYMENTS_TEAM, environment: DEV });
  assert.deepEqual(summary(r), {
    kubernetesVersion: ["v1.31.0", "team"],
    workerCount: [2, "team"],
    workerCPU: ["2", "team"],
    workerMemory: ["2Gi", "environment"],
    workerDisk: ["100Gi", "default"],
    addons: [[], "default"],
  });
});

Deno.test("the seed's payments team: effective cluster defaults in prod", () => {
  const r = resolveShape({ cluster: {}, team: PAYMENTS_TEAM, environment: PROD });
  assert.deepEqual(summary(r), {
    kubernetesVersion: ["v1.31.0", "team"],
    workerCount: [3, "environment"],
    workerCPU: ["4", "environment"],
    workerMemory: ["8Gi", "environment"],
    workerDisk: ["100Gi", "default"],
    addons: [[], "default"],
  });
  assert.equal(r.totals?.nodes, 3);
});

Deno.test("explicit values win; the platform's per-node defaults cap a team admin's", () => {
  const r = resolveShape({
    cluster: {
      kubernetesVersion: "v1.30.4",
      workers: { replicas: 5, machineTemplate: { memory: "32Gi" } },
      addons: [{ name: "cilium" }],
    },
    team: { workerCPU: "8", defaultAddons: ["metallb"] },
    limits: { defaultNodeCount: 4, defaultCPUPerNode: "2", defaultMemoryPerNode: "8Gi" },
  });
  assert.deepEqual(summary(r), {
    kubernetesVersion: ["v1.30.4", "explicit"],
    workerCount: [5, "explicit"],
    workerCPU: ["2", "platform"],
    workerMemory: ["32Gi", "explicit"],
    workerDisk: ["100Gi", "default"],
    addons: [["cilium"], "explicit"],
  });
  // Below the platform's, a team admin's default stands; node counts are not capped (maxNodesPerCluster is).
  const smaller = resolveShape({
    cluster: {},
    environment: { workerCPU: "1", workerMemoryGi: 4, workerCount: 6 },
    limits: { defaultNodeCount: 4, defaultCPUPerNode: "2", defaultMemoryPerNode: "8Gi" },
  });
  assert.deepEqual(summary(smaller).workerCPU, ["1", "environment"]);
  assert.deepEqual(summary(smaller).workerMemory, ["4Gi", "environment"]);
  assert.deepEqual(summary(smaller).workerCount, [6, "environment"]);
  const limitsOnly = resolveShape({
    cluster: {},
    limits: { defaultNodeCount: 4, defaultCPUPerNode: "2", defaultMemoryPerNode: "8Gi" },
  });
  assert.deepEqual(summary(limitsOnly).workerCount, [4, "platform"]);
  assert.deepEqual(summary(limitsOnly).workerCPU, ["2", "platform"]);
  assert.deepEqual(summary(limitsOnly).workerMemory, ["8Gi", "platform"]);
});

Deno.test("a recorded shape holds: later default changes do not follow, explicit fields still win", () => {
  const first = resolveShape({ cluster: {}, team: PAYMENTS_TEAM, environment: DEV });
  const raised = { ...PAYMENTS_TEAM, kubernetesVersion: "v1.32.0", workerCount: 9, workerCPU: 16 };
  const recorded = recordedShape({ effective: JSON.parse(JSON.stringify(first.shape)) });
  const later = resolveShape({ cluster: {}, team: raised, environment: DEV, recorded });
  assert.deepEqual(summary(later), summary(first));
  const edited = resolveShape({
    cluster: { workers: { replicas: 1 } },
    team: raised,
    environment: DEV,
    recorded,
  });
  assert.deepEqual(summary(edited).workerCount, [1, "explicit"]);
  // A field recorded as explicit and no longer set resolves anew, from today's defaults.
  const dropped = resolveShape({
    cluster: {},
    team: raised,
    environment: DEV,
    recorded: recordedShape({ effective: edited.shape }),
  });
  assert.deepEqual(summary(dropped).workerCount, [9, "team"]);
  // A status that does not read is no memory at all.
  assert.equal(recordedShape({ effective: "garbage" }), undefined);
  assert.equal(recordedShape({ effective: { workerCount: { value: "3" } } })?.workerCount, undefined);
});

Deno.test("built-in defaults, version normalisation, totals and bad quantities", () => {
  const r = resolveShape({ cluster: {}, team: { kubernetesVersion: "1.30.4" } });
  assert.deepEqual(summary(r).kubernetesVersion, ["v1.30.4", "team"]);
  assert.deepEqual([r.shape.workerCount.value, r.shape.workerCPU.value, r.shape.workerMemory.value], [
    3,
    "4",
    "16Gi",
  ]);
  assert.equal(resolveShape({ cluster: {} }).shape.kubernetesVersion, undefined);
  const bad = resolveShape({ cluster: { workers: { machineTemplate: { cpu: "lots" } } } });
  assert.equal(bad.totals, undefined);
  assert.deepEqual(bad.problems, ['workerCPU (explicit): invalid quantity "lots"']);
});
