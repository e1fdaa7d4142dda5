import assert from "node:assert/strict";
import { parse } from "yaml";
import { formatFieldError, RULES, validateProviderConfig } from "../../hooks/providerconfig/mod.ts";
import { loadKustomization, type Manifest } from "../../lib/testing/mod.ts";

const base = {
  harvester: {
    provider: "harvester",
    credentialsRef: { name: "c" },
    harvester: { networkName: "default/vlan40" },
  },
  nutanix: {
    provider: "nutanix",
    credentialsRef: { name: "c" },
    nutanix: { endpoint: "https://prism.example.com", clusterUUID: "a", subnetUUID: "b" },
  },
  proxmox: {
    provider: "proxmox",
    credentialsRef: { name: "c" },
    proxmox: {
      endpoint: "https://pve:8006",
      nodes: ["pve-1"],
      storage: "local-lvm",
      vmidRange: { start: 200, end: 999 },
    },
  },
  azure: {
    provider: "azure",
    credentialsRef: { name: "c" },
    azure: { subscriptionID: "s", resourceGroup: "rg" },
  },
  aws: { provider: "aws", credentialsRef: { name: "c" }, aws: { region: "us-east-1" } },
  gcp: { provider: "gcp", credentialsRef: { name: "c" }, gcp: { projectID: "p", region: "us-central1" } },
};
const clone = <T>(v: T): T => structuredClone(v);
const without = <T extends Record<string, unknown>>(o: T, ...keys: string[]) =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/** One violating spec per rule, and what the error must say (upstream's text where upstream has the rule). */
const violations: Record<string, [unknown, string]> = {
  "harvester-section-required": [
    without(base.harvester, "harvester"),
    'spec.harvester: Required value: harvester configuration is required when provider is "harvester"',
  ],
  "nutanix-section-required": [
    without(base.nutanix, "nutanix"),
    'spec.nutanix: Required value: nutanix configuration is required when provider is "nutanix"',
  ],
  "proxmox-section-required": [
    without(base.proxmox, "proxmox"),
    'spec.proxmox: Required value: proxmox configuration is required when provider is "proxmox"',
  ],
  "azure-section-required": [
    without(base.azure, "azure"),
    'spec.azure: Required value: azure configuration is required when provider is "azure"',
  ],
  "aws-section-required": [
    without(base.aws, "aws"),
    'spec.aws: Required value: aws configuration is required when provider is "aws"',
  ],
  "gcp-section-required": [
    without(base.gcp, "gcp"),
    'spec.gcp: Required value: gcp configuration is required when provider is "gcp"',
  ],
  "azure-subscriptionID-required": [
    { ...base.azure, azure: { resourceGroup: "rg" } },
    "spec.azure.subscriptionID: Required value: subscriptionID is required for Azure provider",
  ],
  "azure-resourceGroup-required": [
    { ...base.azure, azure: { subscriptionID: "s", resourceGroup: "" } },
    "spec.azure.resourceGroup: Required value: resourceGroup is required for Azure provider",
  ],
  "aws-region-required": [
    { ...base.aws, aws: {} },
    "spec.aws.region: Required value: region is required for AWS provider",
  ],
  "gcp-projectID-required": [
    { ...base.gcp, gcp: { region: "r" } },
    "spec.gcp.projectID: Required value: projectID is required for GCP provider",
  ],
  "gcp-region-required": [
    { ...base.gcp, gcp: { projectID: "p" } },
    "spec.gcp.region: Required value: region is required for GCP provider",
  ],
  "nutanix-endpoint-https": [
    { ...base.nutanix, nutanix: { ...base.nutanix.nutanix, endpoint: "http://prism" } },
    "spec.nutanix.endpoint: Invalid value: endpoint must use the https:// scheme",
  ],
  "proxmox-endpoint-https": [
    { ...base.proxmox, proxmox: { ...base.proxmox.proxmox, endpoint: "pve:8006" } },
    "spec.proxmox.endpoint: Invalid value: endpoint must use the https:// scheme",
  ],
  "proxmox-nodes-required": [
    { ...base.proxmox, proxmox: { ...base.proxmox.proxmox, nodes: [] } },
    "spec.proxmox.nodes: Required value: at least one node is required for Proxmox provider",
  ],
  "proxmox-vmidrange-start-minimum": [
    { ...base.proxmox, proxmox: { ...base.proxmox.proxmox, vmidRange: { start: 99 } } },
    "spec.proxmox.vmidRange.start: Invalid value: vmidRange.start must be at least 100",
  ],
  "proxmox-vmidrange-end-minimum": [
    { ...base.proxmox, proxmox: { ...base.proxmox.proxmox, vmidRange: { end: 5 } } },
    "spec.proxmox.vmidRange.end: Invalid value: vmidRange.end must be at least 100",
  ],
  "proxmox-vmidrange-order": [
    { ...base.proxmox, proxmox: { ...base.proxmox.proxmox, vmidRange: { start: 500, end: 400 } } },
    "spec.proxmox.vmidRange.start: Invalid value: vmidRange.start must not be greater than vmidRange.end",
  ],
  "scope-teamref-required": [
    { ...base.aws, scope: { type: "team" } },
    'spec.scope.teamRef: Required value: teamRef is required when scope type is "team"',
  ],
  "ipam-poolrefs-required": [
    { ...base.harvester, network: { mode: "ipam", poolRefs: [] } },
    'spec.network.poolRefs: Required value: at least one poolRef is required when network mode is "ipam"',
  ],
  "ipam-forbidden-for-cloud": [
    { ...base.gcp, network: { mode: "ipam", poolRefs: [{ name: "p" }] } },
    "spec.network.mode: Forbidden: IPAM mode is not supported for cloud providers",
  ],
};

