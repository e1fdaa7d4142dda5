/**
 * `npx -y deno@2.9.6 bench hooks/networkpool/sync_bench.ts`
 *
 * A NetworkPool sync through the HTTP route (JSON parse, envelope validation, hook, strict response check,
 * JSON serialisation): a /12 whose ledger holds 5,000 grants, with 5,000 IPAllocations related, 10 of them new.
 */
import { HOOK_ROUTES } from "../mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import { encodeGrant } from "./ledger.ts";

const GRANTS = 5000;
const NEW = 10;
const base = 0x0a100000n; // 10.16.0.0/12
const grants: Record<string, string> = {};
const related: Record<string, unknown> = {};
for (let i = 0; i < GRANTS + NEW; i++) {
  const uid = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  if (i < GRANTS) {
    const start = base + BigInt(i) * 16n;
    grants[uid] = encodeGrant(4, { start, end: start + 7n }, "2026-11-20T00:00:00Z");
  }
  related[`team-${i % 50}/tc-${i}-lb`] = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `tc-${i}-lb`,
      namespace: `team-${i % 50}`,
      uid,
      generation: 1,
      creationTimestamp: "2026-11-20T00:00:00Z",
      labels: {
        "butler.butlerlabs.dev/network-pool": "big",
        "butler.butlerlabs.dev/allocation-type": "loadbalancer",
      },
    },
    spec: { poolRef: { name: "big", namespace: "butler-system" }, type: "loadbalancer", count: 8 },
  };
}
const body = JSON.stringify({
  controller: { metadata: { name: "butler-networkpool" } },
  object: {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name: "big", namespace: "butler-system", uid: "pool", generation: 1 },
    spec: { cidr: "10.16.0.0/12", reserved: [{ cidr: "10.31.255.0/24" }] },
    status: { grants },
  },
  attachments: {},
  related: { "IPAllocation.butler.butlerlabs.dev/v1alpha1": related },
  finalizing: false,
});
const { app } = createTestApp(HOOK_ROUTES);

Deno.bench(
  `NetworkPool sync over HTTP: /12, ${GRANTS} grants, ${NEW} new (${
    (body.length / 1e6).toFixed(1)
  } MB request)`,
  async () => {
    const res = await app.request("/hooks/networkpool/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    await res.arrayBuffer();
  },
);
