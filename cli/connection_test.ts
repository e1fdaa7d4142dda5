import assert from "node:assert/strict";
import { kubeconfigConnection } from "../lib/kube/mod.ts";
import { impersonationHeaders, kubeconfigPath, runCredentialPlugin } from "./connection.ts";

const PLUGIN = new URL("../tests/cli/fake_credential_plugin.ts", import.meta.url).pathname;
const plugin = (mode: string) => ({
  command: Deno.execPath(),
  args: ["run", "--allow-env", PLUGIN, mode],
  env: [{ name: "EXTRA", value: "x" }],
});

const KUBECONFIG = `
apiVersion: v1
kind: Config
current-context: a
contexts:
  - { name: a, context: { cluster: c, user: u, namespace: team-a } }
  - { name: b, context: { cluster: c, user: p } }
clusters:
  - { name: c, cluster: { server: "https://127.0.0.1:6443" } }
users:
  - { name: u, user: { token: static } }
  - name: p
    user:
      exec: { apiVersion: client.authentication.k8s.io/v1, command: "${Deno.execPath()}", args: [run, --allow-env, "${PLUGIN}", from-kubeconfig] }
`;

Deno.test("the CLI's connection, as kubectl makes it", async (t) => {
  await t.step("the kubeconfig: the flag, KUBECONFIG's first file, then ~/.kube/config", () => {
    const env = (vars: Record<string, string>) => (n: string) => vars[n];
    assert.equal(kubeconfigPath("/x", env({ KUBECONFIG: "/y" })), "/x");
    assert.equal(kubeconfigPath(undefined, env({ KUBECONFIG: ":/y:/z", HOME: "/h" })), "/y");
    assert.equal(kubeconfigPath(undefined, env({ HOME: "/h" })), "/h/.kube/config");
    assert.throws(() => kubeconfigPath(undefined, env({})), /no kubeconfig/);
  });
  await t.step("the context's namespace, else default", () => {
    const exec = { exec: runCredentialPlugin };
    assert.equal(kubeconfigConnection(KUBECONFIG, "kc", undefined, exec).namespace, "team-a");
    assert.equal(
      kubeconfigConnection(KUBECONFIG, "kc", undefined, { ...exec, context: "b" }).namespace,
      undefined,
    );
  });
  await t.step(
    "--as and --as-group become impersonation headers; groups alone, or several, are an error",
    () => {
      assert.equal(impersonationHeaders({}), undefined);
      assert.deepEqual(impersonationHeaders({ as: "alice", asGroups: ["g1"] }), {
        "Impersonate-User": "alice",
        "Impersonate-Group": "g1",
      });
      // fetch would send "g1, g2" on one line: the API server would impersonate a group of that name.
      assert.throws(
        () => impersonationHeaders({ as: "alice", asGroups: ["g1", "g2"] }),
        /one --as-group at most/,
      );
      assert.throws(() => impersonationHeaders({ asGroups: ["g"] }), /--as-group needs --as/);
    },
  );
  await t.step("--context picks the user; an unknown context is an error", () => {
    const a = kubeconfigConnection(KUBECONFIG, "kc", undefined, { exec: runCredentialPlugin });
    assert.equal(a.token?.(), "static");
    const b = kubeconfigConnection(KUBECONFIG, "kc", undefined, { exec: runCredentialPlugin, context: "b" });
    assert.equal(b.token?.(), "from-kubeconfig--interactive:false");
    assert.throws(
      () => kubeconfigConnection(KUBECONFIG, "kc", undefined, { context: "nope" }),
      /context "nope" not found/,
    );
  });
  await t.step(
    "exec plugins are run only where the caller allows them (never for a tenant's kubeconfig)",
    () => {
      assert.throws(
        () => kubeconfigConnection(KUBECONFIG, "kc", undefined, { context: "b" }),
        /user credentials of type exec are not supported/,
      );
    },
  );
  await t.step("a plugin's credential is kept until it expires, then asked again", () => {
    let calls = 0;
    let now = Date.parse("2030-01-01T00:00:00Z");
    const c = kubeconfigConnection(KUBECONFIG, "kc", undefined, {
      context: "b",
      now: () => now,
      exec: () => ({ token: `t${++calls}`, expirationTimestamp: "2030-01-01T01:00:00Z" }),
    });
    assert.equal(c.token?.(), "t1");
    now += 30 * 60_000;
    assert.equal(c.token?.(), "t1");
    now += 30 * 60_000 - 5_000; // within the last 10 s: renewed early
    assert.equal(c.token?.(), "t2");
  });
  await t.step("the plugin protocol: environment passed, KUBERNETES_EXEC_INFO not interactive", () => {
    assert.equal(runCredentialPlugin(plugin("p")).token, "p-x-interactive:false");
  });
  await t.step("a plugin that fails, prints no JSON, answers nothing or is missing: a clear error", () => {
    assert.throws(() => runCredentialPlugin(plugin("fail")), /failed \(exit 3\)/);
    assert.throws(
      () => runCredentialPlugin(plugin("garbage")),
      /did not print an ExecCredential \(not JSON\)/,
    );
    assert.throws(() => runCredentialPlugin(plugin("empty")), /neither a token nor a client certificate/);
    assert.throws(
      () =>
        runCredentialPlugin({
          command: "no-such-plugin-butler",
          installHint: "install it from example.com\n",
        }),
      /credential plugin "no-such-plugin-butler" not found: install it from example.com$/,
    );
  });
});
