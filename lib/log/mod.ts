/**
 * The processes' log lines: one JSON object per line with the time and level, plus the fields every line of a
 * process carries (the reporter says `component: "reporter"`).
 *
 * @module
 */

/** Writes JSON log lines. */
export interface ProcessLog {
  /** An `info` line on standard output. */
  info(record: Record<string, unknown>): void;
  /** An `error` line with `msg` on standard error, then exit 1: for what stops the process from starting. */
  fatal(message: string): never;
}

/**
 * A log whose lines all carry `fields`.
 *
 * @example
 * ```ts
 * const log = createProcessLog({ component: "reporter" });
 * log.info({ msg: "watching tenant", tenant: "team-a/web" });
 * ```
 */
export function createProcessLog(fields: Record<string, unknown> = {}): ProcessLog {
  const line = (level: string, record: Record<string, unknown>) =>
    JSON.stringify({ time: new Date().toISOString(), level, ...fields, ...record });
  return {
    info: (record) => console.log(line("info", record)),
    fatal(message) {
      console.error(line("error", { msg: message }));
      Deno.exit(1);
    },
  };
}
