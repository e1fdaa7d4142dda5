/**
 * A credential plugin for cli/connection_test.ts, as client-go runs one: prints an ExecCredential whose token
 * names its first argument and says it saw KUBERNETES_EXEC_INFO; with "fail" it exits 3; with "garbage" it
 * prints no JSON; with "empty" a status without credentials.
 */
const [mode = "token"] = Deno.args;
const info = JSON.parse(Deno.env.get("KUBERNETES_EXEC_INFO") ?? "{}") as { spec?: { interactive?: boolean } };
if (mode === "fail") Deno.exit(3);
if (mode === "garbage") {
  console.log("not json");
  Deno.exit(0);
}
console.log(JSON.stringify({
  apiVersion: "client.authentication.k8s.io/v1",
  kind: "ExecCredential",
  status: mode === "empty" ? {} : {
    token: `${mode}-${Deno.env.get("EXTRA") ?? ""}-interactive:${info.spec?.interactive}`,
    expirationTimestamp: "2999-01-01T00:00:00Z",
  },
}));
