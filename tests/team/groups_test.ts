import assert from "node:assert/strict";
import { groupSubject, normalizeGroupName, roleBindingName } from "../../hooks/team/mod.ts";

Deno.test("group names normalise as butler-server matches them", async (t) => {
  const cases: [string, string][] = [
    ["engineers@company.com", "engineers"], // the seed's email-style example
    ["CN=Engineers,OU=Groups,DC=company", "engineers"], // the seed's LDAP DN example
    ["x@butlerlabs.dev", "x"],
    ["CN=DevOps,OU=Groups,DC=example,DC=com", "devops"],
    ["  Platform-Engineers  ", "platform-engineers"],
    ["a@b@c.io", "a@b"], // cut at the last @
    ["cn=Lower,OU=x", "lower"],
    ["developers", "developers"],
  ];
  for (const [input, want] of cases) await t.step(input, () => assert.equal(normalizeGroupName(input), want));
});

Deno.test("RBAC subjects use the group as written, behind the OIDC prefix", () => {
  assert.equal(groupSubject("Platform-Engineers", "oidc:"), "oidc:Platform-Engineers");
  assert.equal(groupSubject("developers", ""), "developers");
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
