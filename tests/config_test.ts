import assert from "node:assert/strict";
import { connectionLimits, loadConfig } from "../lib/config/mod.ts";

Deno.test("configuration from the environment", async (t) => {
  await t.step("defaults", () => {
    const r = loadConfig({});
    assert.ok(r.ok);
    assert.deepEqual(r.config, {
      port: 8080,
      host: "0.0.0.0",
      bodyLimitBytes: 16 * 1024 * 1024,
      clockOverride: false,
      shutdownDrainSeconds: 0,
      shutdownTimeoutSeconds: 25,
      workers: 2,
      queueLimit: 4,
      queueBytes: 48 * 1024 * 1024,
      deadlineSeconds: 15,
      metricsAuth: "none",
      admission: { bodyLimitBytes: 7 * 1024 * 1024, concurrency: 64, queueBytes: 16 * 1024 * 1024 },
      hook: { oidcGroupsPrefix: "", idpGroupPrefixes: {} },
      connections: {
        hooks: {
          maxConnections: 128,
          handshakeSeconds: 10,
          headerSeconds: 15,
          idleSeconds: 120,
          bodySeconds: 30,
        },
        webhooks: {
          maxConnections: 256,
          handshakeSeconds: 10,
          headerSeconds: 15,
          idleSeconds: 120,
          bodySeconds: 10,
        },
      },
      bodyReadSeconds: { hooks: 30, webhooks: 10 },
      readingBytes: { hooks: 2 * 1024 * 1024, webhooks: 4 * 1024 * 1024 },
    });
  });
  await t.step("connections: each listener's cap and deadlines, and how its bodies are read", () => {
    const r = loadConfig({
      MAX_CONNECTIONS: "32",
      WEBHOOK_MAX_CONNECTIONS: "512",
      HANDSHAKE_TIMEOUT_SECONDS: "3",
      HEADER_TIMEOUT_SECONDS: "4",
      IDLE_TIMEOUT_SECONDS: "5",
      BODY_TIMEOUT_SECONDS: "6",
      WEBHOOK_BODY_TIMEOUT_SECONDS: "7",
      READING_BYTES: "65536",
      WEBHOOK_READING_BYTES: "131072",
    });
    assert.ok(r.ok);
    assert.deepEqual(r.config.connections, {
      // The hooks' listener serves reviews too without a webhook listener: its backstop is the longer time.
      hooks: { maxConnections: 32, handshakeSeconds: 3, headerSeconds: 4, idleSeconds: 5, bodySeconds: 7 },
      webhooks: {
        maxConnections: 512,
        handshakeSeconds: 3,
        headerSeconds: 4,
        idleSeconds: 5,
        bodySeconds: 7,
      },
    });
    assert.deepEqual(r.config.bodyReadSeconds, { hooks: 6, webhooks: 7 });
    assert.deepEqual(r.config.readingBytes, { hooks: 65536, webhooks: 131072 });
    assert.deepEqual(connectionLimits(r.config.connections.webhooks), {
      maxConnections: 512,
      handshakeMs: 3000,
      headerMs: 4000,
      idleMs: 5000,
      bodyMs: 7000,
    });
  });
  await t.step("values are read and empty means unset", () => {
    const r = loadConfig({
      PORT: "9090",
      CLOCK_OVERRIDE: "true",
      BODY_LIMIT_BYTES: "",
      OIDC_GROUPS_PREFIX: "oidc:",
      IDP_GROUP_PREFIXES: " Google-Workspace=google: , corp-ldap= ",
    });
    assert.ok(r.ok);
    assert.equal(r.config.port, 9090);
    assert.equal(r.config.clockOverride, true);
    assert.equal(r.config.bodyLimitBytes, 16 * 1024 * 1024);
    assert.equal(r.config.hook.oidcGroupsPrefix, "oidc:");
    assert.deepEqual(r.config.hook.idpGroupPrefixes, { "google-workspace": "google:", "corp-ldap": "" });
  });
  const bad: [Record<string, string>, string][] = [
    [{ PORT: "http" }, 'PORT must be an integer from 0 to 65535, got "http"'],
    [{ PORT: "70000" }, 'PORT must be an integer from 0 to 65535, got "70000"'],
    [{ BODY_LIMIT_BYTES: "-1" }, "BODY_LIMIT_BYTES must be an integer from 1024 to 1073741824"],
    [{ WEBHOOK_CONCURRENCY: "0" }, 'WEBHOOK_CONCURRENCY must be an integer from 1 to 4096, got "0"'],
    [{ WEBHOOK_BODY_LIMIT_BYTES: "1" }, "WEBHOOK_BODY_LIMIT_BYTES must be an integer from 1024 to 67108864"],
    [{ CLOCK_OVERRIDE: "yes" }, 'CLOCK_OVERRIDE must be "true" or "false"'],
    [{ MAX_CONNECTIONS: "0" }, 'MAX_CONNECTIONS must be an integer from 1 to 65536, got "0"'],
    [{ IDLE_TIMEOUT_SECONDS: "forever" }, "IDLE_TIMEOUT_SECONDS must be an integer from 1 to 3600"],
    [{ WEBHOOK_READING_BYTES: "1024" }, "WEBHOOK_READING_BYTES must be an integer from 65536 to 1073741824"],
    [{ IDP_GROUP_PREFIXES: "google:" }, 'IDP_GROUP_PREFIXES entries must be name=prefix, got "google:"'],
    [{ IDP_GROUP_PREFIXES: "a=x:,A=y:" }, 'IDP_GROUP_PREFIXES names "a" twice'],
    [{ SHUTDOWN_TIMEOUT_SECONDS: "0" }, "SHUTDOWN_TIMEOUT_SECONDS must be an integer from 1 to 600"],
    [{ TLS_CERT_FILE: "/tls/tls.crt" }, "TLS_CERT_FILE and TLS_KEY_FILE must be set together"],
    [{ TLS_KEY_FILE: "/tls/tls.key" }, "TLS_CERT_FILE and TLS_KEY_FILE must be set together"],
    [
      { TLS_CLIENT_CA_FILE: "/tls/ca.crt" },
      "TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates are asked for over TLS",
    ],
    [{ TLS_RELOAD_SECONDS: "-1" }, 'TLS_RELOAD_SECONDS must be an integer from 0 to 3600, got "-1"'],
    [{ METRICS_AUTH: "token" }, 'METRICS_AUTH must be "kubernetes" or "none"'],
    [
      { TLS_CERT_FILE: "/tls/tls.crt", TLS_KEY_FILE: "/tls/tls.key", HOOK_CLIENT_NAMES: "metacontroller" },
      "HOOK_CLIENT_NAMES (the common names of Metacontroller's client certificates) needs TLS_CLIENT_CA_FILE",
    ],
    [
      {
        TLS_CERT_FILE: "/tls/tls.crt",
        TLS_KEY_FILE: "/tls/tls.key",
        TLS_CLIENT_CA_FILE: "/tls/ca.crt",
        HOOK_CLIENT_NAMES: " , ",
      },
      "HOOK_CLIENT_NAMES (the common names of Metacontroller's client certificates) needs TLS_CLIENT_CA_FILE, and at least one name",
    ],
  ];
  await t.step("TLS files are read together", () => {
    const r = loadConfig({ TLS_CERT_FILE: "/tls/tls.crt", TLS_KEY_FILE: "/tls/tls.key" });
    assert.ok(r.ok);
    assert.deepEqual(r.config.tls, { certFile: "/tls/tls.crt", keyFile: "/tls/tls.key", reloadSeconds: 10 });
    const m = loadConfig({
      TLS_CERT_FILE: "/tls/tls.crt",
      TLS_KEY_FILE: "/tls/tls.key",
      TLS_CLIENT_CA_FILE: "/tls/ca.crt",
      TLS_RELOAD_SECONDS: "0",
    });
    assert.ok(m.ok);
    assert.deepEqual(m.config.tls, {
      certFile: "/tls/tls.crt",
      keyFile: "/tls/tls.key",
      clientCaFile: "/tls/ca.crt",
      reloadSeconds: 0,
    });
    const named = loadConfig({
      TLS_CERT_FILE: "/tls/tls.crt",
      TLS_KEY_FILE: "/tls/tls.key",
      TLS_CLIENT_CA_FILE: "/tls/ca.crt",
      HOOK_CLIENT_NAMES: "metacontroller, metacontroller-next",
    });
    assert.ok(named.ok);
    assert.deepEqual(named.config.tls?.clientNames, ["metacontroller", "metacontroller-next"]);
  });
  for (const [env, message] of bad) {
    await t.step(`rejects ${JSON.stringify(env)}`, () => {
      const r = loadConfig(env);
      assert.ok(!r.ok);
      assert.ok(r.message.startsWith(message), r.message);
    });
  }
});

