import assert from "node:assert/strict";
import fc from "fast-check";
import { parse } from "yaml";
import { computeUsage } from "../hooks/team/usage.ts";
import { type ObservedCluster, TeamSpec } from "../lib/api/mod.ts";
import { updatingGoldens } from "../lib/testing/mod.ts";
import { bar, BAR_WIDTH, renderUsageText, usageJson } from "./team_usage.ts";

const GOLDEN = new URL("../tests/cli/golden/", import.meta.url).pathname;

/** The seed's payments team, with a CPU limit to be near. */
function paymentsSpec(): TeamSpec {
  const team = parse(Deno.readTextFileSync(new URL("../examples/teams/payments.yaml", import.meta.url))) as {
    spec: Record<string, unknown> & { resourceLimits: Record<string, unknown> };
  };
  team.spec.resourceLimits.maxCPUCores = "40";
  return TeamSpec.parse(team.spec);
}

const cluster = (name: string, env: string, owner: string, replicas?: number): ObservedCluster => ({
  metadata: {
    name,
    namespace: "team-payments",
    labels: { "butler.butlerlabs.dev/environment": env },
    annotations: { "butler.butlerlabs.dev/creator-email": owner },
  },
  spec: replicas === undefined ? {} : { workers: { replicas } },
});

const CLUSTERS = [
  cluster("carol-dev-1", "dev", "carol@example.com"),
  cluster("carol-dev-2", "dev", "carol@example.com"),
  cluster("bob-prod-1", "prod", "bob@example.com", 5),
  cluster("alice-prod-1", "prod", "alice@example.com"),
];

Deno.test("team usage", async (t) => {
  const usage = computeUsage(paymentsSpec(), CLUSTERS);
  await t.step("bars judged as the Team's quotaStatus is: the worst measure is the team's", () => {
    const states = usage.measures.map((m) => m.state);
    assert.equal(
      usage.quotaStatus,
      states.includes("Exceeded") ? "Exceeded" : states.includes("Warning") ? "Warning" : "OK",
    );
    const cpu = usage.measures.find((m) => m.label === "CPU")!;
    // dev clusters 2 x 2 CPU x 2 workers, prod 4 CPU x (5 + 3) workers: 40 of 40, at the limit and not above it.
    assert.deepEqual([cpu.used, cpu.limit, cpu.percent, cpu.state], ["40", "40", 100, "Warning"]);
  });
  await t.step("text and JSON, byte-identical to the goldens", () => {
    const text = renderUsageText("payments", usage);
    const json = JSON.stringify(usageJson("payments", usage), null, 2) + "\n";
    for (const [name, actual] of [["team_usage.txt", text], ["team_usage.json", json]] as const) {
      if (updatingGoldens()) Deno.writeTextFileSync(`${GOLDEN}${name}`, actual);
      assert.equal(actual, Deno.readTextFileSync(`${GOLDEN}${name}`), name);
    }
  });
  await t.step("a bar is always as wide, fills with the percentage, and is full past 100 %", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1000 }), (a, b) => {
        assert.equal(bar(a).length, BAR_WIDTH + 2);
        const filled = (p: number) => bar(p).split("#").length - 1;
        if (a <= b) assert.ok(filled(a) <= filled(b));
        if (a >= 100) assert.equal(filled(a), BAR_WIDTH);
      }),
    );
  });
});
