/**
 * The processes of a scale run, killed and restarted as faults, with their CPU and peak memory added up over every
 * incarnation; and a TCP balancer that spreads connections over the hook service's processes as a Service spreads
 * them over a Deployment's Pods (TLS passes through: the processes serve it).
 *
 * @module
 */
import { cpuSeconds, statusMiB } from "../load/proc.ts";

/** A running process: its ID, and how to stop it with a signal (resolving once it has ended). */
export interface Running {
  readonly pid: number;
  stop(signal: Deno.Signal): Promise<void>;
}

/** A child process as {@linkcode Running}. */
export function running(child: Deno.ChildProcess): Running {
  return {
    pid: child.pid,
    stop: async (signal) => {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      await child.status;
    },
  };
}

/** A process that may be killed and started again; CPU and peak resident memory over all of its lives. */
export class Tracked {
  readonly name: string;
  #start: () => Running | Promise<Running>;
  #child: Running | undefined;
  #cpu = 0;
  #peak = 0;
  #sampler: ReturnType<typeof setInterval>;

  constructor(name: string, start: () => Running | Promise<Running>) {
    this.name = name;
    this.#start = start;
    // VmHWM is lost with the process: sample it while it lives.
    this.#sampler = setInterval(() => this.#sample(), 1000);
  }

  /** Starts it (again). */
  async start(): Promise<void> {
    this.#child = await this.#start();
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  #sample(): number | undefined {
    const pid = this.#child?.pid;
    if (pid === undefined) return undefined;
    const peak = statusMiB(pid, "VmHWM");
    if (peak !== undefined) this.#peak = Math.max(this.#peak, peak);
    return cpuSeconds(pid);
  }

  /** Stops it with `signal` and waits for it to end. */
  async stop(signal: Deno.Signal = "SIGTERM"): Promise<void> {
    const child = this.#child;
    if (!child) return;
    this.#cpu += this.#sample() ?? 0;
    await child.stop(signal);
    this.#child = undefined;
  }

  /** CPU seconds and peak resident MiB over every life so far (the current one included). */
  usage(): { cpuSeconds: number; peakRssMiB: number } {
    const now = this.#sample() ?? 0;
    return { cpuSeconds: round(this.#cpu + now), peakRssMiB: round(this.#peak) };
  }

  /** Stops it for good. */
  async close(): Promise<void> {
    await this.stop("SIGKILL");
    clearInterval(this.#sampler);
  }
}

const round = (v: number) => Math.round(v * 10) / 10;

/** Adds up the usage of several processes: CPU summed, peak the largest. */
export function totalUsage(processes: readonly Tracked[]): { cpuSeconds: number; peakRssMiB: number } {
  const all = processes.map((p) => p.usage());
  return {
    cpuSeconds: round(all.reduce((s, u) => s + u.cpuSeconds, 0)),
    peakRssMiB: Math.max(0, ...all.map((u) => u.peakRssMiB)),
  };
}

/**
 * Listens on a free loopback port and passes each connection to the next of `ports` in turn that accepts it, as
 * kube-proxy does for a Service; a process being restarted is skipped.
 */
export function balancer(ports: readonly number[]): { port: number; close: () => void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let next = 0;
  const pass = async (conn: Deno.Conn) => {
    for (let tried = 0; tried < ports.length; tried++) {
      const port = ports[next++ % ports.length]!;
      let up: Deno.Conn;
      try {
        up = await Deno.connect({ hostname: "127.0.0.1", port });
      } catch {
        continue;
      }
      await Promise.all([
        conn.readable.pipeTo(up.writable).catch(() => {}),
        up.readable.pipeTo(conn.writable).catch(() => {}),
      ]);
      return;
    }
    conn.close();
  };
  (async () => {
    try {
      for await (const conn of listener) pass(conn);
    } catch { /* closed */ }
  })();
  return { port: (listener.addr as Deno.NetAddr).port, close: () => listener.close() };
}
