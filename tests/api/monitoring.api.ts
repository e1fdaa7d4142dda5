/**
 * The monitoring component's PrometheusRule: every expression parses with Prometheus's own parser, every metric
 * it reads is one the hook service registers, and the pool alerts use the seed's capacity thresholds.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { CAPACITY_EVENTS } from "../../hooks/networkpool/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { runCommand } from "../../lib/testing/mod.ts";
import { ROOT } from "./cluster.ts";
import { promqlBinary } from "./tools.ts";

type Rule = { alert: string; expr: string; labels?: Record<string, string> };

const rule = parse(Deno.readTextFileSync(`${ROOT}/manifests/components/monitoring/prometheusrule.yaml`)) as {
  spec: { groups: { name: string; rules: Rule[] }[] };
};
const rules = rule.spec.groups.flatMap((g) => g.rules);

/** Every series name the service can expose (a histogram's `_bucket`, `_sum` and `_count` included). */
async function exposedNames(): Promise<Set<string>> {
  const { metrics } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
  });
  const all = await metrics.registry.getMetricsAsJSON();
  return new Set(
    all.flatMap((m) =>
      m.type === ("histogram" as unknown)
        ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`]
        : [m.name]
    ),
  );
}

Deno.test("PrometheusRule: expressions parse and read metrics the service exposes", async () => {
  assert.ok(rules.length >= 7, `${rules.length} rules`);
  const bin = await promqlBinary();
  const out = await runCommand(bin, [], { stdin: JSON.stringify(rules.map((r) => r.expr)) });
  assert.equal(out.code, 0, out.stderr);
  const parsed = JSON.parse(out.stdout) as { error?: string; metrics: string[] }[];
  const exposed = await exposedNames();
  rules.forEach((r, i) => {
    assert.equal(parsed[i]!.error, undefined, `${r.alert}: ${parsed[i]!.error}`);
    assert.ok(parsed[i]!.metrics.length > 0, `${r.alert} reads a metric`);
    for (const m of parsed[i]!.metrics) {
      assert.ok(exposed.has(m), `${r.alert} reads ${m}, which the service exposes`);
    }
    assert.ok(r.labels?.severity, `${r.alert} has a severity`);
  });
});

Deno.test("PrometheusRule: a pool alert per capacity tier, at the tier's threshold", () => {
  for (const [tier, { percent }] of Object.entries(CAPACITY_EVENTS)) {
    const alert = rules.find((r) => r.alert === `ButlerPool${tier}`);
    assert.ok(alert, `an alert ButlerPool${tier}`);
    assert.match(
      alert.expr,
      new RegExp(`butler_networkpool_utilization_ratio\\) >= ${(percent / 100).toFixed(2)}$`),
    );
  }
});
