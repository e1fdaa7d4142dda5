/**
 * Probes `/healthz` and `/readyz` of `base` every 25 ms from its own process (so the load driver's own work never
 * shows up as probe latency), samples the resident memory of `pid`, and prints the results as one JSON line when
 * its stdin closes.
 */
const [base, pid] = Deno.args;
const probes: Record<string, number[]> = { "/healthz": [], "/readyz": [] };
let notReady = 0;
let peak = 0;
let stop = false;

function rss(): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

const loops = Object.keys(probes).map(async (path) => {
  while (!stop) {
    const start = performance.now();
    const res = await fetch(`${base}${path}`);
    await res.arrayBuffer();
    probes[path]!.push(performance.now() - start);
    if (path === "/readyz" && res.status !== 200) notReady++;
    await new Promise((r) => setTimeout(r, 25));
  }
});
const sampler = setInterval(() => (peak = Math.max(peak, rss())), 25);
await Deno.stdin.readable.pipeTo(new WritableStream());
stop = true;
clearInterval(sampler);
await Promise.all(loops);
console.log(JSON.stringify({ probes, notReady, peak }));
