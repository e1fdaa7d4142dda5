/**
 * The service as deployed: `main.ts` with the shipped TLS settings (a serving pair, the client CA), certificates
 * from the test PKI. Hook calls without a client certificate, with one from another CA, or with another client's
 * from the same CA, are refused 403 and logged; Metacontroller's certificate is let through; probes need none. The key pair is swapped on disk while
 * requests keep coming: none fails, and new connections get the new certificate. And the whole install (base
 * plus the components a managed-cluster production install needs) is accepted by the real API server in one apply.
 */
import assert from "node:assert/strict";
import { cluster, freePort, installManifests, kubectl, spawnLogged } from "./cluster.ts";

const pki = (name: string) => Deno.readTextFileSync(`${cluster().dir}/${name}`);

function client(options: { trust: string[]; as?: string }): Deno.HttpClient {
  return Deno.createHttpClient({
    caCerts: options.trust.map(pki),
    // One connection per request: each one is a new TLS handshake, so it sees the key pair of that moment.
    poolMaxIdlePerHost: 0,
    ...(options.as ? { cert: pki(`${options.as}.crt`), key: pki(`${options.as}.key`) } : {}),
  });
}

async function call(c: Deno.HttpClient, base: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    client: c,
    method: body === undefined ? "GET" : "POST",
    ...(body === undefined
      ? {}
      : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  return { status: res.status, body: await res.json() };
}

const customize = {
  controller: {},
  parent: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "Team", metadata: { name: "t" } },
};

