/**
 * Many fake tenant API servers in one process, for the reporter load test: `/t/<i>/api/v1/services` lists
 * `--services` LoadBalancer Services (half with an address) and watches them (a bookmark every 20 s, the watch
 * ended at its `timeoutSeconds`), and takes the reporter's server-side applies of MetalLB objects (answered with
 * what was applied, as an API server with MetalLB's CRDs would). Plain HTTP on loopback, or HTTPS with
 * `--cert=FILE --key=FILE` (as real tenant API servers, which then negotiate HTTP/2); prints the port.
 *
 * @module
 */
import { numberFlag, stringFlag } from "./cli.ts";
const flag = (name: string, fallback: number) => numberFlag(Deno.args, name, fallback);
const perTenant = flag("services", 20);
const rv = 1000;
const [certFile, keyFile] = [stringFlag(Deno.args, "cert"), stringFlag(Deno.args, "key")];
const tls = certFile && keyFile
  ? { cert: Deno.readTextFileSync(certFile), key: Deno.readTextFileSync(keyFile) }
  : {};

function services(tenant: number) {
  return Array.from({ length: perTenant }, (_, i) => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: {
      namespace: `app-${i % 4}`,
      name: `svc-${tenant}-${i}`,
      uid: `uid-${tenant}-${i}`,
      resourceVersion: String(rv),
      creationTimestamp: "2026-11-01T00:00:00Z",
      labels: { app: `svc-${i}` },
    },
    spec: {
      type: "LoadBalancer",
      ports: [{ port: 80, targetPort: 8080, protocol: "TCP" }],
      clusterIP: `10.96.0.${i}`,
    },
    status: {
      loadBalancer: i % 2 ? { ingress: [{ ip: `192.168.${tenant % 250}.${i}`, ipMode: "VIP" }] } : {},
    },
  }));
}

const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: ({ port }) => console.log(port), ...tls },
  async (req) => {
    const url = new URL(req.url);
    if (req.method === "PATCH" && /^\/t\/\d+\/apis\/metallb\.io\//.test(url.pathname)) {
      const text = await req.text();
      try {
        return Response.json(JSON.parse(text));
      } catch {
        return Response.json({}, { status: 400 });
      }
    }
    const m = url.pathname.match(/^\/t\/(\d+)\/api\/v1\/services$/);
    if (!m) return new Response("{}", { status: 404 });
    if (url.searchParams.get("watch") !== "1") {
      return Response.json({
        kind: "ServiceList",
        metadata: { resourceVersion: String(rv) },
        items: services(Number(m[1])),
      });
    }
    const seconds = Number(url.searchParams.get("timeoutSeconds") ?? 60);
    let timer: ReturnType<typeof setInterval> | undefined;
    let end: ReturnType<typeof setTimeout> | undefined;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        const bookmark = () =>
          controller.enqueue(new TextEncoder().encode(
            JSON.stringify({
              type: "BOOKMARK",
              object: { kind: "Service", metadata: { resourceVersion: String(rv) } },
            }) + "\n",
          ));
        timer = setInterval(bookmark, 20_000);
        end = setTimeout(() => {
          clearInterval(timer);
          try {
            controller.close();
          } catch { /* cancelled */ }
        }, seconds * 1000);
      },
      cancel() {
        clearInterval(timer);
        clearTimeout(end);
      },
    });
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
);
await server.finished;
