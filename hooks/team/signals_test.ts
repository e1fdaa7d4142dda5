import assert from "node:assert/strict";
import type { CompositeRequest } from "../../lib/contract/mod.ts";
import { teamSignals } from "./signals.ts";

const request = { parent: { metadata: { name: "payments" } } } as unknown as CompositeRequest;

Deno.test("Team signals: utilisation per limited resource and per limited environment", () => {
  const signals = teamSignals(request, {
    children: [],
    status: {
      resourceUsage: { clusters: 4, clusterUtilization: 20, cpuUtilization: 100 },
      quotaStatus: "Warning",
      environments: [
        { name: "dev", clusters: 2, owners: [] },
        { name: "prod", clusters: 2, clusterUtilization: 33, owners: [] },
      ],
    },
  });
  assert.deepEqual(signals, [{
    signal: "team",
    name: "payments",
    utilization: { clusters: 20, cpu: 100 },
    environments: { prod: 33 },
    quotaStatus: "Warning",
  }]);
  assert.deepEqual(teamSignals(request, { status: null, children: [], finalized: true }), [
    { signal: "team", name: "payments", gone: true },
  ]);
});
