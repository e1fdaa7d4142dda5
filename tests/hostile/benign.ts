/**
 * The benign side of the hostile tier: a team whose Team syncs (as Metacontroller sends them) and TenantCluster
 * reviews (dry runs that read its Team, clusters and ledger) run one after another while an adversary works, and a
 * probe of `/readyz`; what each answered and when, so that a phase's p99 can be set against a quiet one measured
 * in the same run, and an answer that says the service cannot decide against what `/readyz` said at the time.
 *
 * @module
 */
import { teamShapeSyncBody } from "../../bench/team_data.ts";
import { cluster, installManifests, kubectlOk } from "../api/cluster.ts";
import { client, pki, ready, shippedServiceDir, type Started, startShipped } from "../api/shipped.ts";
import { percentile } from "./measure.ts";

/** The hook Deployment's memory limit (manifests/hooks/deployment.yaml): 768Mi. */
export const POD_LIMIT_BYTES = 768 * 1024 * 1024;

const fixture = (name: string) =>
  JSON.parse(Deno.readTextFileSync(new URL(`../fixtures/${name}`, import.meta.url)));

/** The benign team of the dry-run review fixture, stored (Team, namespace, ProviderConfig, clusters); its review. */
export async function benignTeam(): Promise<Record<string, unknown>> {
  const reads = fixture("tenantcluster/admission/payments-dry-run-writes-nothing/reads.json") as Record<
    string,
    { items?: unknown[]; metadata?: Record<string, unknown> }
  >;
  const strip = (o: Record<string, unknown>) => {
    const { metadata, status: _status, ...rest } = o as {
      metadata: Record<string, unknown>;
      status?: unknown;
    };
    const { resourceVersion: _rv, uid: _uid, creationTimestamp: _c, ...meta } = metadata;
    return { ...rest, metadata: meta };
  };
  const objects = Object.values(reads).flatMap((r) => r.items ?? [r]) as Record<string, unknown>[];
  await kubectlOk(["apply", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "team-payments", labels: { "butler.butlerlabs.dev/team": "payments" } },
    }),
  });
  for (const o of objects) await kubectlOk(["apply", "-f", "-"], { stdin: JSON.stringify(strip(o)) });
  return fixture("tenantcluster/admission/payments-dry-run-writes-nothing/request.json");
}

/** The benign team's Team sync, as Metacontroller sends it: 10 members, 2 environments, 20 clusters observed. */
export function benignTeamSync(): Uint8Array {
  return new TextEncoder().encode(teamShapeSyncBody({
    users: 10,
    groups: 0,
    environments: 2,
    environmentUsers: 2,
    environmentGroups: 0,
  }, 20));
}

/** A review of the benign team's fixture, with a fresh uid. */
export function benignReview(fixtureReview: Record<string, unknown>): () => Uint8Array {
  return () =>
    new TextEncoder().encode(JSON.stringify({
      ...fixtureReview,
      request: { ...(fixtureReview as { request: object }).request, uid: crypto.randomUUID() },
    }));
}

/** One benign call: when it started and ended (ms, `performance.now()`), its status (0: no answer) and text. */
export interface Call {
  readonly at: number;
  readonly end: number;
  readonly ms: number;
  readonly status: number;
  readonly text: string;
}

