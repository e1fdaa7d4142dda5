/**
 * Tenant API servers for the reporter, served by the test over HTTPS with the control plane's serving pair
 * (127.0.0.1): a benign one with one LoadBalancer Service, and whatever a hostile one answers.
 *
 * @module
 */
import { cluster, tokenKubeconfig } from "../api/cluster.ts";
import { b64 } from "../api/tenant.ts";

/** One Service of type LoadBalancer with an address. */
export function loadBalancer(name: string, ip: string): Record<string, unknown> {
  return {
    metadata: {
      name,
      namespace: "default",
      uid: `u-${name}`,
      resourceVersion: "1",
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
    status: { loadBalancer: { ingress: [{ ip }] } },
  };
}

/** A benign tenant: one LoadBalancer Service; its watch stays open and says nothing. */
export function benignTenant(req: Request): Response {
  if (new URL(req.url).searchParams.get("watch")) return new Response(new ReadableStream({ start() {} }));
  return Response.json({
    kind: "ServiceList",
    apiVersion: "v1",
    metadata: { resourceVersion: "1" },
    items: [loadBalancer("web", "192.168.10.20")],
  });
}

/** Serves `handler` over HTTPS on a free loopback port; its URL, and how to stop it. */
export function serveTenant(
  handler: (req: Request) => Response | Promise<Response>,
): { url: string; shutdown: () => Promise<void> } {
  const pki = (f: string) => Deno.readTextFileSync(`${cluster().dir}/${f}`);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: pki("hook.crt"), key: pki("hook.key"), onListen() {} },
    handler,
  );
  return { url: `https://127.0.0.1:${server.addr.port}`, shutdown: () => server.shutdown() };
}

/** The kubeconfig text of a tenant at `server`, trusting the control plane's CA. */
export function tenantKubeconfig(server: string): string {
  return tokenKubeconfig(server, "tenant-token", {
    caData: b64(Deno.readTextFileSync(`${cluster().dir}/ca.crt`)),
  });
}