async function startService(
  dir: string,
): Promise<{ base: string; log: () => string; stop: () => Promise<void> }> {
  const port = freePort();
  const logFile = `${dir}/service.log`;
  const child = spawnLogged([Deno.execPath(), "run", "-A", "main.ts"], logFile, {
    HOST: "127.0.0.1",
    PORT: String(port),
    HOOK_WORKERS: "1",
    TLS_CERT_FILE: `${dir}/tls.crt`,
    TLS_KEY_FILE: `${dir}/tls.key`,
    TLS_CLIENT_CA_FILE: `${dir}/ca.crt`,
    HOOK_CLIENT_NAMES: "metacontroller",
    TLS_RELOAD_SECONDS: "1",
    KUBECONFIG: "",
  });
  const base = `https://127.0.0.1:${port}`;
  const probe = client({ trust: ["ca.crt"] });
  for (let i = 0; i < 100; i++) {
    try {
      if ((await call(probe, base, "/readyz")).status === 200) break;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 100));
  }
  probe.close();
  return {
    base,
    log: () => Deno.readTextFileSync(logFile),
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** Replaces a file the way the kubelet updates a Secret volume: write aside, then rename over. */
function swap(path: string, content: string): void {
  Deno.writeTextFileSync(`${path}.new`, content);
  Deno.renameSync(`${path}.new`, path);
}

Deno.test("HTTPS with client certificates, and a key pair swapped without a failed request", async (t) => {
  const dir = await Deno.makeTempDir();
  Deno.writeTextFileSync(`${dir}/tls.crt`, pki("hook.crt"));
  Deno.writeTextFileSync(`${dir}/tls.key`, pki("hook.key"));
  Deno.writeTextFileSync(`${dir}/ca.crt`, pki("ca.crt"));
  const service = await startService(dir);
  const anonymous = client({ trust: ["ca.crt"] });
  const stranger = client({ trust: ["ca.crt"], as: "stranger" });
  const metacontroller = client({ trust: ["ca.crt", "other-ca.crt"], as: "metacontroller" });
  const apiServer = client({ trust: ["ca.crt"], as: "webhook-client" });
  try {
    await t.step("probes and metrics need no client certificate", async () => {
      assert.equal((await call(anonymous, service.base, "/healthz")).status, 200);
      const metrics = await fetch(`${service.base}/metrics`, { client: anonymous });
      assert.equal(metrics.status, 200);
      assert.match(await metrics.text(), /butler_http_requests_total/);
    });
    await t.step("a hook call without a client certificate: 403, and the log says why", async () => {
      const r = await call(anonymous, service.base, "/hooks/team/customize", customize);
      assert.equal(r.status, 403);
      assert.equal(
        r.body.error,
        "hook calls need a client certificate signed by the hooks' client CA: no client certificate",
      );
      assert.match(
        service.log(),
        /"status":403.*"error":"client certificate refused: no client certificate"/,
      );
    });
    await t.step("a certificate from another CA: 403", async () => {
      const r = await call(stranger, service.base, "/hooks/team/customize", customize);
      assert.equal(r.status, 403);
      assert.match(r.body.error, /client certificate not trusted/);
    });
    await t.step(
      "another client's certificate from the same CA (the API server's): 403, and why",
      async () => {
        const r = await call(apiServer, service.base, "/hooks/team/customize", customize);
        assert.equal(r.status, 403);
        assert.equal(
          r.body.error,
          'hook calls answer only Metacontroller\'s client certificate (metacontroller), not "kube-apiserver-webhook-client"',
        );
        assert.match(service.log(), /"kube-apiserver-webhook-client\\" is not Metacontroller's/);
      },
    );
    await t.step("Metacontroller's certificate: the hook answers", async () => {
      const r = await call(metacontroller, service.base, "/hooks/team/customize", customize);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.ok(Array.isArray(r.body.relatedResources));
    });
    await t.step(
      "the key pair is swapped on disk: requests keep succeeding, new connections see it",
      async () => {
        let stop = false;
        const statuses: number[] = [];
        const load = (async () => {
          while (!stop) {
            statuses.push(
              (await call(metacontroller, service.base, "/hooks/team/customize", customize)).status,
            );
          }
        })();
        await new Promise((r) => setTimeout(r, 300));
        // The stranger pair: signed by other-ca, so a client trusting only ca.crt now refuses the server.
        swap(`${dir}/tls.crt`, pki("stranger.crt"));
        swap(`${dir}/tls.key`, pki("stranger.key"));
        let swapped = false;
        for (let i = 0; i < 50 && !swapped; i++) {
          await new Promise((r) => setTimeout(r, 100));
          // A new client each time: one that resumes an earlier TLS session is not shown the certificate again.
          const fresh = client({ trust: ["ca.crt"] });
          swapped = await call(fresh, service.base, "/healthz").then(() => false, () => true);
          fresh.close();
        }
        await new Promise((r) => setTimeout(r, 300));
        stop = true;
        await load;
        assert.ok(swapped, "new connections get the new certificate");
        assert.ok(statuses.length > 10, `${statuses.length} requests during the swap`);
        assert.deepEqual([...new Set(statuses)], [200]);
        assert.match(service.log(), /TLS key pair reloaded/);
        const other = client({ trust: ["other-ca.crt"] });
        assert.equal((await call(other, service.base, "/healthz")).status, 200);
        other.close();
      },
    );
  } finally {
    for (const c of [anonymous, stranger, metacontroller, apiServer]) c.close();
    await service.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the production overlay, with monitoring, is accepted by the API server in one apply", async () => {
  await installManifests();
  const r = await kubectl([
    "apply",
    "--server-side",
    "--dry-run=server",
    // Other tests in this cluster own some fields of the shared objects; a dry run takes them over for its answer.
    "--force-conflicts",
    "--validate=strict",
    "-k",
    "examples/kustomize/production-monitoring",
  ]);
  assert.equal(r.code, 0, r.stderr);
  for (
    const kind of [
      "certificate.cert-manager.io",
      "servicemonitor.monitoring.coreos.com",
      "networkpolicy.networking.k8s.io",
    ]
  ) {
    assert.ok(r.stdout.includes(`${kind}/butler-hooks`), `${kind} in: ${r.stdout}`);
  }
});

Deno.test("the hook service's account may create Events (capacity Events), and nothing more of them", async () => {
  await installManifests();
  const sa = "system:serviceaccount:butler-system:butler-hooks";
  const can = async (...args: string[]) =>
    (await kubectl(["auth", "can-i", ...args, `--as=${sa}`])).stdout.trim();
  assert.equal(await can("create", "events", "-n", "butler-system"), "yes");
  assert.equal(await can("create", "events", "-n", "team-a"), "yes");
  assert.equal(await can("delete", "events", "-n", "butler-system"), "no");
  assert.equal(await can("get", "secrets", "-n", "butler-system"), "no");
});

Deno.test("a body refused early is not read: the connection closes instead", async () => {
  const dir = await Deno.makeTempDir();
  for (const [from, to] of [["hook.crt", "tls.crt"], ["hook.key", "tls.key"], ["ca.crt", "ca.crt"]]) {
    await Deno.copyFile(`${cluster().dir}/${from}`, `${dir}/${to}`);
  }
  const service = await startService(dir);
  const c = client({ trust: ["ca.crt"] });
  try {
    // 512 MiB offered in 64 KiB chunks; the body limit is 16 MiB. The client counts what the server took.
    const total = 512 * 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024).fill(32);
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= total) return controller.close();
        pulled += chunk.length;
        controller.enqueue(chunk);
      },
    });
    let status = 0;
    try {
      const res = await fetch(`${service.base}/webhooks/validate/team`, {
        client: c,
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      });
      status = res.status;
      await res.body?.cancel();
    } catch { /* the server closed the connection while the client was still sending: what we want */ }
    const atAnswer = pulled;
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(status === 413 || status === 0, `status ${status}`);
    assert.ok(atAnswer < total / 4, `the server took ${atAnswer} of ${total} bytes before answering`);
    assert.ok(pulled - atAnswer < 32 * 1024 * 1024, `and ${pulled - atAnswer} more after it`);
  } finally {
    c.close();
    await service.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
