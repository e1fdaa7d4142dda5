/**
 * An admission review the service cannot authenticate writes nothing (docs/security.md): replayed unauthenticated,
 * every admission fixture that writes the quota ledger or the pool registry gives the answer it gives once its
 * write landed, and the API sees no write. (Contention cannot happen without a write: a case whose recorded answer
 * is "try again" is answered as if the write had landed.)
 */
import assert from "node:assert/strict";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createTestApp, discoverGoldenCases, fixtureReader, runGoldenCase } from "../../lib/testing/mod.ts";

const root = new URL("../fixtures", import.meta.url).pathname;
const writing = discoverGoldenCases(root).filter((c) => {
  try {
    Deno.statSync(`${c.dir}/writes.json`);
    return true;
  } catch {
    return false;
  }
});

Deno.test("unauthenticated admission writes nothing, and answers as it would once written", async (t) => {
  assert.ok(writing.length >= 8, `${writing.length} admission fixtures write`);
  for (const c of writing) {
    await t.step(`${c.kind}/${c.name}`, async () => {
      const kube = fixtureReader(c.dir);
      const { app } = createTestApp(HOOK_ROUTES, { kube, admissionWrites: false });
      const { status, body } = await runGoldenCase(app, c);
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(kube.writes, [], "no write");
      const recorded = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`)).response;
      const answer = (body as { response: { allowed: boolean; status?: { code?: number } } }).response;
      if (recorded.status?.code === 409) assert.equal(answer.allowed, true);
      else assert.equal(answer.allowed, recorded.allowed);
    });
  }
});
