/**
 * The fake tenant API servers of `fake_tenants.ts` started as a process, and the kubeconfigs that reach them:
 * what `load:reporter` and `test:scale` give the reporter as tenants.
 *
 * @module
 */
import { dirname } from "node:path";
import { ROOT } from "../api/cluster.ts";
import { b64 } from "../api/tenant.ts";

/** The running fake tenants: their port, a kubeconfig for tenant `i`, and how to stop them. */
export interface FakeTenants {
  readonly port: number;
  /** The kubeconfig text of tenant `i` (`/t/<i>`), with a token the fakes do not check. */
  kubeconfig(tenant: number): string;
  stop(): Promise<void>;
}

/** Where the fakes serve HTTPS from: their key pair and the CA that signed it (which the kubeconfigs carry). */
export interface FakeTenantsTls {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** Starts one process serving every fake tenant, `services` LoadBalancer Services each; plain HTTP without `tls`. */
export async function startFakeTenants(services: number, tls?: FakeTenantsTls): Promise<FakeTenants> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      ...(tls ? [`--allow-read=${dirname(tls.certFile)},${dirname(tls.keyFile)}`] : []),
      `${ROOT}/tests/load/fake_tenants.ts`,
      `--services=${services}`,
      ...(tls ? [`--cert=${tls.certFile}`, `--key=${tls.keyFile}`] : []),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const port = Number(
    (await child.stdout.pipeThrough(new TextDecoderStream()).getReader().read()).value!.trim(),
  );
  const ca = tls ? b64(Deno.readTextFileSync(tls.caFile)) : undefined;
  const server = (i: number) =>
    ca
      ? `{server: "https://127.0.0.1:${port}/t/${i}", certificate-authority-data: "${ca}"}`
      : `{server: "http://127.0.0.1:${port}/t/${i}"}`;
  return {
    port,
    kubeconfig: (i) =>
      `apiVersion: v1\nkind: Config\nclusters: [{name: t, cluster: ${server(i)}}]\n` +
      `users: [{name: r, user: {token: fake}}]\ncontexts: [{name: t, context: {cluster: t, user: r}}]\n` +
      `current-context: t\n`,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      await child.status;
    },
  };
}
