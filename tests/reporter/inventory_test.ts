/**
 * The reporter's pure core: golden fixtures (`fixtures/<case>/input.json`: the tenant's Services as its API
 * returns them, the stored inventory, the health and the time -> `plan.json`), the caps, and properties.
 * `UPDATE_GOLDEN=1` rewrites `plan.json` on purpose.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { InventorySpec } from "../../lib/api/mod.ts";
import { keyOf, KubeApiError } from "../../lib/kube/mod.ts";
import {
  classifyTenantError,
  type FactResult,
  INVENTORY_LIMITS,
  inventoryApply,
  type InventoryInput,
  metallbCondition,
  metallbFailure,
  planInventory,
  serviceFact,
  splitFacts,
  type TenantHealth,
} from "../../lib/reporter/mod.ts";
import { formatFixture, updatingGoldens } from "../../lib/testing/mod.ts";

const FIXTURES = new URL("./fixtures", import.meta.url).pathname;

/** What the adapter does with a list: one entry per key (the last wins, as a watch's map), reduced. */
function inputOf(raw: { now: string; health: TenantHealth; services: unknown[]; previous?: unknown }) {
  const held = new Map<string, FactResult>();
  for (const s of raw.services) {
    const key = keyOf(s);
    const fact = serviceFact(s);
    if (key && fact.kind !== "ignored") held.set(key, fact);
  }
  return {
    ...splitFacts(held.values()),
    previous: raw.previous as InventoryInput["previous"],
    health: raw.health,
    now: new Date(raw.now),
  };
}

const RECORDED = [...Deno.readDirSync(FIXTURES)].filter((e) => e.isDirectory).map((e) => e.name).sort();
Deno.test("the reporter's golden cases are there", () =>
  assert.ok(RECORDED.length >= 5, `${RECORDED.length} cases`));
for (const name of RECORDED) {
  Deno.test(`reporter golden ${name}`, () => {
    const input = JSON.parse(Deno.readTextFileSync(`${FIXTURES}/${name}/input.json`));
    const plan = planInventory(inputOf(input));
    const path = `${FIXTURES}/${name}/plan.json`;
    if (updatingGoldens()) Deno.writeTextFileSync(path, formatFixture(plan));
    assert.deepEqual(JSON.parse(formatFixture(plan)), JSON.parse(Deno.readTextFileSync(path)));
    // Whatever is written is what the TenantCluster hook reads.
    if (plan.spec) assert.ok(InventorySpec.safeParse(plan.spec).success);
  });
}

const NOW = new Date("2026-03-01T12:00:00Z");
const WATCHING: TenantHealth = { state: "Watching" };

