/**
 * What the admission issues build on: the hook service speaks TLS with a certificate from the test CA, the real
 * API server calls an admission route of ours over TLS (and refuses a server it cannot verify), our
 * AdmissionReview contract matches the API server's, and kubectl can act as impersonated users and groups
 * against the shipped roles.
 */
import assert from "node:assert/strict";
import type { AdmissionReviewRequest } from "../../lib/contract/mod.ts";
import { bindAdmission, type RouteRegistrar } from "../../lib/http/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import {
  cluster,
  ensureNamespaces,
  installManifests,
  kubectl,
  kubectlOk,
  ROOT,
  type Run,
  serveHookTls,
  untilRun,
} from "./cluster.ts";

const DENY_LABEL = "butler.test/deny";

/** A test-only admission route: refuses objects labelled butler.test/deny, naming the requester. */
const harnessRoute: RouteRegistrar = (app) => {
  app.post(
    "/webhooks/validate/harness",
    bindAdmission("harness", (review: AdmissionReviewRequest) => {
      const obj = review.request.object as { metadata?: { labels?: Record<string, string> } } | undefined;
      const user = (review.request as { userInfo?: { username?: string } }).userInfo?.username ?? "";
      return obj?.metadata?.labels?.[DENY_LABEL]
        ? { allowed: false, message: `refused for user "${user}" by the test webhook`, reason: "Forbidden" }
        : { allowed: true };
    }),
  );
};

function webhookConfiguration(name: string, url: string, caPem: string): string {
  return JSON.stringify({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: [{
      name: `${name}.butler.test`,
      clientConfig: { url, caBundle: btoa(caPem) },
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
      objectSelector: { matchLabels: { "butler.test/webhook": name } },
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      failurePolicy: "Fail",
      matchPolicy: "Equivalent",
      timeoutSeconds: 5,
    }],
  });
}

function configMap(webhook: string, name: string, deny: boolean): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name,
      namespace: "default",
      labels: { "butler.test/webhook": webhook, ...(deny ? { [DENY_LABEL]: "true" } : {}) },
    },
  });
}

/** Waits until the API server's webhook informer has the configuration (a create is then refused). */
function untilRefused(webhook: string): Promise<Run> {
  return untilRun(
    () => kubectl(["create", "--dry-run=server", "-f", "-"], { stdin: configMap(webhook, "probe", true) }),
    (r) => r.code !== 0,
    { timeoutMs: 10_000, intervalMs: 200 },
  );
}

Deno.test("the hook service serves HTTPS with a certificate of the test CA", async () => {
  const { hookCertFile, hookKeyFile } = cluster();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env", "--allow-read", "main.ts"],
    cwd: ROOT,
    env: { PORT: "0", HOST: "127.0.0.1", TLS_CERT_FILE: hookCertFile, TLS_KEY_FILE: hookKeyFile },
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!/"port":\d+/.test(text)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the service exited: ${text}`);
      text += value;
    }
    reader.releaseLock();
    assert.match(text, /listening on https:\/\/127\.0\.0\.1:/);
    const port = Number(/"port":(\d+)/.exec(text)![1]);
    const res = await fetch(`https://127.0.0.1:${port}/healthz`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
});

Deno.test("the API server calls our admission route over TLS", async (t) => {
  const { caFile } = cluster();
  const service = createTestApp([harnessRoute]);
  const server = serveHookTls(service.app.fetch);
  const url = `https://127.0.0.1:${server.addr.port}/webhooks/validate/harness`;
  try {
    await t.step("a refusal carries our message", async () => {
      await kubectlOk(["apply", "-f", "-"], {
        stdin: webhookConfiguration("harness", url, Deno.readTextFileSync(caFile)),
      });
      const r = await untilRefused("harness");
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        /admission webhook "harness\.butler\.test" denied the request: refused for user "butler-test-admin" by the test webhook/,
      );
    });
    await t.step("an allowed object is created, and impersonation reaches the webhook", async () => {
      await kubectlOk(["create", "--dry-run=server", "-f", "-"], {
        stdin: configMap("harness", "allowed", false),
      });
      const r = await kubectl(["create", "--dry-run=server", "-f", "-"], {
        stdin: configMap("harness", "denied", true),
        as: { user: "alice@example.com", groups: ["system:masters"] },
      });
      assert.match(r.stderr, /refused for user "alice@example\.com"/);
    });
    await t.step("a server the CA bundle does not vouch for is refused (TLS is verified)", async () => {
      const otherCa = Deno.readTextFileSync(`${cluster().dir}/other-ca.crt`);
      await kubectlOk(["apply", "-f", "-"], { stdin: webhookConfiguration("untrusted", url, otherCa) });
      const r = await untilRefused("untrusted");
      assert.match(
        r.stderr,
        /failed calling webhook "untrusted\.butler\.test".*x509: certificate signed by unknown authority/,
      );
    });
  } finally {
    await kubectl(["delete", "validatingwebhookconfiguration", "harness", "untrusted", "--ignore-not-found"]);
    await server.shutdown();
  }
});

Deno.test("impersonated users meet the shipped roles", async (t) => {
  await installManifests();
  await ensureNamespaces(["team-payments", "team-platform"]);
  await kubectlOk([
    "create",
    "rolebinding",
    "test-operators",
    "-n",
    "team-payments",
    "--clusterrole=butler-team-operator",
    "--group=payments-operators",
    "--dry-run=client",
    "-o",
    "yaml",
  ])
    .then((yaml) => kubectlOk(["apply", "-f", "-"], { stdin: yaml }));
  const carol = { user: "carol@example.com", groups: ["payments-operators"] };
  const cluster = (ns: string) =>
    JSON.stringify({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: "carol-dev-1", namespace: ns },
      spec: { providerConfigRef: { name: "proxmox-elastic" } },
    });
  await t.step("an operator of the team may create a TenantCluster in its namespace", async () => {
    await kubectlOk(["create", "--dry-run=server", "-f", "-"], {
      stdin: cluster("team-payments"),
      as: carol,
    });
  });
  await t.step("nowhere else, and no Secrets", async () => {
    const other = await kubectl(["create", "--dry-run=server", "-f", "-"], {
      stdin: cluster("team-platform"),
      as: carol,
    });
    assert.match(
      other.stderr,
      /User "carol@example\.com" cannot create resource "tenantclusters".*in the namespace "team-platform"/,
    );
    const secret = await kubectl([
      "create",
      "secret",
      "generic",
      "x",
      "-n",
      "team-payments",
      "--dry-run=server",
    ], { as: carol });
    assert.match(secret.stderr, /cannot create resource "secrets"/);
  });
  await t.step("without the group, nothing", async () => {
    const r = await kubectl(["auth", "can-i", "create", "tenantclusters", "-n", "team-payments"], {
      as: { user: "carol@example.com" },
    });
    assert.equal(r.stdout.trim(), "no");
  });
  await kubectl(["delete", "rolebinding", "test-operators", "-n", "team-payments"]);
});