Deno.test("webhook client authentication: configured together, on the webhook listener", () => {
  const webhook = {
    WEBHOOK_PORT: "9443",
    WEBHOOK_TLS_CERT_FILE: "/tls/tls.crt",
    WEBHOOK_TLS_KEY_FILE: "/tls/tls.key",
  };
  const r = loadConfig({
    ...webhook,
    WEBHOOK_CLIENT_CA_FILE: "/tls/ca.crt",
    WEBHOOK_CLIENT_NAMES: " kube-apiserver-webhook-client , other ",
  });
  assert.ok(r.ok);
  assert.deepEqual(r.config.webhook?.client, {
    caFile: "/tls/ca.crt",
    names: ["kube-apiserver-webhook-client", "other"],
  });
  const refused = [
    { ...webhook, WEBHOOK_CLIENT_NAMES: "kube-apiserver-webhook-client" },
    { ...webhook, WEBHOOK_CLIENT_CA_FILE: "/tls/ca.crt" },
    { WEBHOOK_CLIENT_CA_FILE: "/tls/ca.crt", WEBHOOK_CLIENT_NAMES: "kube-apiserver-webhook-client" },
    { ...webhook, WEBHOOK_CLIENT_CA_FILE: "/tls/ca.crt", WEBHOOK_CLIENT_NAMES: " , " },
  ];
  for (const env of refused) {
    const bad = loadConfig(env);
    assert.ok(!bad.ok, JSON.stringify(env));
    assert.match(bad.message, /WEBHOOK_CLIENT_NAMES \(the API server's client certificate names\)/);
  }
});

Deno.test("the environment is read variable by variable, and only what the process may read", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-env=PORT,LOG_TOKENS,LOG_STREAM",
      new URL("./read_env_fixture.ts", import.meta.url).pathname,
    ],
    env: { PORT: "8443", SECRET: "s3cret", LOG_TOKENS: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    // SECRET is not allowed: unset to the process, not an error that stops it.
    before: { PORT: "8443", SECRET: null, LOG_TOKENS: "1" },
    // The yaml library's token dump is off whatever the environment says.
    after: { LOG_TOKENS: null },
  });
});
