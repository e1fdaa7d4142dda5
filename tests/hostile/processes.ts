/**
 * The shipped processes of the hostile tier, kept running as the kubelet keeps a pod's container: started with
 * their shipped command lines and heap caps, restarted a moment after an exit nobody asked for, each exit counted
 * with whether V8 ran out of memory (its code, and its message in the log), and the peak resident memory of every
 * incarnation sampled while it ran.
 *
 * @module
 */
import { parse } from "yaml";
import { b64 } from "../api/tenant.ts";
import {
  cluster,
  denoDir,
  freePort,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "../api/cluster.ts";
import { client, pki, ready, shippedServiceDir, startShipped } from "../api/shipped.ts";
import { residentPeak } from "./measure.ts";

/** One run of a process. */
export interface Incarnation {
  readonly started: number;
  ended?: number;
  code?: number;
  signal?: string | null;
  /** Ended because the tier stopped it. */
  planned: boolean;
  /** V8 said it ran out of heap (in the log), or the process ended as V8 ends one (SIGTRAP/SIGABRT). */
  oom: boolean;
  /** The last lines of its log, when it ended unasked. */
  tail?: string;
}

/** A process as the tier reaches it: where it listens, its log, its child. */
export interface Running {
  readonly url: string;
  readonly webhooks?: string;
  readonly child: Deno.ChildProcess;
  readonly log: () => string;
}

/** A supervised process. */
export interface Supervised {
  /** The running incarnation (after a restart, a new one, listening elsewhere). */
  readonly current: Running;
  readonly incarnations: readonly Incarnation[];
  /** Exits nobody asked for, and those of them that were out of memory. */
  exits(): { exits: number; outOfMemory: number; codes: (number | undefined)[] };
  /** The highest peak resident memory of any incarnation, in bytes. */
  peakResident(): number;
  /** The highest resident memory sampled (every 250 ms) in `[from, to)` (`performance.now()`), in bytes. */
  residentIn(from: number, to: number): number;
  /** Stops the running incarnation and starts another (not counted as an exit). */
  restart(): Promise<void>;
  /** Stops it for good; the last incarnation's exit code. */
  stop(): Promise<number | undefined>;
}

const OOM = /out of memory|Reached heap limit|heap limit|OOM/i;

/** The resident memory of a process now (`VmRSS`), in bytes; NaN once it is gone. */
function resident(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(Deno.readTextFileSync(`/proc/${pid}/status`))?.[1] ?? NaN) * 1024;
  } catch {
    return NaN;
  }
}

/**
 * Starts `start()` and keeps it running: an exit not asked for is recorded and followed by a new incarnation
 * after `restartDelayMs`.
 */
export async function supervise(
  start: () => Promise<Running>,
  restartDelayMs = 1000,
): Promise<Supervised> {
  const incarnations: Incarnation[] = [];
  let current = await start();
  let peak = 0;
  let stopping = false;
  let restarting: Promise<void> | undefined;
  const samples: { at: number; rss: number }[] = [];
  const sampler = setInterval(() => {
    const p = residentPeak(current.child.pid);
    if (Number.isFinite(p)) peak = Math.max(peak, p);
    const rss = resident(current.child.pid);
    if (Number.isFinite(rss)) samples.push({ at: performance.now(), rss });
  }, 250);

  function watch(run: Running): Incarnation {
    const inc: Incarnation = { started: performance.now(), planned: false, oom: false };
    const logFrom = run.log().length;
    incarnations.push(inc);
    run.child.status.then(async (status) => {
      inc.ended = performance.now();
      inc.code = status.code;
      inc.signal = status.signal;
      const text = run.log().slice(logFrom);
      inc.oom = OOM.test(text) || status.signal === "SIGTRAP" || status.signal === "SIGABRT" ||
        status.code === 133 || status.code === 134;
      if (inc.planned || stopping) return;
      inc.tail = text.slice(-2000);
      await new Promise((r) => setTimeout(r, restartDelayMs));
      if (stopping || inc.planned) return;
      restarting = (async () => {
        current = await start();
        watch(current);
      })();
      await restarting;
    });
    return inc;
  }
  let running = watch(current);

  async function halt(): Promise<number | undefined> {
    const inc = incarnations.at(-1)!;
    inc.planned = inc.ended === undefined;
    const run = current;
    try {
      run.child.kill("SIGTERM");
    } catch { /* gone */ }
    const status = await run.child.status;
    const p = residentPeak(run.child.pid);
    if (Number.isFinite(p)) peak = Math.max(peak, p);
    return status.code;
  }

  return {
    get current() {
      return current;
    },
    incarnations,
    exits() {
      const unasked = incarnations.filter((i) => i.ended !== undefined && !i.planned);
      return {
        exits: unasked.length,
        outOfMemory: unasked.filter((i) => i.oom).length,
        codes: unasked.map((i) => i.code),
      };
    },
    peakResident: () => peak,
    residentIn: (from, to) =>
      samples.filter((x) => x.at >= from && x.at < to).reduce((m, x) => Math.max(m, x.rss), 0),
    async restart() {
      await restarting;
      await halt();
      current = await start();
      running = watch(current);
    },
    async stop() {
      stopping = true;
      await restarting;
      const code = await halt();
      clearInterval(sampler);
      void running;
      return code;
    },
  };
}