/** Benign calls sent one after another until stopped. */
export interface Loop {
  readonly latencies: { at: number; ms: number }[];
  readonly failures: string[];
  readonly calls: Call[];
  /**
   * Holds the loop (no calls) until `resume`, once the call in flight is answered: while the process it calls is
   * restarted on purpose.
   */
  pause(): Promise<void>;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Sends `body` to `url()` (read before each call: a restarted process listens elsewhere) one call after another
 * until stopped, recording each call, and the answers that are not 200 as failures.
 */
export function benignLoop(url: string | (() => string), body: () => Uint8Array, as?: string): Loop {
  const c = client(as);
  const latencies: { at: number; ms: number }[] = [];
  const failures: string[] = [];
  const calls: Call[] = [];
  let running = true;
  let paused = false;
  let idle = Promise.resolve();
  let settle = () => {};
  const where = typeof url === "string" ? () => url : url;
  const done = (async () => {
    while (running) {
      if (paused) {
        settle();
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const started = performance.now();
      let status = 0;
      let text = "";
      try {
        const res = await fetch(where(), {
          client: c,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: body() as Uint8Array<ArrayBuffer>,
          signal: AbortSignal.timeout(20_000),
        });
        text = (await res.text()).slice(0, 300);
        status = res.status;
        if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
      } catch (err) {
        text = String(err).slice(0, 300);
        failures.push(text);
      }
      const end = performance.now();
      latencies.push({ at: started, ms: end - started });
      calls.push({ at: started, end, ms: end - started, status, text });
    }
  })();
  return {
    latencies,
    failures,
    calls,
    pause() {
      idle = new Promise<void>((r) => settle = r);
      paused = true;
      return Promise.race([idle, done]);
    },
    resume: () => paused = false,
    async stop() {
      running = false;
      await done;
      c.close();
    },
  };
}

/** One `/readyz` answer: when it was asked and when it came (ms, `performance.now()`), and whether it said ready. */
export interface Probe {
  readonly started: number;
  readonly at: number;
  readonly ready: boolean;
  readonly text: string;
}

/** A probe of `/readyz`: its answers, and those that were not 200. */
export interface Readiness {
  readonly probes: number;
  readonly failed: string[];
  readonly samples: Probe[];
  /** The most failures in a row. */
  readonly longestFailing: number;
  /**
   * The longest time from a failure to the next success, in ms: the kubelet (period 5 s, 3 failures) turns a pod
   * unready once failures span 10 s.
   */
  readonly longestFailingMs: number;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

/**
 * Probes `/readyz` of `target` (a URL, one read before each probe, or a started service's hooks listener) every
 * 250 ms until stopped; counts the answers that are not 200. `fresh`: a new connection for every probe, as the
 * kubelet's.
 */
export function readinessProbe(
  target: string | (() => string) | Pick<Started, "hooks">,
  o: { fresh?: boolean } = {},
): Readiness {
  const c = o.fresh ? Deno.createHttpClient({ caCerts: [pki("ca.crt")], poolMaxIdlePerHost: 0 }) : client();
  const where = typeof target === "string"
    ? () => target
    : typeof target === "function"
    ? target
    : () => target.hooks;
  let probes = 0;
  const failed: string[] = [];
  const samples: Probe[] = [];
  let running = true;
  let paused = false;
  const done = (async () => {
    while (running) {
      if (!paused) {
        probes++;
        let text = "";
        let ready = false;
        const started = performance.now();
        try {
          const res = await fetch(`${where()}/readyz`, { client: c, signal: AbortSignal.timeout(2000) });
          text = (await res.text()).slice(0, 300);
          ready = res.status === 200;
          if (!ready) failed.push(`${res.status} ${text}`);
        } catch (err) {
          text = String(err).slice(0, 300);
          failed.push(text);
        }
        samples.push({ started, at: performance.now(), ready, text });
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    get probes() {
      return probes;
    },
    get longestFailing() {
      return failingRuns(samples).reduce((n, run) => Math.max(n, run.length), 0);
    },
    get longestFailingMs() {
      return Math.round(
        failingRuns(samples).reduce((ms, run) => Math.max(ms, run.at(-1)!.at - run[0]!.started), 0),
      );
    },
    failed,
    samples,
    pause: () => paused = true,
    resume: () => paused = false,
    async stop() {
      running = false;
      await done;
      c.close();
    },
  };
}

/** The runs of probes in a row that did not say ready. */
function failingRuns(samples: readonly Probe[]): Probe[][] {
  const runs: Probe[][] = [];
  let run: Probe[] = [];
  for (const s of samples) {
    if (s.ready) {
      if (run.length) runs.push(run);
      run = [];
    } else run.push(s);
  }
  if (run.length) runs.push(run);
  return runs;
}

/** The calls of a loop that started in `[from, to)`. */
export function phase(l: Loop, from: number, to: number): { at: number; ms: number }[] {
  return l.latencies.filter((x) => x.at >= from && x.at < to);
}

/** A phase's p99 and p50 against the quiet phase's, and the ratio of the p99s. */
export interface AgainstQuiet {
  readonly calls: { quiet: number; phase: number };
  readonly p99Ms: { quiet: number; phase: number };
  readonly p50Ms: { quiet: number; phase: number };
  readonly ratio: number;
}

/** p99 and p50 of a loop in a phase against a quiet one, and their ratio. */
export function againstQuiet(l: Loop, quiet: [number, number], under: [number, number]): AgainstQuiet {
  const q = phase(l, ...quiet).map((x) => x.ms);
  const a = phase(l, ...under).map((x) => x.ms);
  const [q99, a99] = [percentile(q, 99), percentile(a, 99)];
  return {
    calls: { quiet: q.length, phase: a.length },
    p99Ms: { quiet: +q99.toFixed(1), phase: +a99.toFixed(1) },
    p50Ms: { quiet: +percentile(q, 50).toFixed(1), phase: +percentile(a, 50).toFixed(1) },
    ratio: +(a99 / q99).toFixed(2),
  };
}

/**
 * The answers that said the service cannot decide (a 503 of its admission cache: not listed, behind, or the API
 * unreachable through it) while `/readyz` said ready on both sides of the call: the last probe before it ended and
 * the first after it both answered 200.
 */
export function readinessLies(calls: readonly Call[], samples: readonly Probe[]): Call[] {
  const undecided = (c: Call) =>
    c.status === 503 && /CacheNotSynced|CacheBehind|cannot reach the API/.test(c.text);
  return calls.filter(undecided).filter((c) => {
    const before = samples.findLast((s) => s.at <= c.end);
    const after = samples.find((s) => s.at > c.end);
    return before?.ready === true && after?.ready === true;
  });
}

/**
 * A loop's calls in the quiet phase and under attack (`[from, to)` in `performance.now()` ms): counts, failures, p50
 * and p99, and the ratio of the p99s.
 */
export function latencySummary(
  l: Loop,
  quiet: readonly [number, number],
  attack: readonly [number, number],
): {
  calls: { quiet: number; attack: number };
  failures: number;
  p99Ms: { quiet: number; attack: number };
  p50Ms: { quiet: number; attack: number };
  ratio: number;
} {
  const q = againstQuiet(l, [...quiet], [...attack]);
  const attackOf = <T extends { quiet: number; phase: number }>(x: T) => ({
    quiet: x.quiet,
    attack: x.phase,
  });
  return {
    calls: attackOf(q.calls),
    failures: l.failures.length,
    p99Ms: attackOf(q.p99Ms),
    p50Ms: attackOf(q.p50Ms),
    ratio: q.ratio,
  };
}

/**
 * The benign team's calls, one after another until stopped: Team syncs of a 10-member Team as Metacontroller (its
 * client certificate) on the hooks' listener, and dry-run reviews of `reviewFixture` (a new UID each) as the API
 * server on the webhooks'.
 */
export function benignCalls(
  service: Started,
  reviewFixture: Record<string, unknown>,
): { hooks: Loop; reviews: Loop } {
  const teamBody = benignTeamSync();
  return {
    hooks: benignLoop(`${service.hooks}/hooks/team/sync`, () => teamBody, "metacontroller"),
    reviews: benignLoop(`${service.webhooks}/webhooks/validate/tenantcluster`, benignReview(reviewFixture)),
  };
}

/**
 * The manifests installed, the benign team stored, and the service started as shipped and ready: the service, the
 * review fixture of the benign team, and whether the process has exited since.
 */
export async function startWithBenignTeam(): Promise<{
  service: Started;
  reviewFixture: Record<string, unknown>;
  exited: () => boolean;
}> {
  await installManifests();
  const reviewFixture = await benignTeam();
  const { dir } = await shippedServiceDir();
  const service = await startShipped(dir, new URL(cluster().server).host);
  let exited = false;
  service.child.status.then(() => exited = true);
  if (!await ready(service)) throw new Error(`the service did not become ready:\n${service.log()}`);
  return { service, reviewFixture, exited: () => exited };
}
