/**
 * `npx -y deno@2.9.6 bench --allow-read --allow-env bench/foreign_bench.ts`
 *
 * What the door for foreign bytes costs (issue #55), against the work it guards:
 * - a watch stream's events split from one-byte chunks, for an event of 64 KiB and of 256 KiB: linear in the bytes
 *   (four times the bytes, about four times the time; the reader before issue #55 searched the whole buffer at every
 *   chunk, sixteen times);
 * - a list page of 500 TenantClusters as the admission cache reads it (a projection of the fields admission uses)
 *   against `JSON.parse` of the whole page, the work it replaced; and the same page when each cluster carries 16 KiB
 *   of addon values the projection skips.
 */
import { readEvents } from "../lib/kube/chunks.ts";
import { createHeapBudget, projectForeign } from "../lib/foreign/mod.ts";
import { TENANT_CLUSTER_PROJECTION } from "../lib/api/mod.ts";

/** A stream of `bytes` in chunks of `size`. */
function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

for (const kib of [64, 256]) {
  const line = new TextEncoder().encode(`{"type":"ADDED","object":{"v":"${"x".repeat(kib * 1024 - 40)}"}}\n`);
  Deno.bench({
    name: `a ${kib} KiB event in one-byte chunks`,
    group: "events",
    baseline: kib === 64,
    async fn() {
      let lines = 0;
      await readEvents(chunked(line, 1), 1 << 20, "/bench", () => {}, () => lines++);
      if (lines !== 1) throw new Error("one line");
    },
  });
}

function cluster(i: number, values: number): unknown {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: {
      name: `c${i}`,
      namespace: `team-${i % 20}`,
      uid: `uid-${i}`,
      resourceVersion: String(1000 + i),
      labels: { "butler.butlerlabs.dev/environment": "prod", "app": "x" },
      annotations: { "butler.butlerlabs.dev/owner": `u${i}@example.com` },
      managedFields: [{
        manager: "kubectl",
        operation: "Update",
        fieldsV1: { "f:spec": { "f:workers": {} } },
      }],
    },
    spec: {
      kubernetesVersion: "v1.31.0",
      workers: { replicas: 3, machineTemplate: { cpu: "4", memory: "16Gi" } },
      addons: [{ name: "monitoring", values: { blob: "v".repeat(values) } }],
    },
    status: {
      effective: { workers: { value: { replicas: 3 } } },
      conditions: [{ type: "Ready", status: "True" }],
    },
  };
}

const budget = createHeapBudget();
for (const values of [16, 16 * 1024]) {
  const page = new TextEncoder().encode(
    JSON.stringify({
      metadata: { resourceVersion: "1" },
      items: Array.from({ length: 500 }, (_, i) => cluster(i, values)),
    }),
  );
  const label = `500 TenantClusters with ${values} bytes of addon values (${
    (page.length / 1e6).toFixed(1)
  } MB)`;
  Deno.bench({
    name: `${label}: JSON.parse of the page`,
    group: label,
    baseline: true,
    fn: () => void JSON.parse(new TextDecoder().decode(page)),
  });
  Deno.bench({
    name: `${label}: the admission cache's projection`,
    group: label,
    fn: () =>
      void projectForeign(page, {
        kind: "object",
        fields: { items: { kind: "array", items: TENANT_CLUSTER_PROJECTION } },
      }, budget),
  });
}
