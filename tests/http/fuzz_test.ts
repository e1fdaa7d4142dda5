/**
 * Seeded, bounded fuzzing of every sync and finalize hook through the real app: each case takes a golden request
 * and breaks it at one random place (deletes a field, sets it to null, to a random JSON value carrying a marker,
 * or to the wrong type). Whatever the input, the invariants hold:
 *
 * - the answer is 200 or 400, never a 500 (a crash) or a hang;
 * - a 400 never quotes request content (no injected marker in the error body);
 * - no response names one object twice;
 * - a NetworkPool never drops or moves a grant whose IPAllocation is delivered (its ledger decoded before and
 *   after; the property is shown to fail on an answer tampered on purpose);
 * - no Secret value appears in any answer;
 * - the answer's size is proportional to the request's (no blow-up).
 *
 * The suite runs 2,500 cases with a fixed seed (about 2 s); explore further with `FUZZ_SEED` and `FUZZ_RUNS`.
 * The fixed seed found an observed child with non-string labels echoed into an invalid response (a 500).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { createTestApp, discoverGoldenCases } from "../../lib/testing/mod.ts";
import { findGrant } from "../../lib/pool_ledger/mod.ts";
import { CHECKPOINT_ANNOTATION, recordOf } from "../../lib/api/mod.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const { app } = createTestApp(HOOK_ROUTES);
const root = new URL("../fixtures", import.meta.url).pathname;
const SECRET_VALUE = "U0VDUkVULU1BUktFUi0xMjM0";
const MARKER = "FUZZ-";

const cases = discoverGoldenCases(root)
  .filter((c) => c.hook === "sync" || c.hook === "finalize")
  .map((c) => ({
    route: c.route,
    name: `${c.kind}/${c.hook}/${c.name}`,
    request: JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`)),
  }));

/** Every path to a value inside `value` (objects and arrays), the root excluded. */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) {
      const p = [...prefix, Array.isArray(value) ? Number(k) : k];
      out.push(p);
      paths(v, p, out);
    }
  }
  return out;
}

const injected = fc.oneof(
  fc.constant(null),
  fc.string({ maxLength: 12 }).map((s) => `${MARKER}${s}`),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 6 }).map((s) => `${MARKER}${s}`), { maxLength: 3 }),
  fc.dictionary(
    fc.constantFrom("a", "name", "spec"),
    fc.string({ maxLength: 6 }).map((s) => `${MARKER}${s}`),
  ),
);

const mutation = fc.record({
  which: fc.nat({ max: cases.length - 1 }),
  where: fc.nat(),
  op: fc.constantFrom("delete", "set"),
  value: injected,
});

/**
 * A NetworkPool answer keeps every grant of a delivered IPAllocation (recorded on it, or in a trusted ledger), at
 * the same range: the ledger of the request
 * (`status.ledger`, or a first-format `status.grants`) and of the answer are decoded and compared. Returns how
 * many grants it compared; throws when one is dropped or moved.
 */
function grantsKept(request: Json, body: Json, where: string): number {
  const before = request?.object?.status;
  const group = request?.related?.["IPAllocation.butler.butlerlabs.dev/v1alpha1"];
  if (!before || typeof before !== "object" || !group || typeof group !== "object") return 0;
  const after = body?.status && typeof body.status === "object" ? body.status : before;
  const annotated = request?.object?.metadata?.annotations?.[CHECKPOINT_ANNOTATION];
  const stored = (before as Json).ledger?.checkpoint;
  const trusted = annotated === stored &&
    (annotated === undefined || String(annotated).endsWith(`/${request?.object?.metadata?.uid}`));
  let compared = 0;
  for (const a of Object.values(group) as Json[]) {
    const uid = a?.metadata?.uid;
    if (typeof uid !== "string") continue;
    let held;
    try {
      held = findGrant(before, uid);
    } catch {
      continue; // a ledger the fuzzer broke holds nothing readable to keep
    }
    if (!held) continue;
    // A ledger whose checkpoint is not its pool's is no longer trusted: it is rebuilt from the grants recorded on
    // their holders, and only those must survive (an unrecorded grant was never used).
    const record = recordOf(a?.metadata);
    const recorded = record?.range.start === held.range.start && record?.range.end === held.range.end;
    if (!trusted && !recorded) continue;
    const kept = findGrant(after, uid);
    assert.ok(kept, `grant of ${uid} dropped: ${where}`);
    assert.equal(
      `${kept.range.start}-${kept.range.end}`,
      `${held.range.start}-${held.range.end}`,
      `grant moved: ${where}`,
    );
    compared++;
  }
  return compared;
}