Deno.test("every rule rejects its violation with the expected message, and only that rule", async (t) => {
  assert.deepEqual(Object.keys(violations).sort(), RULES.map((r) => r.id).sort(), "one case per rule");
  for (const rule of RULES) {
    await t.step(rule.id, () => {
      const [spec, message] = violations[rule.id]!;
      const errors = validateProviderConfig(spec);
      assert.deepEqual(errors.map((e) => e.rule), [rule.id]);
      assert.equal(formatFieldError(errors[0]!), message);
    });
  }
});

Deno.test("valid specs pass every rule", async (t) => {
  for (const [name, spec] of Object.entries(base)) {
    await t.step(name, () => assert.deepEqual(validateProviderConfig(spec), []));
  }
  await t.step(
    "other providers' sections are ignored",
    () => assert.deepEqual(validateProviderConfig({ ...base.aws, azure: {}, gcp: { projectID: "" } }), []),
  );
  await t.step(
    "ipam with pools on an on-premises provider",
    () =>
      assert.deepEqual(
        validateProviderConfig({
          ...clone(base.harvester),
          network: { mode: "ipam", poolRefs: [{ name: "p" }] },
        }),
        [],
      ),
  );
  await t.step("the seed examples", () => {
    const root = new URL("../fixtures/providerconfig/sync", import.meta.url).pathname;
    for (
      const c of [
        "harvester-prod",
        "nutanix-datacenter",
        "aws-us-east",
        "azure-platform-team",
        "proxmox-elastic",
        "harvester-lab",
      ]
    ) {
      const spec = JSON.parse(Deno.readTextFileSync(`${root}/${c}/request.json`)).object.spec;
      assert.deepEqual(validateProviderConfig(spec), [], c);
    }
  });
});

/** Collects every `x-kubernetes-validations` entry of a schema with the dotted path it sits at. */
function celRules(
  schema: Manifest,
  at: string,
): { at: string; rule: string; message: string; fieldPath: string; reason: string }[] {
  const own = (schema["x-kubernetes-validations"] ?? []).map((v: Manifest) => ({ at, ...v }));
  const children = Object.entries((schema.properties ?? {}) as Record<string, Manifest>)
    .flatMap(([k, s]) => celRules(s, `${at}.${k}`));
  return [...own, ...children];
}

Deno.test("every rule has its CEL twin in the CRD, and the CRD has no other rule", () => {
  const crd = loadKustomization(new URL("../../manifests", import.meta.url).pathname)
    .find((o) => o.kind === "CustomResourceDefinition" && o.spec.names.kind === "ProviderConfig")!;
  const spec = crd.spec.versions[0].schema.openAPIV3Schema.properties.spec;
  const inCrd = celRules(spec, "spec").map((r) => JSON.stringify(r)).sort();
  const inCode = RULES.map((r) =>
    JSON.stringify({ at: r.at, rule: r.cel, message: r.message, fieldPath: r.fieldPath, reason: r.reason })
  ).sort();
  assert.deepEqual(inCrd, inCode);
  void parse;
});
