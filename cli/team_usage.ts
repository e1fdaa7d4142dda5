/**
 * `kubectl butler team usage`: a Team's quota as bars, one per measured dimension (clusters, worker nodes, CPU,
 * memory, storage; each environment; each member where an environment caps clusters per member; each
 * ProviderConfig with per-team limits), judged by the Team hook's own `computeUsage`, so the bars and the Team's
 * `quotaStatus` (80 % warning, above 100 % exceeded) never disagree. Pure: the usage in, text out.
 *
 * @module
 */
import type { Measure, QuotaStatus, Usage } from "../hooks/team/usage.ts";
import { type Colour, type Paint, plain } from "./colour.ts";

/** Characters of a bar. */
export const BAR_WIDTH = 30;

const STATE_WORDS: Record<QuotaStatus, string> = { OK: "", Warning: "near limit", Exceeded: "over limit" };
const STATE_COLOURS: Record<QuotaStatus, Colour> = { OK: "green", Warning: "yellow", Exceeded: "red" };

/** `[#####.........]` for a percentage (capped at full). */
export function bar(percent: number): string {
  const filled = Math.min(BAR_WIDTH, Math.floor((Math.min(percent, 100) * BAR_WIDTH) / 100));
  return `[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}]`;
}

/** The measures a person wants to see: all but per-cluster ones that are within their limit. */
export function shownMeasures(measures: readonly Measure[]): Measure[] {
  return measures.filter((m) => m.scope !== "cluster" || m.state !== "OK");
}

/**
 * The usage of Team `team` as text: the verdict, then a line per measure with its bar.
 *
 * @example
 * ```ts
 * renderUsageText("payments", computeUsage(spec, clusters, providers));
 * ```
 */
export function renderUsageText(team: string, usage: Usage, paint: Paint = plain): string {
  const rows = [
    ["DIMENSION", "USED", "LIMIT", "USE"],
    ...shownMeasures(usage.measures).map((m) => [
      m.label,
      m.used,
      m.limit ?? "-",
      m.percent === undefined
        ? "no limit"
        : `${bar(m.percent)} ${String(m.percent).padStart(3)}%${
          STATE_WORDS[m.state] ? `  ${paint(STATE_WORDS[m.state], STATE_COLOURS[m.state])}` : ""
        }`,
    ]),
  ];
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => r[c]!.length)));
  return [
    `Team ${team}  quota ${
      paint(usage.quotaStatus, STATE_COLOURS[usage.quotaStatus])
    }: ${usage.quotaMessage}`,
    "",
    ...rows.map((r) => r.map((v, c) => (c < 3 ? v.padEnd(widths[c]!) : v)).join("  ").trimEnd()),
  ].join("\n") + "\n";
}

/** The usage as JSON for scripts: the verdict and every measure. */
export function usageJson(team: string, usage: Usage): unknown {
  return { team, quotaStatus: usage.quotaStatus, quotaMessage: usage.quotaMessage, measures: usage.measures };
}
