import assert from "node:assert/strict";
import { kubeconfigConnection } from "./config.ts";

const kubeconfig = (server: string, user: string) =>
  `apiVersion: v1
kind: Config
clusters: [{name: t, cluster: {server: "${server}"}}]
users: [{name: u, user: ${user}}]
contexts: [{name: t, context: {cluster: t, user: u}}]
current-context: t
`;

Deno.test("kubeconfigConnection: a tenant's server must be https, and unusable credentials are an error", () => {
  const source = "Secret team-a/c1-kubeconfig";
  // A token must never travel in clear, to an address the tenant chose.
  assert.throws(
    () =>
      kubeconfigConnection(kubeconfig("http://10.0.0.1:80", "{token: t}"), source, undefined, {
        requireTls: true,
      }),
    /Secret team-a\/c1-kubeconfig: the cluster server is not https:\/\//,
  );
  assert.ok(kubeconfigConnection(kubeconfig("http://127.0.0.1:8080", "{token: t}"), source).server);
  for (
    const [user, kind] of [
      ["{exec: {command: aws}}", "exec"],
      ["{auth-provider: {name: gcp}}", "auth-provider"],
      ["{tokenFile: /var/run/token}", "tokenFile"],
      [
        "{client-certificate: /var/run/secrets/kubernetes.io/serviceaccount/token, client-key: /k}",
        "client-certificate, client-key",
      ],
      ["{username: admin, password: secret-value}", "username, password"],
    ]
  ) {
    assert.throws(
      () =>
        kubeconfigConnection(kubeconfig("https://10.0.0.1", user!), source, undefined, { requireTls: true }),
      (err: Error) => {
        assert.match(err.message, new RegExp(`user credentials of type ${kind} are not supported`));
        assert.ok(!err.message.includes("secret-value"), err.message);
        return true;
      },
    );
  }
  const ok = kubeconfigConnection(kubeconfig("https://10.0.0.1", "{token: abc}"), source, undefined, {
    requireTls: true,
  });
  assert.equal(ok.token?.(), "abc");
});