function keyOf(o: Json): string {
  return `${o?.kind}.${o?.apiVersion} ${o?.metadata?.namespace ?? ""}/${o?.metadata?.name}`;
}

Deno.test("fuzzed hook requests keep every invariant", async () => {
  assert.ok(cases.length > 50);
  let answered200 = 0;
  let answered400 = 0;
  let grantsCompared = 0;
  await fc.assert(
    fc.asyncProperty(mutation, async ({ which, where, op, value }) => {
      const c = cases[which]!;
      const request = structuredClone(c.request);
      const all = paths(request);
      const path = all[where % all.length]!;
      const parent = path.slice(0, -1).reduce((o: Json, k) => o[k], request);
      const last = path.at(-1)!;
      if (op === "delete" && !Array.isArray(parent)) delete parent[last];
      else parent[last] = structuredClone(value);

      const sent = JSON.stringify(request);
      const res = await app.request(c.route, {
        method: "POST",
        headers: { "content-type": "application/json", "X-Butler-Now": "2026-11-21T09:00:00Z" },
        body: sent,
      });
      const text = await res.text();
      // Work proportional to the input: a 6 MB string status once came back as an 83 MB answer.
      assert.ok(
        text.length <= 4 * sent.length + 65536,
        `answer of ${text.length} for ${sent.length} characters`,
      );
      const where_ = `${c.name} ${op} ${path.join(".")} = ${JSON.stringify(value)}: ${text.slice(0, 300)}`;
      assert.ok(res.status === 200 || res.status === 400, `status ${res.status}: ${where_}`);
      assert.ok(!text.includes(SECRET_VALUE), `a Secret value in the answer: ${where_}`);
      if (res.status === 400) {
        answered400++;
        assert.ok(!text.includes(MARKER), `the error quotes request content: ${where_}`);
        return;
      }
      answered200++;
      const body = JSON.parse(text);
      const objects = [...(body.children ?? []), ...(body.attachments ?? [])];
      const keys = objects.map(keyOf);
      assert.equal(new Set(keys).size, keys.length, `an object returned twice: ${where_}`);
      if (c.route === "/hooks/networkpool/sync" || c.route === "/hooks/networkpool/finalize") {
        grantsCompared += grantsKept(request, body, where_);
      }
    }),
    {
      numRuns: Number(Deno.env.get("FUZZ_RUNS") ?? 2500),
      seed: Number(Deno.env.get("FUZZ_SEED") ?? 20261122),
    },
  );
  // Both kinds of answer were exercised (a mutation scheme that always broke the envelope would prove little).
  assert.ok(answered200 > 500 && answered400 > 100, `200: ${answered200}, 400: ${answered400}`);
  // The grants property was checked, not skipped: pools with grants were fuzzed and their ledgers compared.
  assert.ok(grantsCompared > 100, `grants compared: ${grantsCompared}`);
});

Deno.test("the grants property fails when a grant is dropped or moved on purpose", async () => {
  const pools = cases.filter((c) => c.route === "/hooks/networkpool/sync");
  let tampered = 0;
  for (const c of pools) {
    const res = await app.request(c.route, {
      method: "POST",
      headers: { "content-type": "application/json", "X-Butler-Now": "2026-11-21T09:00:00Z" },
      body: JSON.stringify(c.request),
    });
    const body = await res.json();
    if (grantsKept(c.request, body, c.name) === 0) continue;
    const grants: string[] = body.status.ledger.grants;
    // Each record dropped in turn: the property notices every one a delivered IPAllocation holds.
    let noticed = 0;
    for (let i = 0; i < grants.length; i++) {
      const dropped = structuredClone(body);
      dropped.status.ledger.grants = grants.filter((_, j) => j !== i);
      try {
        grantsKept(c.request, dropped, c.name);
      } catch (err) {
        assert.match(String(err), /dropped/);
        noticed++;
      }
    }
    assert.ok(noticed > 0, `${c.name}: no dropped grant noticed`);
    tampered++;
  }
  assert.ok(tampered >= 3, `pool fixtures with grants: ${tampered}`);
});
