/**
 * `deno task load:webhook-auth`: what authenticating the API server costs per admission review. Two webhook
 * listeners of the same service in one run, over HTTPS on loopback: today's (any caller) and the authenticated
 * one (`WEBHOOK_CLIENT_NAMES`: a verified client certificate with the API server's name). The client plays the
 * API server: keep-alive connections (as kube-apiserver keeps them), and, for the worst case, a new connection
 * (a full handshake with client certificate verification) for every review. Prints the medians, p99s and their
 * differences; `--json=FILE` writes them. The PKI is made with openssl in a temporary directory.
 *
 *   npx -y deno@2.9.6 task load:webhook-auth [--reviews=2000]
 *
 * @module
 */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";
import { createApp } from "../../lib/http/mod.ts";
import { serve } from "../../lib/listener/mod.ts";
import { numberFlag, stringFlag } from "./cli.ts";

const reviews = numberFlag(Deno.args, "reviews", 2000);
const json = stringFlag(Deno.args, "json");

const dir = Deno.makeTempDirSync({ prefix: "butler-webhook-auth-" });
async function openssl(...args: string[]): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd: dir, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`openssl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}
const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
await openssl(
  "req",
  "-x509",
  ...ec,
  "-keyout",
  "ca.key",
  "-out",
  "ca.crt",
  "-days",
  "1",
  "-subj",
  "/CN=bench-ca",
);
for (const [name, cn] of [["server", "127.0.0.1"], ["client", "kube-apiserver-webhook-client"]]) {
  await openssl("req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${cn}`);
  Deno.writeTextFileSync(
    `${dir}/${name}.ext`,
    name === "server"
      ? "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n"
      : "extendedKeyUsage=clientAuth\n",
  );
  await openssl(
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    `${name}.crt`,
    "-days",
    "1",
    "-extfile",
    `${name}.ext`,
  );
}
const file = (f: string) => `${dir}/${f}`;
const text = (f: string) => Deno.readTextFileSync(file(f));

const review = JSON.stringify({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: {
    uid: "bench",
    kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "ProviderConfig" },
    resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "providerconfigs" },
    name: "p",
    namespace: "butler-system",
    operation: "CREATE",
    userInfo: { username: "alice" },
    object: { apiVersion: "butler.butlerlabs.dev/v1alpha1", kind: "ProviderConfig", metadata: { name: "p" } },
    oldObject: null,
  },
});

async function listener(authenticated: boolean): Promise<{ base: string; stop: () => Promise<void> }> {
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: DEFAULT_HOOK_CONFIG,
    routes: HOOK_ROUTES,
    separateWebhookListener: true,
    ...(authenticated ? { webhookClientNames: ["kube-apiserver-webhook-client"] } : {}),
  });
  const server = serve({
    hostname: "127.0.0.1",
    port: 0,
    limits: { maxConnections: 256, handshakeMs: 10_000, headerMs: 15_000, idleMs: 120_000, bodyMs: 10_000 },
    tls: {
      certFile: file("server.crt"),
      keyFile: file("server.key"),
      ...(authenticated ? { clientCaFile: file("ca.crt") } : {}),
      reloadSeconds: 0,
    },
    listener: "webhooks",
  }, (req, env) => app.fetch(req, env));
  const { port } = await server.ready;
  return { base: `https://127.0.0.1:${port}`, stop: () => server.shutdown() };
}

/** Milliseconds per review, `reviews` times, one at a time. */
async function measure(base: string, fresh: boolean): Promise<number[]> {
  const options = { caCerts: [text("ca.crt")], cert: text("client.crt"), key: text("client.key") };
  let c = Deno.createHttpClient(options);
  const times: number[] = [];
  for (let i = 0; i < reviews; i++) {
    if (fresh) {
      c.close();
      c = Deno.createHttpClient({ ...options, poolMaxIdlePerHost: 0 });
    }
    const start = performance.now();
    const res = await fetch(`${base}/webhooks/validate/providerconfig`, {
      client: c,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: review,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
    times.push(performance.now() - start);
  }
  c.close();
  return times;
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))]!;
const round = (n: number) => Math.round(n * 1000) / 1000;

const open = await listener(false);
const auth = await listener(true);
const results: Record<string, Record<string, number>> = {};
for (const [mode, fresh] of [["keepAlive", false], ["newConnection", true]] as const) {
  // Alternate the two so that the machine's load falls on both alike; the first pass warms up.
  await measure(open.base, fresh);
  await measure(auth.base, fresh);
  const [a, b] = [await measure(open.base, fresh), await measure(auth.base, fresh)];
  results[mode] = {
    openMedianMs: round(quantile(a, 0.5)),
    authenticatedMedianMs: round(quantile(b, 0.5)),
    openP99Ms: round(quantile(a, 0.99)),
    authenticatedP99Ms: round(quantile(b, 0.99)),
    medianCostMs: round(quantile(b, 0.5) - quantile(a, 0.5)),
  };
}
await open.stop();
await auth.stop();
Deno.removeSync(dir, { recursive: true });
console.log(JSON.stringify({ reviews, ...results }, null, 2));
if (json) Deno.writeTextFileSync(json, JSON.stringify({ reviews, ...results }, null, 2) + "\n");
