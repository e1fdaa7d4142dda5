/**
 * The hook service under a connection flood (issue #55, item 2), started with the shipped command line, flags and
 * heap caps. Any pod can open connections to both listeners: the attacker (`connection_attacker.ts`, on a thread of
 * its own) keeps ten times each listener's shipped connection cap open, as connections that say nothing, handshakes
 * never begun, headers trickled, small bodies trickled (ten times the webhook door's places between them) and
 * never-finished chunked bodies, each reconnecting once closed. Throughout, a benign team's Team syncs (as
 * Metacontroller, kept-alive with its client certificate) and TenantCluster reviews (as the API server, kept
 * alive) run one after another, and `/readyz` is probed on a new connection every 250 ms (as the kubelet does).
 * Measured: process exits and out-of-memory, readiness failures, the benign calls' failures and p99 under attack
 * against quiet, the peak resident memory against the pod's limit, and what each hostile behaviour met.
 */
import assert from "node:assert/strict";
import { loadConfig } from "../../lib/config/mod.ts";
import { shippedEnv } from "../api/shipped.ts";
import {
  benignCalls,
  latencySummary,
  POD_LIMIT_BYTES,
  readinessProbe,
  startWithBenignTeam,
} from "./benign.ts";
import { type Behaviour, startConnectionAttacker } from "./connection_attacker.ts";
import { record, residentPeak } from "./measure.ts";

const QUIET_MS = 12_000;
const ATTACK_MS = 40_000;
/** A closed slot opens its next connection this much later: ten times each cap held, renewed as they close. */
const RECONNECT_MS = 15_000;

/** The shipped limits the flood is ten times of. */
function shippedLimits() {
  const loaded = loadConfig(shippedEnv);
  if (!loaded.ok) throw new Error(loaded.message);
  const c = loaded.config;
  return {
    hooks: { maxConnections: c.connections.hooks.maxConnections },
    webhooks: { maxConnections: c.connections.webhooks.maxConnections, concurrency: c.admission.concurrency },
  };
}

/** Ten times a listener's cap, shared among the behaviours; on the webhooks, ten times the door's places trickle. */
function slots(cap: number, places?: number): Record<Behaviour, number> {
  const total = 10 * cap;
  const trickling = places === undefined ? total / 8 : 10 * places;
  const bodies = { "trickled-body": trickling / 2, "trickled-chunked": trickling / 2 };
  const rest = total - trickling;
  return {
    ...bodies,
    "never-finished-chunked": Math.round(rest / 8),
    headers: Math.round(rest / 8),
    idle: Math.round((rest * 3) / 8),
    handshake: rest - 2 * Math.round(rest / 8) - Math.round((rest * 3) / 8),
  };
}

Deno.test("the hook service under a connection flood ten times its caps", async (t) => {
  const limits = shippedLimits();
  const { service, reviewFixture, exited } = await startWithBenignTeam();

  const { hooks, reviews } = benignCalls(service, reviewFixture);
  const probe = readinessProbe(service, { fresh: true });

  const started = performance.now();
  await new Promise((r) => setTimeout(r, QUIET_MS));
  let attackFrom = NaN;
  let attackTo = NaN;
  const order = {
    type: "attack" as const,
    targets: [
      {
        name: "webhooks",
        url: service.webhooks,
        path: "/webhooks/validate/tenantcluster",
        slots: slots(limits.webhooks.maxConnections, limits.webhooks.concurrency),
      },
      {
        name: "hooks",
        url: service.hooks,
        path: "/hooks/team/sync",
        slots: slots(limits.hooks.maxConnections),
      },
    ],
    attackMs: ATTACK_MS,
    reconnectMs: RECONNECT_MS,
  };
  const attack = await startConnectionAttacker(order, {
    started: () => attackFrom = performance.now(),
    ended: () => attackTo = performance.now(),
  });
  await Promise.all([hooks.stop(), reviews.stop(), probe.stop()]);
  const peak = residentPeak(service.child.pid);
  const alive = !exited();
  const status = await service.stop();
  const log = service.log();

  const summary = (l: typeof hooks) =>
    latencySummary(l, [started + 2000, attackFrom], [attackFrom, attackTo]);
  const result = {
    processExits: alive ? 0 : 1,
    outOfMemory: /out of memory/i.test(log) ? 1 : 0,
    exitCodeAtShutdown: status.code,
    readyz: {
      probes: probe.probes,
      failures: probe.failed.length,
      longestFailing: probe.longestFailing,
      longestFailingMs: probe.longestFailingMs,
      first: probe.failed.slice(0, 3),
    },
    benign: {
      teamSync: { ...summary(hooks), first: hooks.failures.slice(0, 3) },
      tenantClusterReview: { ...summary(reviews), first: reviews.failures.slice(0, 3) },
    },
    benignP99Ratio: Math.max(summary(hooks).ratio, summary(reviews).ratio),
    peakResidentBytes: peak,
    podLimitBytes: POD_LIMIT_BYTES,
    shippedLimits: limits,
    hostileConnections: Object.fromEntries(
      order.targets.map((x) => [x.name, Object.values(x.slots).reduce((a, b) => a + b, 0)]),
    ),
    attack: attack.listeners,
  };
  await record("connections", result);

  await t.step("the process never ended nor ran out of memory, and stopped with exit 0", () => {
    assert.ok(alive, log.slice(-3000));
    assert.equal(result.outOfMemory, 0, log.slice(-3000));
    assert.equal(status.code, 0);
  });
  await t.step("readiness never failed as the kubelet counts it: the service could decide throughout", () => {
    // A probe is a new connection, as the kubelet's, every 250 ms: one may time out behind the flood's connections
    // in the accept queue. The kubelet (period 5 s, timeout 2 s, 3 failures) turns the pod unready only once failures
    // span 10 s.
    assert.ok(probe.longestFailingMs < 10_000, JSON.stringify(result.readyz));
  });
  await t.step("no benign call failed", () => {
    assert.deepEqual(hooks.failures, []);
    assert.deepEqual(reviews.failures, []);
  });
  await t.step("resident memory stayed within the pod's limit", () => {
    assert.ok(peak < POD_LIMIT_BYTES, `${peak} bytes`);
  });
  await t.step("the benign p99 under attack is within 3 times the quiet one", () => {
    assert.ok(result.benignP99Ratio <= 3, JSON.stringify(result.benign));
  });
  await t.step("the service held at most its cap of them, and answered no hostile body 200", () => {
    const caps: Record<string, number> = {
      hooks: limits.hooks.maxConnections,
      webhooks: limits.webhooks.maxConnections,
    };
    for (const [listener, behaviours] of Object.entries(attack.listeners)) {
      // Open when the attack ended (the service had not closed them): never more than the listener keeps.
      const open = Object.values(behaviours).reduce((n, b) => n + b.opened - b.closedByService, 0);
      assert.ok(
        open <= caps[listener]!,
        `${listener}: ${open} open at the end, ${JSON.stringify(behaviours)}`,
      );
      for (const [behaviour, seen] of Object.entries(behaviours)) {
        assert.equal(seen.answers["200"] ?? 0, 0, `${listener} ${behaviour}: ${JSON.stringify(seen)}`);
      }
    }
  });
});
