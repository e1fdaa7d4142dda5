/**
 * Each OpenAPI format the API server checks, with a few values of kube-openapi's own tables (pkg/validation/strfmt)
 * it admits and refuses. The real API server tier judges every value of those tables (tests/api/meta_corpus.api.ts).
 */
import assert from "node:assert/strict";
import { formatError, supportedFormats } from "../../lib/schema/mod.ts";

const CASES: Readonly<Record<string, readonly [readonly string[], readonly string[]]>> = {
  uri: [["http://somewhere.com", "/a/b", "mailto:x"], ["somewhere.com", "", "http://a b.com"]],
  email: [["blah@gmail.com", `"Fred Bloggs"@example.com`, "Gogh Fir <gf@example.com>"], [
    "somebody@somewhere@com",
  ]],
  hostname: [["somewhere.com", "www.詹姆斯.org"], ["somewhere.com!", "www.example-.org", "a.b.c.d"]],
  ipv4: [["192.168.254.1", "010.0.0.1"], ["192.168.254.256", "::1"]],
  ipv6: [["::1", "::ffff:1.2.3.4"], ["127.0.0.1", "fe80::1%eth0"]],
  cidr: [["192.168.254.1/24", "2001:db8:a0b:12f0::1/32"], ["192.168.254.1/33", "10.0.0.1"]],
  mac: [["01:02:03:04:05:06", "0102.0304.0506"], ["01:02:03:04:05"]],
  uuid: [["a8098c1a-f86e-11da-bd1a-00112444be1e"], ["not-a-uuid"]],
  uuid4: [["f47ac10b-58cc-4372-a567-0e02b2c3d479"], ["a8098c1a-f86e-11da-bd1a-00112444be1e"]],
  isbn10: [["0321751043"], ["836217463"]],
  isbn13: [["978-0321751041"], ["978-0321751042"]],
  creditcard: [["4111-1111-1111-1111"], ["9999-9999-9999-999"]],
  ssn: [["111-11-1111"], ["999 99 999"]],
  hexcolor: [["#FFFFFF", "fff"], ["#fffffffz"]],
  rgbcolor: [["rgb(255,255,255)"], ["rgb(300,0,0)"]],
  byte: [["ZWxpemFiZXRocG9zZXk="], ["ZWxpemFiZXRocG9zZXk"]],
  date: [["2014-12-15", "2024-02-29"], ["2023-02-29", "2014-12-15T19:30:20Z"]],
  "date-time": [["2014-12-15T19:30:20Z", "2014-12-15t19:30:20.000+01:00"], [
    "yesterday",
    "2014-12-15T24:00:00Z",
  ]],
  duration: [["1h30m", "3 days", "-1.5s"], ["soon", "1"]],
  bsonobjectid: [["507f1f77bcf86cd799439011"], ["507f1f77bcf86cd79943901"]],
  "k8s-short-name": [["my-name"], ["My-Name", "a.b"]],
};

Deno.test("every format the API server checks, as kube-openapi's tables say", async (t) => {
  for (const [format, [valid, invalid]] of Object.entries(CASES)) {
    await t.step(format, () => {
      for (const v of valid) {
        assert.equal(formatError(format, "spec.f", v), undefined, `${format} admits ${v}`);
      }
      for (const v of invalid) {
        assert.deepEqual(
          formatError(format, "spec.f", v)?.detail,
          `spec.f in body must be of type ${format}: ${JSON.stringify(v)}`,
        );
      }
    });
  }
  await t.step("a format the API server does not check (or not yet) is not checked", () => {
    assert.equal(formatError("int32", "spec.f", "x"), undefined);
    assert.equal(formatError("k8s-short-name", "spec.f", "My-Name", 30), undefined);
    assert.equal(supportedFormats(30).has("k8sshortname"), false);
  });
});
