/**
 * What `/proc` says of a process, for the load scripts and the real controller tiers: CPU used and memory.
 *
 * @module
 */

/** CPU seconds a process has used (user + system, from /proc), or undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime: clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** A `/proc/<pid>/status` memory field (VmRSS, VmHWM) in MiB, or undefined once the process is gone. */
export function statusMiB(pid: number, field: "VmRSS" | "VmHWM"): number | undefined {
  try {
    const line = Deno.readTextFileSync(`/proc/${pid}/status`).split("\n").find((l) =>
      l.startsWith(`${field}:`)
    );
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}
