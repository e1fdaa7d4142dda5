/**
 * `kubectl butler pool show` on a pool of 20,000 grants (the ledger's maximum), with its 20,000 IPAllocations:
 * the report (ledger decode, capacity, grid) and its text, SVG and JSON. The goal: under 300 ms for the text.
 *
 *   npx -y deno@2.9.6 bench --allow-read --allow-env bench/pool_show_bench.ts
 */
import { poolSyncBody } from "./pool_data.ts";
import {
  type AllocationInfo,
  type PoolObject,
  poolReport,
  renderPoolSvg,
  renderPoolText,
} from "../cli/pool_show.ts";
import { count, RUNS, sized } from "./smoke.ts";

const GRANTS = sized(20_000, 100);
const body = JSON.parse(poolSyncBody(GRANTS, 0)) as {
  object: PoolObject;
  related: Record<string, Record<string, AllocationInfo>>;
};
const pool = body.object;
const allocations = Object.values(body.related["IPAllocation.butler.butlerlabs.dev/v1alpha1"]!);

function report() {
  const r = poolReport(pool, allocations);
  if (!r.ok) throw new Error(r.message);
  return r.report;
}
const rendered = renderPoolText(report());
if (!rendered.includes(String(GRANTS))) {
  throw new Error(`the benchmark pool does not have ${count(GRANTS)} grants`);
}

Deno.bench(`pool show, ${count(GRANTS)} grants: report and text`, {
  group: "pool show",
  baseline: true,
  ...RUNS,
}, () => {
  renderPoolText(report());
});
Deno.bench(`pool show, ${count(GRANTS)} grants: report and SVG`, { group: "pool show", ...RUNS }, () => {
  renderPoolSvg(report());
});
Deno.bench(`pool show, ${count(GRANTS)} grants: report and JSON`, { group: "pool show", ...RUNS }, () => {
  JSON.stringify(report());
});
