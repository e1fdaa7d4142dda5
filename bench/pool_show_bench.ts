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

const body = JSON.parse(poolSyncBody(20_000, 0)) as {
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
if (!rendered.includes("20000")) throw new Error("the benchmark pool does not have 20,000 grants");

Deno.bench("pool show, 20,000 grants: report and text", { group: "pool show", baseline: true }, () => {
  renderPoolText(report());
});
Deno.bench("pool show, 20,000 grants: report and SVG", { group: "pool show" }, () => {
  renderPoolSvg(report());
});
Deno.bench("pool show, 20,000 grants: report and JSON", { group: "pool show" }, () => {
  JSON.stringify(report());
});
