import assert from "node:assert/strict";
import fc from "fast-check";
import { updatingGoldens } from "../lib/testing/mod.ts";
import { labAllocations, labGrants, labPool, testUid } from "../tests/cli/lab_pool.ts";
import { CELL_MARKS, COLUMNS, poolReport, renderPoolSvg, renderPoolText } from "./pool_show.ts";

const GOLDEN = new URL("../tests/cli/golden/", import.meta.url).pathname;
const uid = testUid;
const UIDS = [uid(1), uid(2), uid(3)];
const POOL = labPool(labGrants(UIDS));
const ALLOCATIONS = labAllocations(UIDS);

function golden(name: string, actual: string): void {
  const path = `${GOLDEN}${name}`;
  if (updatingGoldens()) Deno.writeTextFileSync(path, actual);
  assert.equal(actual, Deno.readTextFileSync(path), `${name} (UPDATE_GOLDEN=1 re-records it on purpose)`);
}

Deno.test("pool show", async (t) => {
  const r = poolReport(POOL, ALLOCATIONS);
  assert.ok(r.ok);
  await t.step("the figures are the controller's", () => {
    // 7 x 256 - 1 (10.40.7.255 is outside the tenant range) = 1791 allocatable; 29 granted.
    assert.equal(r.report.total, "1791");
    assert.equal(r.report.allocated, "29");
    assert.equal(r.report.utilisationPercent, 1);
    assert.equal(r.report.grants.length, 4);
  });
  await t.step("text, SVG and JSON, byte-identical to the goldens and between runs", () => {
    const text = renderPoolText(r.report);
    golden("pool_show.txt", text);
    golden("pool_show.svg", renderPoolSvg(r.report));
    golden("pool_show.json", JSON.stringify(r.report, null, 2) + "\n");
    const again = poolReport(POOL, ALLOCATIONS);
    assert.ok(again.ok);
    assert.equal(renderPoolText(again.report), text);
  });
  await t.step("releases: what is cooling down, and the last releases with their holders", () => {
    const status = {
      ...(POOL.status as Record<string, unknown>),
      releases: {
        total: 12,
        cooling: [{ range: "10.40.2.0-10.40.2.7", releasedAt: "2026-11-21T09:00:00Z" }],
        history: [
          {
            range: "10.40.2.0-10.40.2.7",
            holder: { kind: "IPAllocation", uid: "u-1", namespace: "team-a", name: "api-lb" },
            grantedAt: "2026-11-20T00:00:00Z",
            releasedAt: "2026-11-21T09:00:00Z",
          },
          {
            range: "10.40.3.0-10.40.3.3",
            holder: { kind: "IPAllocation", uid: "u-2" },
            grantedAt: "2026-11-19T00:00:00Z",
            releasedAt: "2026-11-20T09:00:00Z",
          },
          { range: "unreadable" },
        ],
      },
    };
    const withReleases = poolReport({ ...POOL, status }, ALLOCATIONS);
    assert.ok(withReleases.ok);
    assert.equal(withReleases.report.releases.history.length, 2, "an entry that does not read is left out");
    golden("pool_show_releases.txt", renderPoolText(withReleases.report));
  });
  await t.step("an empty pool, and one whose ledger does not read", () => {
    const empty = poolReport(labPool([]), []);
    assert.ok(empty.ok);
    assert.match(renderPoolText(empty.report), /utilisation 0% \(0\/1791 addresses\).*\n(.*\n)*no grants\n$/);
    const broken = poolReport({
      ...POOL,
      status: { ledger: { version: 2, base: "10.40.0.0", grants: ["zz"] } },
    }, []);
    assert.ok(!broken.ok);
    assert.match(broken.message, /^NetworkPool butler-system\/lab-pool: status\.ledger/);
    const badSpec = poolReport({ ...POOL, spec: { cidr: "10.40.0.0/33" } }, []);
    assert.ok(!badSpec.ok);
    assert.match(badSpec.message, /spec\.cidr: invalid pool CIDR/);
  });
  await t.step(
    "every granted address is drawn: a cell is free only when none of its addresses is granted",
    () => {
      fc.assert(
        fc.property(
          fc.uniqueArray(fc.integer({ min: 256, max: 2046 }), { minLength: 1, maxLength: 40 }),
          (starts) => {
            const sorted = [...starts].sort((a, b) => a - b);
            // Grants of one address each, anywhere in the tenant range.
            const grants = sorted.map((s, i): [string, number, string] => [
              `10.40.${Math.floor(s / 256)}.${s % 256}`,
              1,
              uid(i + 10),
            ]);
            const report = poolReport(labPool(grants), []);
            assert.ok(report.ok);
            const cells = report.report.rows.map((row) => row.cells).join("");
            const size = Number(report.report.cellSize);
            for (const s of sorted) {
              const mark = cells[Math.floor(s / size)];
              assert.ok(
                mark === CELL_MARKS.allocated || mark === CELL_MARKS.partial,
                `address offset ${s}: ${mark}`,
              );
            }
            assert.equal(
              cells.split("").filter((m) => m === CELL_MARKS.allocated || m === CELL_MARKS.partial).length,
              new Set(sorted.map((s) => Math.floor(s / size))).size,
            );
            assert.ok(report.report.rows.every((row) => row.cells.length <= COLUMNS));
          },
        ),
        { numRuns: 100 },
      );
    },
  );
});
