/**
 * The smoke run of every load task of deno.json (`deno task test:smoke`, tests/smoke/run.ts): small flags, the
 * figures its `--json` result must hold, and how long it may take.
 *
 * @module
 */

/** A load task's smoke run: its small flags (`--json=FILE` is added) and the figures its result must hold. */
export interface LoadSmoke {
  readonly args: readonly string[];
  readonly figures: readonly string[];
  /** Seconds before the run is stopped and failed. */
  readonly timeout: number;
}

/** The smoke run of every load task of deno.json. */
export const LOAD_SMOKE: Readonly<Record<string, LoadSmoke>> = {
  load: {
    args: ["--grants=200", "--clusters=50", "--burst=4", "--clients=2", "--requests=2", "--seconds=1"],
    figures: ["burst.answered", "burst.healthzP99Ms", "team.p99Ms", "throughput.perSecond", "peakRssMiB"],
    timeout: 120,
  },
  "load:pool": {
    args: ["--runs=3", "--grants=100"],
    figures: ["cases.0.medianMs", "cases.1.medianMs"],
    timeout: 60,
  },
  "load:admission": {
    args: ["--concurrency=5", "--creates=20", "--start=5", "--requests=4", "--memory=0"],
    figures: [
      "baseline.perSecond",
      "variants.base.creates.throughputRatio",
      "variants.base.creates.p99Ratio",
      "variants.base.listReviews.p99Ms",
      "variants.base.overshoot",
      "variants.base.contentionRefusals",
      "variants.webhook-client-auth.creates.throughputRatio",
      "variants.webhook-client-auth.creates.p99Ratio",
      "variants.webhook-client-auth.listReviews.p99Ms",
      "variants.webhook-client-auth.overshoot",
      "variants.webhook-client-auth.contentionRefusals",
    ],
    timeout: 300,
  },
  "load:reporter": {
    args: ["--tenants=3", "--services=2", "--seconds=2"],
    figures: ["rssMiB.median", "cpuPercentOfOneCore", "inventoryWritesPerMinute"],
    timeout: 240,
  },
  "load:webhook-auth": {
    args: ["--reviews=20"],
    figures: ["keepAlive.medianCostMs", "newConnection.medianCostMs"],
    timeout: 60,
  },
};
