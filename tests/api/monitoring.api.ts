/**
 * The monitoring component's PrometheusRule and Grafana dashboard: every expression parses with Prometheus's own
 * parser, every metric it reads is one the hook service (its worker pool included) or the reporter exposes on a
 * real /metrics, the pool alerts use the seed's capacity thresholds, and the dashboard is a Grafana dashboard
 * (decoded strictly with Grafana's own types) covering pools, teams, the hook service and admission.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { CAPACITY_EVENTS } from "../../hooks/networkpool/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { createHeapBudget } from "../../lib/foreign/mod.ts";
import { startReporter } from "../../lib/reporter/mod.ts";
import { runCommand } from "../../lib/testing/mod.ts";
import client from "prom-client";
import { ROOT } from "./cluster.ts";
import { grafanaBinary, promqlBinary } from "./tools.ts";

type Rule = { alert: string; expr: string; labels?: Record<string, string> };

const rule = parse(Deno.readTextFileSync(`${ROOT}/manifests/components/monitoring/prometheusrule.yaml`)) as {
  spec: { groups: { name: string; rules: Rule[] }[] };
};
const rules = rule.spec.groups.flatMap((g) => g.rules);

/** The series names of a /metrics text (a histogram's `_bucket`, `_sum` and `_count` as they appear). */
function seriesNames(text: string): string[] {
  return text.split("\n").filter((l) => l && !l.startsWith("#")).map((l) => l.split(/[{ ]/)[0]!);
}

/**
 * Every series name the service and the reporter expose, read from their /metrics: the service with a worker
 * pool (its gauges are there only then), the reporter's registry as it starts.
 */
async function exposedNames(): Promise<Set<string>> {
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    offload: {
      submit: () => Promise.resolve("busy"),
      stats: () => ({ workers: 1, busy: 0, queued: 0, queueLimit: 2, timedOut: 0, unavailable: 0 }),
    },
  });
  // A request of each kind, so that every labelled series has one (a histogram shows its _bucket then).
  await app.request("/healthz");
  const service = await (await app.request("/metrics")).text();
  const registry = new client.Registry();
  const reporter = startReporter({
    kube: {
      get: () => Promise.resolve(undefined),
      list: () => Promise.resolve([]),
      write: () => Promise.resolve({}),
      apply: () => Promise.resolve({}),
      remove: () => Promise.resolve(),
      stream: () => Promise.reject(new Error("no watch in this test")),
      budget: createHeapBudget(),
    },
    identity: "monitoring-test",
    namespace: "butler-system",
    location: { secretName: "{name}-kubeconfig", secretKey: "value" },
    log: () => {},
    registry,
  });
  const reported = await registry.metrics();
  await reporter.stop();
  // Label-free families appear whatever happened; the labelled ones of the domain are declared in their help.
  const declared = [
    ...service.matchAll(/^# TYPE (\S+) (\S+)$/gm),
    ...reported.matchAll(/^# TYPE (\S+) (\S+)$/gm),
  ]
    .flatMap(([, name, type]) =>
      type === "histogram" ? [`${name}_bucket`, `${name}_sum`, `${name}_count`] : [name!]
    );
  return new Set([...seriesNames(service), ...seriesNames(reported), ...declared]);
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

const dashboardMap = parse(
  Deno.readTextFileSync(`${ROOT}/manifests/components/monitoring/dashboard.yaml`),
) as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
type Panel = { type: string; title: string; targets?: { expr: string }[] };
const dashboard = JSON.parse(dashboardMap.data["butler.json"]!) as { panels: Panel[]; uid: string };

Deno.test("Grafana dashboard: Grafana's own model, strictly", async () => {
  assert.equal(dashboardMap.metadata.labels.grafana_dashboard, "1", "the label Grafana's sidecar loads");
  const out = await runCommand(await grafanaBinary(), [], { stdin: dashboardMap.data["butler.json"]! });
  assert.equal(out.stdout.trim(), "ok", out.stdout + out.stderr);
  const broken = JSON.stringify({ ...dashboard, panels: [{ ...dashboard.panels[1], bogus: true }] });
  const refused = await runCommand(await grafanaBinary(), [], { stdin: broken });
  assert.notEqual(refused.code, 0, "the check refuses a panel Grafana's model does not know");
  assert.match(refused.stdout, /unexpected field 'bogus'/);
});

Deno.test("Grafana dashboard: every query parses and reads metrics the service or the reporter exposes", async () => {
  const queries = dashboard.panels.flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr }))
  );
  assert.ok(queries.length >= 15, `${queries.length} queries`);
  const out = await runCommand(await promqlBinary(), [], {
    stdin: JSON.stringify(queries.map((q) => q.expr)),
  });
  assert.equal(out.code, 0, out.stderr);
  const parsed = JSON.parse(out.stdout) as { error?: string; metrics: string[] }[];
  const exposed = await exposedNames();
  queries.forEach((q, i) => {
    assert.equal(parsed[i]!.error, undefined, `${q.panel}: ${parsed[i]!.error}`);
    assert.ok(parsed[i]!.metrics.length > 0, `${q.panel} reads a metric`);
    for (const m of parsed[i]!.metrics) {
      assert.ok(exposed.has(m), `${q.panel} reads ${m}, which nothing exposes`);
    }
  });
});

Deno.test("Grafana dashboard: pools, teams, the hook service and admission, as the issue lists them", () => {
  const titles = dashboard.panels.map((p) => p.title);
  for (
    const title of [
      "Pool utilisation",
      "Largest free block",
      "Fragmentation",
      "Pending allocations",
      "Quota use by dimension",
      "Environment use",
      "Hook latency (p99)",
      "Hook errors",
      "Refused for overload (429)",
      "Workers and queue",
      "Reviews",
      "Denials by rule",
      "Review latency (p99)",
    ]
  ) {
    assert.ok(titles.includes(title), `a panel "${title}"`);
  }
});
