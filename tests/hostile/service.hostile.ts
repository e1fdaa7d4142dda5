/**
 * The hook service under a hostile corpus (issue #46), started with the shipped command line, flags and heap caps
 * (as the API tier's permission test starts it), reading the test control plane with its own ServiceAccount.
 * Throughout, a benign team's Team syncs (as Metacontroller) and TenantCluster reviews (dry runs, which read the
 * Team, its clusters and its ledger) run one after another; after a quiet phase, the corpus (`corpus.ts`) is sent
 * in bursts at both listeners for the attack phase by an attacker on its own thread (`attacker.ts`), with bodies that
 * trickle in held open throughout. Measured:
 * the process's exits, `/readyz` failures (probed every 250 ms), the benign calls' failures and p99 in each phase,
 * the peak resident memory against the pod's limit, and each hostile answer against what is right for it.
 */
import assert from "node:assert/strict";
import { startAttacker } from "./attacker.ts";
import {
  benignCalls,
  latencySummary,
  type Loop,
  POD_LIMIT_BYTES,
  readinessProbe,
  startWithBenignTeam,
} from "./benign.ts";
import { record, residentPeak } from "./measure.ts";

const QUIET_MS = 12_000;
const ATTACK_MS = 30_000;
const ROUND_MS = 3_000;
const SLOW_BODIES = 16;

Deno.test("the hook service under a hostile corpus", async (t) => {
  const { service, reviewFixture, exited } = await startWithBenignTeam();

  const { hooks, reviews } = benignCalls(service, reviewFixture);
  const probe = readinessProbe(service);

  const started = performance.now();
  await new Promise((r) => setTimeout(r, QUIET_MS));
  let attackFrom = NaN;
  let attackTo = NaN;
  const attack = await startAttacker({
    type: "attack",
    hooks: service.hooks,
    webhooks: service.webhooks,
    attackMs: ATTACK_MS,
    roundMs: ROUND_MS,
    slowBodies: SLOW_BODIES,
  }, { started: () => attackFrom = performance.now(), ended: () => attackTo = performance.now() });
  await Promise.all([hooks.stop(), reviews.stop(), probe.stop()]);
  const peak = residentPeak(service.child.pid);
  const alive = !exited();
  const status = await service.stop();

  const summary = (l: Loop) => latencySummary(l, [started + 2000, attackFrom], [attackFrom, attackTo]);
  const result = {
    processExits: alive ? 0 : 1,
    exitCodeAtShutdown: status.code,
    readyz: { probes: probe.probes, failures: probe.failed.length },
    benign: { teamSync: summary(hooks), tenantClusterReview: summary(reviews) },
    benignP99Ratio: Math.max(summary(hooks).ratio, summary(reviews).ratio),
    peakResidentBytes: peak,
    podLimitBytes: POD_LIMIT_BYTES,
    attack: {
      rounds: attack.rounds,
      slowBodies: { connections: SLOW_BODIES, answers: attack.slowAnswers },
      answers: attack.answers,
      wrong: attack.wrong,
    },
  };
  await record("service", result);

  await t.step("the process never ended, and stopped with exit 0", () => {
    assert.ok(alive, service.log().slice(-3000));
    assert.equal(status.code, 0);
  });
  await t.step("readiness never failed", () => assert.deepEqual(probe.failed, []));
  await t.step(
    "every hostile call got an answer that is right for it",
    () => assert.deepEqual(attack.wrong, []),
  );
  await t.step("no benign call failed", () => {
    assert.deepEqual(hooks.failures, []);
    assert.deepEqual(reviews.failures, []);
  });
  await t.step("bodies that trickled in were cut (408) or refused at the door (429), never held", () => {
    const answers = attack.slowAnswers;
    assert.equal(answers.length, SLOW_BODIES, answers.join());
    assert.ok(answers.every((r) => /^HTTP\/1\.1 (408|429) /.test(r)), answers.join());
  });
  await t.step("resident memory stayed within the pod's limit", () => {
    assert.ok(peak < POD_LIMIT_BYTES, `${peak} bytes`);
  });
  await t.step("the benign p99 under attack is within 3 times the quiet one", () => {
    assert.ok(result.benignP99Ratio <= 3, JSON.stringify(result.benign));
  });
});