/** Starts the shipped hook service (both listeners, its admission cache watching the test control plane). */
export async function shippedService(): Promise<() => Promise<Running>> {
  const { dir } = await shippedServiceDir();
  return async () => {
    const s = await startShipped(dir, new URL(cluster().server).host);
    // Ready or not: a service that cannot become ready is what the tier measures, not a failure to start.
    await ready(s);
    return { url: s.hooks, webhooks: s.webhooks, child: s.child, log: s.log };
  };
}

/** The reporter's ServiceAccount and RBAC, as its component ships them. */
export async function installReporterRbac(): Promise<void> {
  await kubectlOk([
    "apply",
    "-f",
    `${ROOT}/manifests/components/reporter/serviceaccount.yaml`,
    "-f",
    `${ROOT}/manifests/components/reporter/rbac.yaml`,
  ]);
}

/** The reporter Deployment's container: its args and environment. */
function reporterContainer() {
  return (parse(Deno.readTextFileSync(`${ROOT}/manifests/components/reporter/deployment.yaml`)) as {
    spec: {
      template: {
        spec: {
          containers: {
            args: string[];
            env: { name: string; value?: string }[];
            resources: { limits: { memory: string } };
          }[];
        };
      };
    };
  }).spec.template.spec.containers[0]!;
}

/** The reporter Deployment's memory limit, in bytes. */
export function reporterMemoryLimit(): number {
  const limit = reporterContainer().resources.limits.memory;
  const m = /^(\d+)(Mi|Gi)$/.exec(limit);
  if (!m) throw new Error(`the reporter's memory limit ${limit} is not in Mi or Gi`);
  return Number(m[1]) * (m[2] === "Gi" ? 1024 ** 3 : 1024 ** 2);
}

/**
 * Starts the shipped reporter (its args, its environment with the heap cap, a token of its ServiceAccount) against
 * the test control plane; `env` overrides its environment.
 */
export async function shippedReporter(env: Record<string, string> = {}): Promise<() => Promise<Running>> {
  const dir = await Deno.makeTempDir();
  const token =
    (await kubectlOk(["create", "token", "butler-reporter", "-n", "butler-system", "--duration=2h"]))
      .trim();
  Deno.writeTextFileSync(
    `${dir}/kubeconfig`,
    tokenKubeconfig(cluster().server, token, { caData: b64(pki("ca.crt")) }),
  );
  const container = reporterContainer();
  const cache = await denoDir();
  const args = container.args.map((a) =>
    mapShipped(a, [["/var/run/secrets/kubernetes.io/serviceaccount", dir], ["/deno-dir", cache], [
      "/app",
      ROOT,
    ]])
  );
  const shipped = Object.fromEntries(
    container.env.flatMap((e) => e.value === undefined ? [] : [[e.name, e.value]]),
  );
  const log = `${dir}/reporter.log`;
  return async () => {
    const port = freePort();
    const child = spawnLogged([Deno.execPath(), ...args], log, {
      ...shipped,
      KUBECONFIG: `${dir}/kubeconfig`,
      HOSTNAME: "hostile-reporter",
      POD_NAMESPACE: "butler-system",
      HOST: "127.0.0.1",
      PORT: String(port),
      ...env,
    });
    const url = `http://127.0.0.1:${port}`;
    const c = client();
    for (let i = 0; i < 150; i++) {
      try {
        const res = await fetch(`${url}/readyz`, { client: c });
        await res.body?.cancel();
        if (res.ok) break;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 100));
    }
    c.close();
    return { url, child, log: () => Deno.readTextFileSync(log) };
  };
}
