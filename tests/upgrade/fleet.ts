/**
 * The hook service as a Deployment behind its Service, on loopback: replicas (processes of one source tree or
 * another, each with its hook and webhook ports) behind two TCP proxies that stand for the Service's two ports and
 * send each new connection to a ready replica. A rolling update replaces the replicas one at a time as the
 * Deployment does with `maxSurge: 1, maxUnavailable: 0`: a new replica starts, becomes ready, joins the endpoints;
 * then an old one leaves them and is sent SIGTERM, and drains.
 *
 * @module
 */
import { freePort } from "../api/cluster.ts";
import { startHookService, waitHttp } from "../e2e/stack.ts";

/** One replica: its process, ports and source tree. */
export interface Replica {
  readonly name: string;
  readonly root: string;
  readonly hookPort: number;
  readonly webhookPort: number;
  readonly process: Deno.ChildProcess;
}

/** A TCP proxy that sends each connection to one of `backends()` (round robin); stops on `close()`. */
function tcpProxy(port: number, backends: () => number[]): { close(): void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port });
  let next = 0;
  (async () => {
    for await (const conn of listener) {
      const ports = backends();
      if (!ports.length) {
        conn.close(); // no endpoint: the connection is refused, as a Service without endpoints does
        continue;
      }
      const target = ports[next++ % ports.length]!;
      Deno.connect({ hostname: "127.0.0.1", port: target }).then((upstream) => {
        const done = () => {
          try {
            conn.close();
          } catch { /* closed */ }
          try {
            upstream.close();
          } catch { /* closed */ }
        };
        Promise.allSettled([conn.readable.pipeTo(upstream.writable), upstream.readable.pipeTo(conn.writable)])
          .finally(done);
      }, () => conn.close());
    }
  })().catch(() => {});
  return { close: () => listener.close() };
}

/** A replica taken out: when it was sent SIGTERM and when it had exited (ms since the epoch). */
export interface Drained {
  readonly name: string;
  readonly root: string;
  readonly sigterm: number;
  readonly exited: number;
}

/** The hook service's replicas and Service. */
export interface Fleet {
  /** `https://127.0.0.1:<port>` of the Service's hook port and webhook port. */
  readonly hooks: string;
  readonly webhooks: string;
  readonly replicas: () => readonly Replica[];
  /** Every replica taken out so far. */
  readonly drained: () => readonly Drained[];
  /** Replaces every replica by one of `root`, one at a time; resolves when the last old one has exited. */
  rollTo(root: string, label: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `count` replicas of the source tree `root` behind the Service's ports. */
export async function startFleet(
  options: {
    plane: { dir: string; server: string };
    kubeconfig: string;
    root: string;
    label: string;
    count: number;
    logs: string;
  },
): Promise<Fleet> {
  let replicas: Replica[] = [];
  let serial = 0;
  const start = async (root: string, label: string): Promise<Replica> => {
    const [hookPort, webhookPort] = [freePort(), freePort()];
    const name = `hooks-${label}-${++serial}`;
    const process = await startHookService({
      plane: options.plane,
      port: hookPort,
      webhookPort,
      kubeconfig: options.kubeconfig,
      log: `${options.logs}/${name}.log`,
      root,
    });
    await waitHttp(`https://127.0.0.1:${hookPort}/readyz`, `${options.plane.dir}/ca.crt`, 60);
    return { name, root, hookPort, webhookPort, process };
  };
  const hookProxyPort = freePort();
  const webhookProxyPort = freePort();
  const proxies = [
    tcpProxy(hookProxyPort, () => replicas.map((r) => r.hookPort)),
    tcpProxy(webhookProxyPort, () => replicas.map((r) => r.webhookPort)),
  ];
  for (let i = 0; i < options.count; i++) replicas.push(await start(options.root, options.label));
  const drained: Drained[] = [];
  const stopReplica = async (r: Replica) => {
    const sigterm = Date.now();
    try {
      r.process.kill("SIGTERM");
    } catch { /* gone */ }
    await r.process.status;
    drained.push({ name: r.name, root: r.root, sigterm, exited: Date.now() });
  };
  return {
    hooks: `https://127.0.0.1:${hookProxyPort}`,
    webhooks: `https://127.0.0.1:${webhookProxyPort}`,
    replicas: () => replicas,
    drained: () => drained,
    async rollTo(root, label) {
      for (const old of [...replicas]) {
        const fresh = await start(root, label);
        replicas = [...replicas, fresh]; // ready: it joins the endpoints
        replicas = replicas.filter((r) => r !== old); // the old one leaves them, then drains
        await stopReplica(old);
      }
    },
    async stop() {
      for (const p of proxies) p.close();
      await Promise.all(replicas.map(stopReplica));
      replicas = [];
    },
  };
}
