import assert from "node:assert/strict";
import { TeamSpec } from "../lib/api/mod.ts";
import { clusterObject, preview, quantityProblems, renderPreview } from "./cluster_create.ts";

const spec = TeamSpec.parse({
  access: { users: [{ name: "alice@example.com", role: "admin" }] },
  providerConfigRef: { name: "harvester-prod" },
  resourceLimits: { defaultCPUPerNode: "2" },
  clusterDefaults: { kubernetesVersion: "v1.31.0", workerCount: 2, workerCPU: 4 },
  environments: [{ name: "prod", clusterDefaults: { workerCount: 3, workerMemoryGi: 8 } }],
});

const request = {
  name: "api",
  team: "payments",
  environment: "prod",
  creator: "alice@example.com",
  disk: "50Gi",
};

Deno.test("cluster create", async (t) => {
  await t.step("the object: environment label, the caller as creator, only the fields given", () => {
    assert.deepEqual(clusterObject(request), {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "TenantCluster",
      metadata: {
        name: "api",
        namespace: "team-payments",
        labels: { "butler.butlerlabs.dev/environment": "prod" },
        annotations: { "butler.butlerlabs.dev/creator-email": "alice@example.com" },
      },
      spec: { workers: { machineTemplate: { diskSize: "50Gi" } } },
    });
  });
  await t.step("the preview: each value with its source, the platform's per-node ceiling applied", () => {
    const rows = preview(request, spec, (ref) => ref.namespace === "butler-system");
    assert.equal(
      renderPreview(request, rows),
      "TenantCluster team-payments/api in environment prod, created by alice@example.com:\n" +
        "  kubernetesVersion  v1.31.0                       (team)\n" +
        "  workers            3                             (environment)\n" +
        "  cpu per worker     2                             (platform)\n" +
        "  memory per worker  8Gi                           (environment)\n" +
        "  disk per worker    50Gi                          (explicit)\n" +
        "  providerConfig     butler-system/harvester-prod  (team default)\n",
    );
    const own = preview({ ...request, provider: "nutanix" }, spec, () => false);
    assert.deepEqual(own.at(-1), {
      field: "providerConfig",
      value: "butler-system/nutanix",
      source: "explicit",
    });
  });
  await t.step("quantities that do not read are named by their flag", () => {
    assert.deepEqual(quantityProblems({ cpu: "4", memory: "16GB", disk: "0" }), [
      '--memory must be a positive quantity (e.g. 4, 16Gi), not "16GB"',
      '--disk must be a positive quantity (e.g. 4, 16Gi), not "0"',
    ]);
  });
});
