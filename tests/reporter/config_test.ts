import assert from "node:assert/strict";
import { loadReporterConfig } from "../../lib/config/mod.ts";
import { recheckDelayMs } from "../../lib/reporter/mod.ts";

Deno.test("reporter configuration: defaults, and bad values named", async (t) => {
  await t.step("defaults: 45 s heartbeat while a decision waits on the demand, 600 s at rest", () => {
    const r = loadReporterConfig({ HOSTNAME: "butler-reporter-0" });
    assert.ok(r.ok);
    assert.equal(r.config.heartbeatSeconds, 45);
    assert.equal(r.config.idleHeartbeatSeconds, 600);
    assert.equal(r.config.leaseSeconds, 30);
    assert.equal(r.config.kubeconfigRecheckSeconds, 300);
    assert.equal(r.config.metricsAuth, "none");
    const shipped = loadReporterConfig({ HOSTNAME: "r", METRICS_AUTH: "kubernetes" });
    assert.ok(shipped.ok);
    assert.equal(shipped.config.metricsAuth, "kubernetes");
    const bad = loadReporterConfig({ HOSTNAME: "r", METRICS_AUTH: "yes" });
    assert.ok(!bad.ok);
    assert.match(bad.message, /METRICS_AUTH must be "kubernetes" or "none"/);
  });

  await t.step("its listener: 32 connections, headers within 10 s, kept alive 120 s", () => {
    const r = loadReporterConfig({ HOSTNAME: "r" });
    assert.ok(r.ok);
    assert.deepEqual(r.config.connections, {
      maxConnections: 32,
      handshakeSeconds: 10,
      headerSeconds: 10,
      idleSeconds: 120,
      bodySeconds: 10,
    });
    const set = loadReporterConfig({ HOSTNAME: "r", MAX_CONNECTIONS: "8", IDLE_TIMEOUT_SECONDS: "30" });
    assert.ok(set.ok);
    assert.equal(set.config.connections.maxConnections, 8);
    assert.equal(set.config.connections.idleSeconds, 30);
    const bad = loadReporterConfig({ HOSTNAME: "r", MAX_CONNECTIONS: "none" });
    assert.ok(!bad.ok);
    assert.match(bad.message, /MAX_CONNECTIONS must be an integer from 1 to 65536/);
  });

  await t.step(
    "the idle heartbeat stays within the TenantCluster's 1,800 s and not below the short one",
    () => {
      const over = loadReporterConfig({ HOSTNAME: "r", REPORTER_IDLE_HEARTBEAT_SECONDS: "1600" });
      assert.ok(!over.ok);
      assert.match(over.message, /REPORTER_IDLE_HEARTBEAT_SECONDS/);
      const below = loadReporterConfig({
        HOSTNAME: "r",
        REPORTER_HEARTBEAT_SECONDS: "30",
        REPORTER_IDLE_HEARTBEAT_SECONDS: "20",
      });
      assert.ok(!below.ok);
      assert.match(
        below.message,
        /REPORTER_IDLE_HEARTBEAT_SECONDS must be at least REPORTER_HEARTBEAT_SECONDS/,
      );
      const equal = loadReporterConfig({
        HOSTNAME: "r",
        REPORTER_HEARTBEAT_SECONDS: "10",
        REPORTER_IDLE_HEARTBEAT_SECONDS: "10",
      });
      assert.ok(equal.ok);
    },
  );

  await t.step("the Lease is renewed at least twice within its duration", () => {
    const r = loadReporterConfig({
      HOSTNAME: "r",
      REPORTER_LEASE_SECONDS: "10",
      REPORTER_RENEW_SECONDS: "6",
    });
    assert.ok(!r.ok);
    assert.match(r.message, /REPORTER_RENEW_SECONDS must be at most half of REPORTER_LEASE_SECONDS/);
  });
});

Deno.test("kubeconfig rechecks: the period while the tenant is read, sooner in trouble, soonest when refused", () => {
  assert.equal(recheckDelayMs("none", 300), 300_000);
  assert.equal(recheckDelayMs("troubled", 300), 60_000);
  assert.equal(recheckDelayMs("refused", 300), 2000);
  // A period shorter than the trouble bounds is never lengthened by trouble.
  assert.equal(recheckDelayMs("troubled", 2), 2000);
  assert.equal(recheckDelayMs("refused", 1), 1000);
});