function service(i: number, withIp: boolean, createdMinute: number) {
  return {
    namespace: "ns",
    name: `svc-${String(i).padStart(5, "0")}`,
    createdAt: new Date(NOW.getTime() - createdMinute * 60_000).toISOString().replace(".000Z", "Z"),
    ingressIPs: withIp ? [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`] : [],
  };
}

Deno.test("a tenant with more Services than the cap: addresses kept first, then the longest pending", () => {
  const services = [
    ...Array.from({ length: 600 }, (_, i) => service(i, true, 1)),
    ...Array.from({ length: 600 }, (_, i) => service(1000 + i, false, i)),
  ];
  const plan = planInventory({ services, invalid: [], health: WATCHING, now: NOW });
  const kept = plan.spec!.services!;
  assert.equal(kept.length, INVENTORY_LIMITS.maxServices);
  assert.equal(kept.filter((s) => s.ingressIPs?.length).length, 600);
  // The 400 pending kept are the 400 oldest (created 599..200 minutes ago).
  const pending = kept.filter((s) => !s.ingressIPs).map((s) => Number(s.name.slice(4)) - 1000);
  assert.deepEqual(pending.sort((a, b) => a - b), Array.from({ length: 400 }, (_, i) => 200 + i));
  const complete =
    (plan.status!.conditions as { type: string; status: string; reason: string; message: string }[])
      .find((c) => c.type === "Complete")!;
  assert.equal(complete.reason, "Truncated");
  assert.match(complete.message, /^1200 LoadBalancer Services exceed the cap of 1000: 200 left out/);
  // Well under the API server's 1.5 MiB object limit even at the cap, with long names and dual stack.
  const long = Array.from({ length: 2000 }, (_, i) => ({
    namespace: "n".repeat(63),
    name: `s${String(i).padStart(62, "0")}`,
    createdAt: "2026-03-01T11:00:00Z",
    ingressIPs: ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff1", "255.255.255.255"],
  }));
  const big = planInventory({ services: long, invalid: [], health: WATCHING, now: NOW });
  const size =
    JSON.stringify(inventoryApply({ namespace: "t", name: "c", uid: "u" }, { spec: big.spec! })).length;
  assert.ok(size < 400_000, `worst-case inventory is ${size} bytes`);
});

Deno.test("the overflow of the reporter's own hold is reported as Truncated", () => {
  const plan = planInventory({ services: [], invalid: [], overflow: true, health: WATCHING, now: NOW });
  const complete = (plan.status!.conditions as { type: string; reason: string }[])[1]!;
  assert.equal(complete.reason, "Truncated");
});

const arbFact = fc.record({
  ns: fc.constantFrom("a", "b", "shop"),
  name: fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/),
  minute: fc.integer({ min: 0, max: 600 }),
  ip: fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }),
}).map((r) => ({
  namespace: r.ns,
  name: r.name,
  createdAt: new Date(NOW.getTime() - r.minute * 60_000).toISOString().replace(".000Z", "Z"),
  ingressIPs: r.ip === undefined ? [] : [`10.0.0.${r.ip}`],
}));
const unique = (
  facts: ReturnType<typeof arbFact.generate>["value"][],
) => [...new Map(facts.map((f) => [`${f.namespace}/${f.name}`, f])).values()];

Deno.test("properties: a written plan is a fixed point, order does not matter, unhealthy never writes spec", () => {
  fc.assert(
    fc.property(
      fc.array(arbFact, { maxLength: 30 }),
      fc.integer({ min: 0, max: 2000 }),
      fc.boolean(),
      (raw, seconds, countingDown) => {
        const services = unique(raw);
        const unusedSince = countingDown ? { "c-lb-2": "2026-01-01T00:00:00Z" } : {};
        const first = planInventory({ services, invalid: [], health: WATCHING, now: NOW, unusedSince });
        assert.ok(first.spec && first.status);
        // Stored as written, the same facts later change nothing until the heartbeat is due: after 45 s while a
        // decision waits on the demand (a Service pending, a release counting down), after 600 s otherwise.
        const later = new Date(NOW.getTime() + seconds * 1000);
        const again = planInventory({
          services: [...services].reverse(),
          invalid: [],
          health: WATCHING,
          previous: { spec: first.spec, status: first.status },
          now: later,
          unusedSince,
        });
        const awaited = countingDown || services.some((s) => s.ingressIPs.length === 0);
        assert.equal(again.status, undefined);
        assert.equal(again.spec !== undefined, seconds >= (awaited ? 45 : 600));
        if (again.spec) assert.equal(again.reason, "heartbeat");
        // While the tenant cannot be read, the stored spec is never touched, whatever the Services say.
        const down = planInventory({
          services: [],
          invalid: [],
          health: { state: "Unreachable", message: "down" },
          previous: { spec: first.spec, status: first.status },
          now: later,
        });
        assert.equal(down.spec, undefined);
        assert.equal(down.status?.services, first.status.services);
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("serviceFact: names over 63 characters are cut in the key, never echoed whole", () => {
  const r = serviceFact({
    metadata: { namespace: "x".repeat(5000), name: "y", creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { type: "LoadBalancer" },
  });
  assert.equal(r.kind, "invalid");
  assert.ok(
    r.kind === "invalid" && r.key.length < 70 && r.reason === "metadata.namespace is not a DNS label",
  );
});

Deno.test("MetalLB: the outcome of an apply is a fixed, classified condition; the tenant's words never", () => {
  const secret = "tenant text <script>".repeat(50);
  const cases: [number, string, string][] = [
    [404, "MetalLBNotInstalled", "HTTP 404"],
    [401, "Unauthorized", "HTTP 401"],
    [403, "Forbidden", "HTTP 403"],
    [422, "Rejected", "HTTP 422"],
    [400, "Rejected", "HTTP 400"],
    [503, "Unreachable", "HTTP 503"],
  ];
  for (const [status, reason, code] of cases) {
    const c = metallbCondition(metallbFailure(new KubeApiError(status, "Whatever", secret, "/apis/x")));
    assert.equal(c.status, "False");
    assert.equal(c.reason, reason);
    assert.ok(c.message.includes(code), c.message);
    assert.ok(!c.message.includes("tenant text"), c.message);
  }
  const network = metallbCondition(metallbFailure(new TypeError(secret)));
  assert.deepEqual([network.reason, network.message.includes("tenant text")], ["Unreachable", false]);
  // Connection failures by class, in fixed words whatever the error said.
  const at = (message: string, reason = "Unreachable") =>
    classifyTenantError(new KubeApiError(0, reason, `${message} ${secret}`, "/api"), "forbidden");
  assert.equal(at("invalid peer certificate: UnknownIssuer").reason, "TLSError");
  assert.equal(at("operation timed out", "Timeout").reason, "Timeout");
  assert.equal(at("Connection refused (os error 111)").reason, "Unreachable");
  // An answer within the caps whose parse the heap budget cannot hold (8 MiB of `{}`) is too large, as one past them.
  assert.equal(at("8387650 bytes of JSON whose parse could need", "TooCostly").reason, "TooLarge");
  for (const c of [at("invalid peer certificate"), at("x", "Timeout"), at("refused")]) {
    assert.ok(!c.message.includes("tenant text"), c.message);
  }
  const applied = metallbCondition({
    state: "Applied",
    addresses: ["10.40.2.0-10.40.2.1", "10.40.3.0-10.40.3.1"],
  });
  assert.equal(applied.status, "True");
  assert.match(applied.message, /holds 2 range\(s\): 10\.40\.2\.0-10\.40\.2\.1, 10\.40\.3\.0-10\.40\.3\.1/);
  assert.equal(metallbCondition({ state: "NoAddresses" }).status, "Unknown");
  assert.equal(metallbCondition({ state: "NotConnected" }).reason, "NotConnected");
});

Deno.test("planInventory holds the MetalLB condition, and a tenant without heartbeat writes no spec at rest", () => {
  const now = new Date("2026-03-01T12:00:00Z");
  const first = planInventory({
    services: [],
    invalid: [],
    health: { state: "Watching" },
    now,
    conditions: [metallbCondition({ state: "Applied", addresses: ["10.0.0.1-10.0.0.2"] })],
  });
  type Cond = { type: string; status: string; reason: string };
  const conds = (p: { status?: { conditions?: unknown } }) => (p.status?.conditions ?? []) as Cond[];
  assert.deepEqual(conds(first).map((c) => [c.type, c.status]), [
    ["Reporting", "True"],
    ["Complete", "True"],
    ["MetalLBApplied", "True"],
  ]);
  const later = planInventory({
    services: [],
    invalid: [],
    previous: { spec: first.spec, status: first.status },
    health: { state: "Watching" },
    now: new Date(now.getTime() + 3600_000),
    heartbeatSeconds: Infinity,
    conditions: [metallbCondition({ state: "Applied", addresses: ["10.0.0.1-10.0.0.2"] })],
  });
  assert.equal(later.spec, undefined, "static IPAM: no heartbeat");
  assert.equal(later.status, undefined, "nothing changed");
  const failed = planInventory({
    services: [],
    invalid: [],
    previous: { spec: first.spec, status: first.status },
    health: { state: "Watching" },
    now,
    conditions: [metallbCondition(metallbFailure(new KubeApiError(404, "NotFound", "", "/")))],
  });
  assert.equal(
    conds(failed).find((c) => c.type === "MetalLBApplied")?.reason,
    "MetalLBNotInstalled",
  );
});
