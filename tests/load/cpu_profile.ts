/**
 * V8 CPU profiles of a process started with `--inspect=127.0.0.1:PORT`, through the inspector's protocol, and a
 * reading of them by function. Unlike V8's tick logs (`--prof`), a builtin (JSON, a Map, a RegExp) counts toward
 * the function that called it, so the time a Deno binary without symbols spends is attributed.
 *
 *   npx -y deno@2.9.6 run --allow-read tests/load/cpu_profile.ts FILE.cpuprofile [--top=30] [--under=NAME]
 *
 * prints the functions with the most self time and the most total time (a sample counts once per function on
 * its stack); `--under=NAME` reads only the samples whose stack holds a function of that name.
 *
 * @module
 */

/** A CPU profile as the inspector's `Profiler.stop` returns it. */
export interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: {
      readonly functionName: string;
      readonly url: string;
      readonly lineNumber: number;
    };
    readonly children?: readonly number[];
  }[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/**
 * Starts sampling the process whose inspector listens on `port`; `stop()` ends it and returns the profile.
 *
 * @example
 * ```ts
 * const profiler = await startCpuProfile(9229);
 * // ... load ...
 * Deno.writeTextFileSync("service.cpuprofile", JSON.stringify(await profiler.stop()));
 * ```
 */
export async function startCpuProfile(
  port: number,
  intervalMicros = 250,
): Promise<{ stop(): Promise<CpuProfile> }> {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json() as {
    webSocketDebuggerUrl: string;
  }[];
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  const pending = new Map<number, (result: unknown) => void>();
  ws.onmessage = (e) => {
    const message = JSON.parse(String(e.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  };
  let id = 0;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      pending.set(++id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  await call("Profiler.enable");
  await call("Profiler.setSamplingInterval", { interval: intervalMicros });
  await call("Profiler.start");
  return {
    async stop() {
      const { profile } = await call("Profiler.stop") as { profile: CpuProfile };
      ws.close();
      return profile;
    },
  };
}

/** Milliseconds by function (`name url:line`), self and total, heaviest first. */
export function profileByFunction(
  profile: CpuProfile,
  under?: string,
): { totalMs: number; self: [string, number][]; total: [string, number][] } {
  const parent = new Map<number, number>();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id: number) => {
    const f = byId.get(id)!.callFrame;
    const file = f.url.replace(/^.*\/(main|node_modules|registry\.npmjs\.org)\//, "");
    return `${f.functionName || "(anonymous)"} ${file}${f.url ? `:${f.lineNumber + 1}` : ""}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalMs = 0;
  profile.samples.forEach((sample, i) => {
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const stack: string[] = [];
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) stack.push(label(id));
    if (under && !stack.some((l) => l.startsWith(`${under} `))) return;
    totalMs += ms;
    self.set(stack[0]!, (self.get(stack[0]!) ?? 0) + ms);
    for (const l of new Set(stack)) total.set(l, (total.get(l) ?? 0) + ms);
  });
  const heaviest = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { totalMs, self: heaviest(self), total: heaviest(total) };
}

if (import.meta.main) {
  const [file, ...rest] = Deno.args;
  if (!file) throw new Error("usage: cpu_profile.ts FILE.cpuprofile [--top=30] [--under=NAME]");
  const top = Number(rest.find((a) => a.startsWith("--top="))?.slice(6) ?? 30);
  const under = rest.find((a) => a.startsWith("--under="))?.slice(8);
  const r = profileByFunction(JSON.parse(Deno.readTextFileSync(file)), under);
  const show = (title: string, rows: [string, number][]) => {
    console.log(`\n${title} (of ${r.totalMs.toFixed(0)} ms sampled)`);
    for (const [name, ms] of rows.slice(0, top)) {
      console.log(
        `${ms.toFixed(1).padStart(9)} ms ${((ms / r.totalMs) * 100).toFixed(1).padStart(5)} %  ${name}`,
      );
    }
  };
  show("self", r.self);
  show("total", r.total);
}
