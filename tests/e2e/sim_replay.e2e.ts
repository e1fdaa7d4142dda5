/**
 * The simulator checked against the real engine: the scenario of tests/sim/scenario.ts written to the real API
 * server, one write at a time, with the real Metacontroller and the hook service as shipped. After every write the
 * cluster must reach exactly the state the simulator reached after the same write (Teams and TenantClusters with their
 * phases, the addresses each cluster holds, IPAllocations and their sizes, the pool's counts, the team namespaces),
 * and every write the simulator's admission refused the API server refuses in the same words (docs/simulation.md).
 * Which of one sync's allocations the pool grants first depends on the order Metacontroller creates them in (it
 * walks Go maps: the order varies from run to run), so each cluster's addresses are compared as a whole.
 */
import assert from "node:assert/strict";
import { kubectl } from "../api/cluster.ts";
import { type Action, SCENARIO, snapshot } from "../sim/scenario.ts";
import { replayScenario } from "../sim/simulate.ts";
import { eventually } from "./wait.ts";

const RESOURCES = "teams,tenantclusters,ipallocations,networkpools,namespaces";
const PLURAL: Record<string, string> = {
  Team: "teams",
  TenantCluster: "tenantclusters",
  IPAllocation: "ipallocations",
  NetworkPool: "networkpools",
  ProviderConfig: "providerconfigs",
  Secret: "secrets",
};

async function live(): Promise<string[]> {
  const r = await kubectl(["get", RESOURCES, "-A", "-o", "json"]);
  if (r.code !== 0) throw new Error(r.stderr);
  return snapshot(JSON.parse(r.stdout).items);
}

async function write(action: Action): Promise<{ code: number; stderr: string }> {
  if ("apply" in action) {
    return await kubectl(["apply", "--server-side", "--force-conflicts", "-f", "-"], {
      stdin: JSON.stringify(action.apply),
    });
  }
  const { kind, namespace, name } = action.delete;
  return await kubectl([
    "delete",
    PLURAL[kind]!,
    name,
    ...(namespace ? ["-n", namespace] : []),
    "--wait=false",
  ]);
}

const describe = (a: Action) =>
  "apply" in a
    ? `apply ${a.apply.kind} ${
      a.apply.metadata.namespace ? `${a.apply.metadata.namespace}/` : ""
    }${a.apply.metadata.name}`
    : `delete ${a.delete.kind} ${a.delete.namespace ? `${a.delete.namespace}/` : ""}${a.delete.name}`;

Deno.test("the simulator's scenario, replayed under real Metacontroller, ends every step in the same state", async (t) => {
  const sim = await replayScenario(SCENARIO);
  try {
    for (const [i, action] of SCENARIO.entries()) {
      // A step that fails leaves the next ones nothing to compare: stop there.
      const passed = await t.step(`${i + 1}. ${describe(action)}`, async () => {
        const r = await write(action);
        const refusal = sim.refusals[i];
        if (refusal) {
          assert.notEqual(r.code, 0, `the simulator refused it (${refusal}); the API server admitted it`);
          assert.ok(
            r.stderr.includes(refusal),
            `the API server said ${r.stderr.trim()}; the simulator ${refusal}`,
          );
        } else assert.equal(r.code, 0, `the simulator admitted it; the API server said ${r.stderr.trim()}`);
        const expected = snapshot(sim.after[i]!);
        let seen: string[] = [];
        await eventually(
          `the simulator's state after step ${i + 1}`,
          async () => {
            seen = await live();
            return JSON.stringify(seen) === JSON.stringify(expected) ? true : undefined;
          },
          120,
          1000,
        ).catch((e) => {
          throw new Error(
            `${e.message}\n  simulator:\n    ${expected.join("\n    ")}\n  cluster:\n    ${
              seen.join("\n    ")
            }`,
          );
        });
      });
      if (!passed) break;
    }
  } finally {
    for (const a of [...SCENARIO].reverse()) {
      if (!("apply" in a) || a.refused) continue;
      const o = a.apply;
      await kubectl([
        "delete",
        PLURAL[o.kind]!,
        o.metadata.name,
        ...(o.metadata.namespace ? ["-n", o.metadata.namespace] : []),
        "--ignore-not-found",
        "--wait=false",
      ]);
    }
  }
});
