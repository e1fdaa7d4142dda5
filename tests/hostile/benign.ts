/**
 * What the hostile tier's service scenarios share: a benign team (its Team, namespace, ProviderConfig and clusters
 * stored on the test control plane, and the dry-run review of one more cluster), loops of benign calls that record
 * their latency and failures, and a readiness probe.
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

/** The benign team of the dry-run review fixture: its Team, namespace, ProviderConfig and clusters. */
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

/** Benign calls one after another: when each started and how long it took, and the answers that were not 200. */
export interface Loop {
  readonly latencies: { at: number; ms: number }[];
  readonly failures: string[];
  stop(): Promise<void>;
}

/** Sends `body` to `url` one call after another until stopped, recording latency and non-200 answers. */
export function benignLoop(url: string, body: () => Uint8Array, as?: string): Loop {
  const c = client(as);
  const latencies: { at: number; ms: number }[] = [];
  const failures: string[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(url, {
          client: c,
          method: "POST",
          headers: { "content-type": "application/json" },
          body: body() as Uint8Array<ArrayBuffer>,
          signal: AbortSignal.timeout(20_000),
        });
        const text = await res.text();
        if (res.status !== 200) failures.push(`${res.status} ${text.slice(0, 200)}`);
      } catch (err) {
        failures.push(String(err));
      }
      latencies.push({ at: started, ms: performance.now() - started });
    }
  })();
  return {
    latencies,
    failures,
    async stop() {
      running = false;
      await done;
      c.close();
    },
  };
}

/** Probes `/readyz` every 250 ms until stopped; counts the answers that are not 200. */
export function readinessProbe(service: Started, o: { fresh?: boolean } = {}): {
  readonly probes: number;
  readonly failed: string[];
  /** The most failures in a row. */
  readonly longestFailing: number;
  /**
   * The longest time from a failure to the next success, in ms: the kubelet (period 5 s, 3 failures) turns a pod
   * unready once failures span 10 s.
   */
  readonly longestFailingMs: number;
  stop(): Promise<void>;
} {
  // `fresh`: a new connection for every probe, as the kubelet's.
  const c = o.fresh ? Deno.createHttpClient({ caCerts: [pki("ca.crt")], poolMaxIdlePerHost: 0 }) : client();
  let probes = 0;
  const failed: string[] = [];
  let [streak, longestFailing, failingSince, longestFailingMs] = [0, 0, NaN, 0];
  let running = true;
  const done = (async () => {
    while (running) {
      probes++;
      const before = failed.length;
      const started = performance.now();
      try {
        const res = await fetch(`${service.hooks}/readyz`, { client: c, signal: AbortSignal.timeout(2000) });
        const text = await res.text();
        if (res.status !== 200) failed.push(`${res.status} ${text}`);
      } catch (err) {
        failed.push(String(err));
      }
      const failing = failed.length > before;
      if (failing && streak === 0) failingSince = started;
      streak = failing ? streak + 1 : 0;
      longestFailing = Math.max(longestFailing, streak);
      if (failing) longestFailingMs = Math.max(longestFailingMs, performance.now() - failingSince);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    get probes() {
      return probes;
    },
    get longestFailing() {
      return longestFailing;
    },
    get longestFailingMs() {
      return Math.round(longestFailingMs);
    },
    failed,
    async stop() {
      running = false;
      await done;
      c.close();
    },
  };
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
  const phase = ([from, to]: readonly [number, number]) =>
    l.latencies.filter((x) => x.at >= from && x.at < to).map((x) => x.ms);
  const [q, a] = [phase(quiet), phase(attack)];
  const round = (n: number) => +n.toFixed(1);
  return {
    calls: { quiet: q.length, attack: a.length },
    failures: l.failures.length,
    p99Ms: { quiet: round(percentile(q, 99)), attack: round(percentile(a, 99)) },
    p50Ms: { quiet: round(percentile(q, 50)), attack: round(percentile(a, 50)) },
    ratio: +(percentile(a, 99) / percentile(q, 99)).toFixed(2),
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
  const teamBody = new TextEncoder().encode(teamShapeSyncBody({
    users: 10,
    groups: 0,
    environments: 2,
    environmentUsers: 2,
    environmentGroups: 0,
  }, 20));
  const reviewBody = () =>
    new TextEncoder().encode(JSON.stringify({
      ...reviewFixture,
      request: { ...(reviewFixture as { request: object }).request, uid: crypto.randomUUID() },
    }));
  return {
    hooks: benignLoop(`${service.hooks}/hooks/team/sync`, () => teamBody, "metacontroller"),
    reviews: benignLoop(`${service.webhooks}/webhooks/validate/tenantcluster`, reviewBody),
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
