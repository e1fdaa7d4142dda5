import assert from "node:assert/strict";
import { groupSubjects, roleBindingName } from "../../hooks/team/mod.ts";

Deno.test("group subjects follow the group's identity provider", async (t) => {
  const naming = {
    oidcGroupsPrefix: "oidc:",
    idpGroupPrefixes: { "google-workspace": "google:", "corp-ldap": "" },
  };
  await t.step(
    "an entry naming a provider: that provider's prefix (names compare case-insensitively)",
    () => {
      assert.deepEqual(groupSubjects("developers", ["Google-Workspace"], naming), ["google:developers"]);
      assert.deepEqual(groupSubjects("developers", ["corp-ldap"], naming), ["developers"]);
    },
  );
  await t.step("a provider with no configured prefix falls back to OIDC_GROUPS_PREFIX", () => {
    assert.deepEqual(groupSubjects("developers", ["okta"], naming), ["oidc:developers"]);
  });
  await t.step("no provider: groups from any provider, so every configured prefix", () => {
    assert.deepEqual(groupSubjects("developers", [], naming), [
      "developers",
      "google:developers",
      "oidc:developers",
    ]);
  });
  await t.step("nothing configured: the name as written", () => {
    assert.deepEqual(
      groupSubjects("Platform-Engineers", [], { oidcGroupsPrefix: "", idpGroupPrefixes: {} }),
      [
        "Platform-Engineers",
      ],
    );
  });
});

Deno.test("binding names: sanitised subject plus a hash, so look-alikes never collide", () => {
  const a = roleBindingName("User", "a.b@x.io");
  const b = roleBindingName("User", "a-b@x.io");
  assert.match(a, /^butler-user-a-b-x-io-[0-9a-f]{8}$/);
  assert.notEqual(a, b);
  assert.equal(roleBindingName("User", "A.B@X.io"), a, "users compare case-insensitively");
  assert.notEqual(
    roleBindingName("Group", "Devs"),
    roleBindingName("Group", "devs"),
    "groups compare exactly",
  );
  assert.ok(roleBindingName("Group", "x".repeat(300)).length <= 63);
});

Deno.test("the service's IDP_GROUP_PREFIXES reach the Team hook", async () => {
  const { loadConfig } = await import("../../lib/config/mod.ts");
  const { createApp } = await import("../../lib/http/mod.ts");
  const { HOOK_ROUTES } = await import("../../hooks/mod.ts");
  const loaded = loadConfig({ IDP_GROUP_PREFIXES: "google-workspace=google:", OIDC_GROUPS_PREFIX: "oidc:" });
  assert.ok(loaded.ok);
  const { app } = createApp({
    bodyLimitBytes: 1 << 20,
    clockOverride: false,
    hookConfig: loaded.config.hook,
    routes: HOOK_ROUTES,
    clock: () => new Date("2026-01-01T00:00:00Z"),
    log: () => {},
  });
  const dir = new URL("../fixtures/team/sync/development-full-quotas", import.meta.url).pathname;
  const request = JSON.parse(await Deno.readTextFile(`${dir}/request.json`));
  const groups = request.parent.spec.access.groups as { name: string; identityProvider?: string }[];
  assert.deepEqual(groups.find((g) => g.name === "developers")?.identityProvider, "google-workspace");
  const res = await app.request("/hooks/team/sync", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  assert.equal(res.status, 200);
  const body = await res.json();
  const binding = body.children.find((c: { kind: string; metadata: { name: string } }) =>
    c.kind === "RoleBinding" && c.metadata.name === roleBindingName("Group", "developers")
  );
  assert.deepEqual(binding.subjects.map((s: { name: string }) => s.name), ["google:developers"]);
});
