/**
 * `metadata` judged as the API server judges a custom resource's (`ValidateObjectMetaAccessor` with
 * `NameIsDNSSubdomain`), and the OpenAPI formats of our CRDs, in its words. The real API server tier checks the
 * same over a corpus built from apimachinery's and kube-openapi's own test tables (tests/api/meta_corpus.api.ts).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { judge, type ManifestObject } from "../../lib/schema/mod.ts";
import { KINDS } from "./policies.ts";

const SUBDOMAIN_WORDS =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_VALUE_WORDS =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

function team(metadata: Record<string, unknown>): ManifestObject {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "Team",
    metadata: metadata as ManifestObject["metadata"],
    spec: { displayName: "T", access: { users: [{ name: "ann@example.com", role: "admin" }] } },
  };
}

function refusal(o: ManifestObject): string {
  const v = judge(KINDS, o);
  assert.equal(v.ok, false, `admitted: ${JSON.stringify(o.metadata)}`);
  return v.ok ? "" : v.message;
}

Deno.test("metadata of a custom resource, as the API server judges it", async (t) => {
  await t.step("names are DNS-1123 subdomains: Payments and web_shop are refused", () => {
    assert.equal(
      refusal(team({ name: "Payments" })),
      `The Team "Payments" is invalid: metadata.name: Invalid value: "Payments": ${SUBDOMAIN_WORDS}`,
    );
    const cluster: ManifestObject = {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "TenantCluster",
      metadata: { name: "web_shop", namespace: "team-a" },
      spec: { kubernetesVersion: "v1.31.0", workers: { replicas: 1 } },
    };
    assert.match(
      refusal(cluster),
      /metadata\.name: Invalid value: "web_shop": a lowercase RFC 1123 subdomain/,
    );
    assert.ok(judge(KINDS, team({ name: "web.shop" })).ok);
    assert.match(
      refusal(team({ name: "a".repeat(254) })),
      /metadata\.name: Invalid value: "a{254}": must be no more than 253 characters/,
    );
  });

  await t.step("label keys and values, annotation keys and their total size", () => {
    assert.equal(
      refusal(team({ name: "t", labels: { region: "retail eu" } })),
      `The Team "t" is invalid: metadata.labels: Invalid value: "retail eu": ${LABEL_VALUE_WORDS}`,
    );
    assert.match(
      refusal(team({ name: "t", labels: { "a/b/c": "x" } })),
      /metadata\.labels: Invalid value: "a\/b\/c": a valid label key must consist of alphanumeric characters/,
    );
    assert.match(
      refusal(team({ name: "t", annotations: { "-bad": "x" } })),
      /metadata\.annotations: Invalid value: "-bad": name part must consist of alphanumeric characters/,
    );
    const big = { a: "x".repeat(256 * 1024) };
    assert.match(
      refusal(team({ name: "t", annotations: big })),
      /metadata\.annotations: Too long: may not be more than 262144 bytes/,
    );
    assert.ok(judge(KINDS, team({ name: "t", annotations: { a: "x".repeat(256 * 1024 - 1) } })).ok);
  });

  await t.step("finalizers and owner references", () => {
    assert.match(
      refusal(team({ name: "t", finalizers: ["a/b/c"] })),
      /metadata\.finalizers: Invalid value: "a\/b\/c": a valid label key must consist/,
    );
    assert.match(
      refusal(
        team({ name: "t", ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "c", uid: "" }] }),
      ),
      /metadata\.ownerReferences\.uid: Invalid value: "": must not be empty/,
    );
    assert.match(
      refusal(
        team({ name: "t", ownerReferences: [{ apiVersion: "v1", kind: "Event", name: "e", uid: "u" }] }),
      ),
      /metadata\.ownerReferences: Invalid value: \{"apiVersion":"v1","kind":"Event","name":"e","uid":"u"\}: \/v1, Kind=Event is disallowed from being an owner/,
    );
  });

  await t.step("a metadata field of the wrong JSON type is not decoded: refused before anything else", () => {
    assert.equal(
      refusal(team({ name: "t", labels: { on: true } })),
      'Team in version "v1alpha1" cannot be handled as a Team: json: cannot unmarshal bool into Go struct field ObjectMeta.labels of type string',
    );
  });

  await t.step("no metadata throws: every verdict is admitted or refused in words", () => {
    const text = fc.string({ maxLength: 70 });
    fc.assert(
      fc.property(
        fc.record({
          name: text,
          labels: fc.dictionary(text, fc.oneof(text, fc.boolean()), { maxKeys: 3 }),
          annotations: fc.dictionary(text, text, { maxKeys: 3 }),
          finalizers: fc.array(text, { maxLength: 3 }),
        }, { requiredKeys: ["name"] }),
        (meta) => {
          const v = judge(KINDS, team(meta));
          assert.ok(v.ok || v.message.length > 0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

Deno.test("the OpenAPI formats of our CRDs: an inventory observed 'yesterday' is refused", () => {
  const inventory = (observedAt: string): ManifestObject => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "LoadBalancerInventory",
    metadata: { name: "i", namespace: "team-a" },
    spec: { observedAt, services: [] },
  });
  assert.equal(
    refusal(inventory("yesterday")),
    'The LoadBalancerInventory "i" is invalid: spec.observedAt: Invalid value: "yesterday": spec.observedAt in body must be of type date-time: "yesterday"',
  );
  assert.ok(judge(KINDS, inventory("2026-11-23T10:00:00Z")).ok);
  assert.ok(judge(KINDS, inventory("2026-11-23t10:00:00.5+01:00")).ok);
});
