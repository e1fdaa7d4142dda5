/**
 * A tenant cluster for the reporter's tests: a second test control plane with a ServiceAccount that may read
 * Services, tokens for it, LoadBalancer Services, and the kubeconfig text Cluster API would put in the
 * management cluster's `{cluster}-kubeconfig` Secret.
 *
 * @module
 */
import { encodeBase64 } from "../../lib/encoding/base64.ts";
import { kubectlOk, tokenKubeconfig } from "./cluster.ts";
import { startControlPlane } from "./run.ts";
import { controlPlaneBinary, operatorCrds } from "./tools.ts";

/** Base64 of a text. */
export const b64 = (text: string): string => encodeBase64(new TextEncoder().encode(text));

/** A running tenant control plane. */
export interface TestTenant {
  readonly dir: string;
  readonly server: string;
  /** kubectl against the tenant. */
  kubectl(args: string[], stdin?: string): Promise<string>;
  /** A token of the reader ServiceAccount; bound to a tenant Secret of that name when given (delete it to revoke). */
  token(boundSecret?: string): Promise<string>;
  /** Creates (or keeps) a LoadBalancer Service in `default`. */
  service(name: string): Promise<string>;
  /** Writes the Service's address, as a load-balancer implementation would. */
  assign(name: string, ip: string): Promise<string>;
  /** A kubeconfig reaching the tenant at `server` (default its own) with `token`. */
  kubeconfig(token: string, server?: string): string;
  /**
   * Installs MetalLB's IPAddressPool and L2Advertisement CRDs (MetalLB's own, pinned) and lets the reporter
   * ServiceAccount get, create and patch them in `metallb-system`, as the README asks of a tenant.
   */
  installMetalLB(): Promise<void>;
  /** The tenant's `IPAddressPool metallb-system/default-pool`, if any. */
  metallbPool(): Promise<{ spec?: { addresses?: string[] } } | undefined>;
  stop(): Promise<void>;
}

/** Starts a tenant control plane with a `reporter` ServiceAccount allowed to get, list and watch Services. */
export async function startTestTenant(): Promise<TestTenant> {
  const plane = await startControlPlane(await controlPlaneBinary());
  // kubectl's last --kubeconfig wins over the management cluster's that kubectlOk passes first.
  const kubectl = (args: string[], stdin?: string) =>
    kubectlOk([`--kubeconfig=${plane.dir}/kubeconfig`, ...args], stdin === undefined ? {} : { stdin });
  await kubectl(["create", "serviceaccount", "reporter", "-n", "default"]);
  await kubectl(["create", "clusterrole", "read-services", "--verb=get,list,watch", "--resource=services"]);
  await kubectl([
    "create",
    "clusterrolebinding",
    "reporter",
    "--clusterrole=read-services",
    "--serviceaccount=default:reporter",
  ]);
  const ca = b64(Deno.readTextFileSync(`${plane.dir}/ca.crt`));
  return {
    dir: plane.dir,
    server: plane.server,
    kubectl,
    async token(bound) {
      if (bound) await kubectl(["create", "secret", "generic", bound, "-n", "default"]);
      const bind = bound ? ["--bound-object-kind=Secret", `--bound-object-name=${bound}`] : [];
      return (await kubectl(["create", "token", "reporter", "-n", "default", "--duration=1h", ...bind]))
        .trim();
    },
    service: (name) =>
      kubectl(
        ["apply", "-f", "-"],
        JSON.stringify({
          apiVersion: "v1",
          kind: "Service",
          metadata: { name, namespace: "default" },
          spec: { type: "LoadBalancer", ports: [{ port: 80 }] },
        }),
      ),
    assign: (name, ip) =>
      kubectl([
        "patch",
        "service",
        name,
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status: { loadBalancer: { ingress: [{ ip }] } } }),
      ]),
    kubeconfig: (token, server = plane.server) => tokenKubeconfig(server, token, { caData: ca }),
    async installMetalLB() {
      const crds = await operatorCrds("metallb");
      await kubectl([
        "apply",
        "--server-side",
        "-f",
        `${crds}/metallb.io_ipaddresspools.yaml`,
        "-f",
        `${crds}/metallb.io_l2advertisements.yaml`,
      ]);
      await kubectl(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
      await kubectl(["create", "namespace", "metallb-system"]);
      await kubectl([
        "create",
        "role",
        "butler-metallb",
        "-n",
        "metallb-system",
        "--verb=get,create,patch",
        "--resource=ipaddresspools.metallb.io,l2advertisements.metallb.io",
      ]);
      await kubectl([
        "create",
        "rolebinding",
        "butler-metallb",
        "-n",
        "metallb-system",
        "--role=butler-metallb",
        "--serviceaccount=default:reporter",
      ]);
    },
    async metallbPool() {
      const out = await new Deno.Command("kubectl", {
        args: [
          `--kubeconfig=${plane.dir}/kubeconfig`,
          "get",
          "ipaddresspool",
          "default-pool",
          "-n",
          "metallb-system",
          "-o",
          "json",
        ],
        stdout: "piped",
        stderr: "null",
      }).output();
      return out.success ? JSON.parse(new TextDecoder().decode(out.stdout)) : undefined;
    },
    stop: plane.stop,
  };
}
