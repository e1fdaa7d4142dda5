/**
 * The LoadBalancer reporter against hostile tenants (issue #46): the reporter runs with its shipped command line,
 * permissions and heap cap and the `butler-reporter` ServiceAccount's RBAC; each TenantCluster's kubeconfig names
 * a fake tenant API server of this test, each hostile in its own way: a 150 MB list, a 150 MB error, a redirect
 * to another port, a connection that never answers, a watch event that never ends, 100,000 Services. The reporter
 * must stay up within its memory limit, and each tenant's LoadBalancerInventory must say why in fixed words.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { REPORTER_BINDING } from "../../hooks/team/mod.ts";
import { b64 } from "../api/tenant.ts";
import {
  api,
  cluster,
  denoDir,
  freePort,
  installManifests,
  kubectlOk,
  mapShipped,
  ROOT,
  spawnLogged,
  tokenKubeconfig,
} from "../api/cluster.ts";
import { record, residentPeak } from "./measure.ts";

const NS = "team-hostile-tenants";
const PC = "hostile-elastic";
const GROUP = "/apis/butler.butlerlabs.dev/v1alpha1";
const MIB = 1024 * 1024;

/** A body of `mib` MiB of one long JSON string, made as it is read; `sent()` says how much was. */
function endless(mib: number, prefix = "", suffix = "") {
  let sent = 0;
  const enc = new TextEncoder();
  const chunk = enc.encode("x".repeat(64 * 1024));
  let started = false;
  const body = new ReadableStream<Uint8Array>({
    pull(c) {
      if (!started) {
        started = true;
        return c.enqueue(enc.encode(prefix));
      }
      if (sent >= mib * MIB) {
        c.enqueue(enc.encode(suffix));
        return c.close();
      }
      sent += chunk.length;
      c.enqueue(chunk);
    },
  });
  return { body, sent: () => sent };
}

const emptyList = () =>
  Response.json({ kind: "ServiceList", apiVersion: "v1", metadata: { resourceVersion: "1" }, items: [] });

