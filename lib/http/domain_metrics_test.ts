import assert from "node:assert/strict";
import client from "prom-client";
import { createDomainMetrics, MAX_SERIES_PER_GAUGE, SERIES_TTL_SECONDS } from "./domain_metrics.ts";

function setup() {
  const registry = new client.Registry();
  let now = 0;
  const metrics = createDomainMetrics(registry, () => now);
  return { registry, metrics, advance: (s: number) => (now += s * 1000) };
}

Deno.test("domain metrics from signals", async (t) => {
  await t.step("a pool's figures and utilisation; gone drops them", async () => {
    const { registry, metrics } = setup();
    metrics.record([{
      signal: "pool",
      namespace: "butler-system",
      name: "a",
      totalIPs: 16,
      allocatedIPs: 12,
      availableIPs: 4,
      largestFreeBlock: 4,
      allocationCount: 3,
      fragmentationPercent: 25,
      pendingAllocations: 2,
      coolingIPs: 8,
      releasedGrants: 41,
    }]);
    const text = await registry.metrics();
    assert.match(text, /butler_networkpool_utilization_ratio\{namespace="butler-system",pool="a"\} 0\.75/);
    assert.match(text, /butler_networkpool_fragmentation_ratio\{namespace="butler-system",pool="a"\} 0\.25/);
    assert.match(text, /butler_networkpool_pending_allocations\{namespace="butler-system",pool="a"\} 2/);
    assert.match(text, /butler_networkpool_largest_free_block\{namespace="butler-system",pool="a"\} 4/);
    assert.match(text, /butler_networkpool_grants\{namespace="butler-system",pool="a"\} 3/);
    assert.match(text, /butler_networkpool_cooling_ips\{namespace="butler-system",pool="a"\} 8/);
    assert.match(text, /butler_networkpool_released_grants\{namespace="butler-system",pool="a"\} 41/);
    metrics.record([{ signal: "pool", namespace: "butler-system", name: "a", gone: true }]);
    assert.doesNotMatch(await registry.metrics(), /pool="a"/);
  });

  await t.step("team utilisation as a ratio, and exceeded as 0/1", async () => {
    const { registry, metrics } = setup();
    metrics.record([{
      signal: "team",
      name: "dev",
      utilization: { clusters: 60, cpu: 120 },
      environments: { prod: 50 },
      quotaStatus: "Exceeded",
    }]);
    const text = await registry.metrics();
    assert.match(text, /butler_team_environment_utilization_ratio\{team="dev",environment="prod"\} 0\.5/);
    assert.match(text, /butler_team_quota_utilization_ratio\{team="dev",resource="clusters"\} 0\.6/);
    assert.match(text, /butler_team_quota_utilization_ratio\{team="dev",resource="cpu"\} 1\.2/);
    assert.match(text, /butler_team_quota_exceeded\{team="dev"\} 1/);
    metrics.record([{ signal: "team", name: "dev", gone: true }]);
    assert.doesNotMatch(await registry.metrics(), /team="dev"/);
  });

  await t.step("denials count once per failing rule", async () => {
    const { registry, metrics } = setup();
    metrics.record([{ signal: "denial", webhook: "tenantcluster", rules: ["maxClusters", "maxCPUCores"] }]);
    metrics.record([{ signal: "denial", webhook: "tenantcluster", rules: ["maxClusters"] }]);
    const text = await registry.metrics();
    assert.match(text, /butler_admission_denials_total\{webhook="tenantcluster",rule="maxClusters"\} 2/);
    assert.match(text, /butler_admission_denials_total\{webhook="tenantcluster",rule="maxCPUCores"\} 1/);
  });

  await t.step("series not refreshed within the TTL are no longer reported", async () => {
    const { registry, metrics, advance } = setup();
    metrics.record([{ signal: "inventory", namespace: "team-a", name: "c1", ageSeconds: 42 }]);
    metrics.record([{ signal: "inventory", namespace: "team-a", name: "c2", ageSeconds: 7 }]);
    advance(SERIES_TTL_SECONDS - 10);
    metrics.record([{ signal: "inventory", namespace: "team-a", name: "c2", ageSeconds: 8 }]);
    advance(20);
    const text = await registry.metrics();
    assert.doesNotMatch(text, /tenantcluster="c1"/);
    assert.match(
      text,
      /butler_loadbalancer_inventory_age_seconds\{namespace="team-a",tenantcluster="c2"\} 8/,
    );
  });

  await t.step("an inventory's age and the age its TenantCluster accepts, side by side", async () => {
    const { registry, metrics } = setup();
    metrics.record([{
      signal: "inventory",
      namespace: "team-a",
      name: "c1",
      ageSeconds: 400,
      maxAgeSeconds: 1800,
    }]);
    metrics.record([{
      signal: "inventory",
      namespace: "team-a",
      name: "c2",
      ageSeconds: 400,
      maxAgeSeconds: 300,
    }]);
    const text = await registry.metrics();
    assert.match(
      text,
      /butler_loadbalancer_inventory_max_age_seconds\{namespace="team-a",tenantcluster="c1"\} 1800/,
    );
    assert.match(
      text,
      /butler_loadbalancer_inventory_max_age_seconds\{namespace="team-a",tenantcluster="c2"\} 300/,
    );
    metrics.record([{ signal: "inventory", namespace: "team-a", name: "c2", gone: true }]);
    assert.doesNotMatch(await registry.metrics(), /tenantcluster="c2"/);
  });

  await t.step("Events written and failed, by reason", async () => {
    const { registry, metrics } = setup();
    metrics.event("PoolCapacityWarning", "written");
    metrics.event("PoolCapacityWarning", "failed");
    assert.match(
      await registry.metrics(),
      /butler_events_total\{reason="PoolCapacityWarning",result="failed"\} 1/,
    );
  });
});

Deno.test("a gauge keeps at most MAX_SERIES_PER_GAUGE series; the others are counted, and come once some expire", async () => {
  const { registry, metrics, advance } = setup();
  const team = (name: string) => ({ signal: "team" as const, name, quotaStatus: "OK" as const });
  metrics.record(Array.from({ length: MAX_SERIES_PER_GAUGE }, (_, i) => team(`t${i}`)));
  advance(SERIES_TTL_SECONDS / 2);
  metrics.record([team("one-too-many"), team("t0")]);
  let text = await registry.metrics();
  assert.equal(text.match(/^butler_team_quota_exceeded\{/gm)?.length, MAX_SERIES_PER_GAUGE);
  assert.doesNotMatch(text, /team="one-too-many"/);
  assert.match(text, /butler_metric_series_dropped_total\{metric="butler_team_quota_exceeded"\} 1/);
  // The first teams' series expire (t0 was refreshed): room for the new one.
  advance(SERIES_TTL_SECONDS / 2 + 1);
  await registry.metrics();
  metrics.record([team("one-too-many")]);
  text = await registry.metrics();
  assert.match(text, /butler_team_quota_exceeded\{team="one-too-many"\} 0/);
  assert.equal(text.match(/^butler_team_quota_exceeded\{/gm)?.length, 2);
});
