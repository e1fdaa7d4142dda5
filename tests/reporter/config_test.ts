import assert from "node:assert/strict";
import { loadReporterConfig } from "../../lib/config/mod.ts";

Deno.test("reporter configuration: defaults, and bad values named", async (t) => {
  await t.step("defaults: 45 s heartbeat while a decision waits on the demand, 600 s at rest", () => {
    const r = loadReporterConfig({ HOSTNAME: "butler-reporter-0" });
    assert.ok(r.ok);
    assert.equal(r.config.heartbeatSeconds, 45);
    assert.equal(r.config.idleHeartbeatSeconds, 600);
    assert.equal(r.config.leaseSeconds, 30);
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