/** One Service of the 100,000. */
function service(i: number) {
  return {
    metadata: {
      name: `s${i}`,
      namespace: "default",
      uid: `u${i}`,
      resourceVersion: "1",
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    status: { loadBalancer: { ingress: [{ ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` }] } },
  };
}

/** The hostile tenants: each a behaviour of its API server, and the Reporting reason it must come to. */
const TENANTS: Record<
  string,
  { reason: string; serve: (req: Request, redirectTo: string) => Response | Promise<Response> }
> = {
  "huge-list": {
    reason: "TooLarge",
    serve: () => new Response(endless(150, '{"kind":"ServiceList","items":[],"x":"', '"}').body),
  },
  "huge-error": {
    reason: "Unreachable",
    serve: () => new Response(endless(150, '{"kind":"Status","message":"', '"}').body, { status: 500 }),
  },
  "redirect": {
    reason: "Redirected",
    serve: (req, to) => Response.redirect(`${to}${new URL(req.url).pathname}`, 307),
  },
  "endless-event": {
    reason: "TooLarge",
    serve: (req) =>
      new URL(req.url).searchParams.get("watch")
        ? new Response(endless(150, '{"type":"ADDED","object":{"x":"').body)
        : emptyList(),
  },
  "many": {
    reason: "Watching",
    serve: (req) => {
      const url = new URL(req.url);
      if (url.searchParams.get("watch")) return new Response(new ReadableStream({ start() {} }));
      const from = Number(url.searchParams.get("continue") ?? 0);
      const limit = Number(url.searchParams.get("limit") ?? 500);
      const to = Math.min(100_000, from + limit);
      return Response.json({
        kind: "ServiceList",
        apiVersion: "v1",
        metadata: { resourceVersion: "1", ...(to < 100_000 ? { continue: String(to) } : {}) },
        items: Array.from({ length: to - from }, (_, k) => service(from + k)),
      });
    },
  },
};

Deno.test("the LoadBalancer reporter against hostile tenants", async (t) => {
  await installManifests();
  const pki = (f: string) => Deno.readTextFileSync(`${cluster().dir}/${f}`);
  // Where a redirect points: a plain http server on another port, which must never be asked.
  const stolen: string[] = [];
  const target = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    stolen.push(`${req.method} ${new URL(req.url).pathname}`);
    return emptyList();
  });
  const redirectTo = `http://127.0.0.1:${target.addr.port}`;
  const servers = Object.entries(TENANTS).map(([name, tenant]) =>
    [
      name,
      Deno.serve(
        { hostname: "127.0.0.1", port: 0, cert: pki("hook.crt"), key: pki("hook.key"), onListen() {} },
        (req) => tenant.serve(req, redirectTo),
      ),
    ] as const
  );
  // A server that takes the connection and never answers.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of silent) held.push(c);
  })().catch(() => {});

  // A team namespace, as its Team makes it: TenantClusters live nowhere else.
  await kubectlOk(["create", "namespace", NS]);
  await kubectlOk(["label", "namespace", NS, `butler.butlerlabs.dev/team=${NS.slice(5)}`]);
  const pc = Deno.readTextFileSync(`${ROOT}/examples/providerconfigs/proxmox-elastic.yaml`)
    .replace("name: proxmox-elastic", `name: ${PC}`);
  await kubectlOk(["apply", "-f", "-"], { stdin: pc });
  await kubectlOk([
    "apply",
    "-f",
    `${ROOT}/manifests/components/reporter/serviceaccount.yaml`,
    "-f",
    `${ROOT}/manifests/components/reporter/rbac.yaml`,
  ]);
  await kubectlOk(["apply", "-f", "-"], {
    stdin: JSON.stringify({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: REPORTER_BINDING, namespace: NS },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REPORTER_BINDING },
      subjects: [{ kind: "ServiceAccount", name: "butler-reporter", namespace: "butler-system" }],
    }),
  });
  const servedAt: Record<string, string> = Object.fromEntries([
    ...servers.map(([name, s]) => [name, `https://127.0.0.1:${s.addr.port}`]),
    ["silent", `https://127.0.0.1:${(silent.addr as Deno.NetAddr).port}`],
  ]);
  const expected: Record<string, string> = {
    ...Object.fromEntries(Object.entries(TENANTS).map(([k, v]) => [k, v.reason])),
    silent: "Timeout",
  };
  for (const [name, server] of Object.entries(servedAt)) {
    await kubectlOk(["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: `${name}-kubeconfig`, namespace: NS },
        data: { value: b64(tokenKubeconfig(server, "tenant-token", { caData: b64(pki("ca.crt")) })) },
      }),
    });
    await kubectlOk(["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "butler.butlerlabs.dev/v1alpha1",
        kind: "TenantCluster",
        metadata: { name, namespace: NS },
        spec: { providerConfigRef: { name: PC } },
      }),
    });
  }

  // The reporter as shipped: its args, its environment (the heap cap among it), a token of its ServiceAccount.
  const dir = await Deno.makeTempDir();
  const token =
    (await kubectlOk(["create", "token", "butler-reporter", "-n", "butler-system", "--duration=1h"]))
      .trim();
  Deno.writeTextFileSync(
    `${dir}/kubeconfig`,
    tokenKubeconfig(cluster().server, token, { caData: b64(pki("ca.crt")) }),
  );
  const container =
    (parse(Deno.readTextFileSync(`${ROOT}/manifests/components/reporter/deployment.yaml`)) as {
      spec: {
        template: { spec: { containers: { args: string[]; env: { name: string; value?: string }[] }[] } };
      };
    }).spec.template.spec.containers[0]!;
  const cache = await denoDir();
  const args = container.args.map((a) =>
    mapShipped(a, [["/var/run/secrets/kubernetes.io/serviceaccount", dir], ["/deno-dir", cache], [
      "/app",
      ROOT,
    ]])
  );
  const env = Object.fromEntries(
    container.env.flatMap((e) => e.value === undefined ? [] : [[e.name, e.value]]),
  );
  const log = `${dir}/reporter.log`;
  const child = spawnLogged([Deno.execPath(), ...args], log, {
    ...env,
    KUBECONFIG: `${dir}/kubeconfig`,
    HOSTNAME: "hostile-reporter",
    POD_NAMESPACE: "butler-system",
    HOST: "127.0.0.1",
    PORT: String(freePort()),
    KUBECONFIG_RECHECK_SECONDS: "5",
  });
  let exited = false;
  child.status.then(() => exited = true);

  const reasons = async () =>
    Object.fromEntries(
      await Promise.all(
        Object.keys(servedAt).map(async (name) => {
          const r = await api("GET", `${GROUP}/namespaces/${NS}/loadbalancerinventories/${name}`);
          const conditions =
            (r.body as { status?: { conditions?: { type: string; reason: string; message: string }[] } })
              .status?.conditions ?? [];
          const reporting = conditions.find((c) => c.type === "Reporting");
          const complete = conditions.find((c) => c.type === "Complete");
          return [name, {
            reason: reporting?.reason,
            message: reporting?.message,
            complete: complete?.reason,
          }];
        }),
      ),
    ) as Record<string, { reason?: string; message?: string; complete?: string }>;
  let seen = await reasons();
  const started = performance.now();
  while (performance.now() - started < 90_000) {
    seen = await reasons();
    if (Object.entries(expected).every(([k, v]) => seen[k]?.reason === v)) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  // Once more after they settled: the hostile tenants keep answering as they do.
  await new Promise((r) => setTimeout(r, 10_000));
  seen = await reasons();
  const peak = residentPeak(child.pid);
  const alive = !exited;
  try {
    child.kill("SIGTERM");
  } catch { /* gone */ }
  const status = await child.status;
  await Promise.all([target.shutdown(), ...servers.map(([, s]) => s.shutdown())]);
  silent.close();
  for (const c of held) c.close();
  await accepting;
  const limit = 320 * MIB;
  await record("reporter", {
    processExits: alive ? 0 : 1,
    exitCodeAtShutdown: status.code,
    peakResidentBytes: peak,
    podLimitBytes: limit,
    redirectTargetAsked: stolen.length,
    tenants: seen,
  });

  await t.step("the reporter never ended", () => assert.ok(alive, Deno.readTextFileSync(log).slice(-3000)));
  await t.step(
    "its resident memory stayed within its limit (320Mi)",
    () => assert.ok(peak < limit, `${peak}`),
  );
  await t.step("each hostile tenant's inventory says why, in fixed words", () => {
    for (const [name, reason] of Object.entries(expected)) {
      assert.equal(seen[name]?.reason, reason, `${name}: ${JSON.stringify(seen[name])}`);
      assert.ok((seen[name]?.message ?? "").length < 300, `${name}: a bounded message`);
      assert.doesNotMatch(seen[name]?.message ?? "", /xxxx/, `${name}: nothing the tenant wrote`);
    }
    assert.equal(
      seen.many?.complete,
      "Truncated",
      "100,000 Services: the inventory keeps its bound and says so",
    );
  });
  await t.step("a redirect was never followed", () => assert.deepEqual(stolen, []));
});
