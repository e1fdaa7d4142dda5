/**
 * Pools never overlap. The overlap arithmetic against a brute-force count of addresses; and NetworkPool
 * admission against an in-memory API with resourceVersion preconditions: for any set of pools created at once,
 * through one to three webhook replicas, with the API server storing each admitted pool late, the pools admitted
 * never share an address they can grant, and every refusal names a pool that really overlaps.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { firstOverlap, overlapRefusal, poolSpace, REGISTRY_NAME } from "../../hooks/networkpool/mod.ts";
import { KubeApiError, type KubeClient } from "../../lib/kube/mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

/** A small IPv4 pool in 10.0.0.0/24: a CIDR, perhaps reserved addresses and tenant ranges. */
const arbPool = fc.record({
  prefix: fc.integer({ min: 26, max: 30 }),
  block: fc.nat(63),
  reserve: fc.boolean(),
  narrow: fc.boolean(),
}).map(({ prefix, block, reserve, narrow }) => {
  const size = 2 ** (32 - prefix);
  const start = (block * size) % 256;
  const spec: Record<string, unknown> = { cidr: `10.0.0.${start}/${prefix}` };
  if (reserve) spec.reserved = [{ cidr: `10.0.0.${start}/${prefix + 1}` }];
  if (narrow) {
    spec.tenantAllocation = { ranges: [{ start: `10.0.0.${start}`, end: `10.0.0.${start + size / 2}` }] };
  }
  return spec;
});

/** The addresses (last octet) a pool can grant, counted one by one. */
function addresses(spec: Record<string, unknown>): Set<number> {
  const space = poolSpace(spec)!;
  const out = new Set<number>();
  for (const r of space.ranges) for (let a = r.start; a <= r.end; a++) out.add(Number(a & 255n));
  return out;
}

const shared = (a: Set<number>, b: Set<number>) => [...a].filter((x) => b.has(x));

Deno.test("firstOverlap finds the lowest shared address, exactly when two pools share one", () => {
  fc.assert(
    fc.property(arbPool, fc.array(arbPool, { maxLength: 4 }), (spec, others) => {
      const named = others.map((o, i) => ({ pool: `ns/p${i}`, ...poolSpace(o)! }));
      const found = firstOverlap(poolSpace(spec)!, named);
      const mine = addresses(spec);
      const common = others.flatMap((o) => shared(mine, addresses(o)));
      if (!common.length) return assert.equal(found, undefined);
      assert.ok(found);
      assert.equal(Number(found.range.start & 255n), Math.min(...common));
      const other = others[Number(found.pool.slice(4))]!;
      for (let a = found.range.start; a <= found.range.end; a++) {
        assert.ok(mine.has(Number(a & 255n)) && addresses(other).has(Number(a & 255n)));
      }
    }),
    { numRuns: 300 },
  );
});

Deno.test("the refusal an allocation gets in an overlapping pool is short and names both pools", () => {
  const o = firstOverlap(poolSpace({ cidr: "10.0.0.0/29" })!, [{
    pool: "infra/legacy",
    ...poolSpace({ cidr: "10.0.0.4/30" })!,
  }])!;
  assert.equal(
    overlapRefusal("butler-system/tiny", o),
    "NetworkPool butler-system/tiny overlaps NetworkPool infra/legacy at 10.0.0.4-10.0.0.7; no new grants until one of them is changed or removed",
  );
});

const REGISTRY = `/api/v1/namespaces/butler-system/configmaps/${REGISTRY_NAME}`;

/** One API server: NetworkPools stored some turns after admission, the registry with resourceVersions. */
function memoryApi(ticks: () => number) {
  const stored: Record<string, unknown>[] = [];
  let registry: Record<string, unknown> | undefined;
  let rv = 0;
  const delay = async () => {
    for (let n = ticks(); n > 0; n--) await Promise.resolve();
  };
  const client: KubeClient = {
    async get(path) {
      await delay();
      return path === REGISTRY && registry ? structuredClone(registry) : undefined;
    },
    async list() {
      await delay();
      return structuredClone(stored);
    },
    async write(method, path, body) {
      await delay();
      const b = body as { metadata: { resourceVersion?: string } };
      const current = (registry?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
      if (method === "POST" ? registry !== undefined : current !== b.metadata.resourceVersion) {
        throw new KubeApiError(409, "Conflict", "the object has been modified", path);
      }
      registry = { ...b, metadata: { ...b.metadata, resourceVersion: String(++rv) } };
      return registry;
    },
  };
  return { client, store: (pool: Record<string, unknown>) => stored.push(pool) };
}

function createReview(name: string, spec: Record<string, unknown>) {
  const object = {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name, namespace: "butler-system", uid: `uid-${name}` },
    spec,
  };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: `review-${name}`,
      kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind: "NetworkPool" },
      resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource: "networkpools" },
      name,
      namespace: "butler-system",
      operation: "CREATE",
      userInfo: { username: "admin" },
      object,
    },
  };
}

Deno.test("pools created at once: the admitted never overlap, and every refusal is justified", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(arbPool, { minLength: 2, maxLength: 6 }),
      fc.integer({ min: 1, max: 3 }),
      fc.infiniteStream(fc.nat(6)),
      async (specs, replicas, turns) => {
        const api = memoryApi(() => turns.next().value);
        const apps = Array.from(
          { length: replicas },
          () => createTestApp(HOOK_ROUTES, { kube: api.client }).app,
        );
        const admitted: { name: string; spec: Record<string, unknown> }[] = [];
        const refused: { spec: Record<string, unknown>; message: string }[] = [];
        await Promise.all(specs.map(async (spec, i) => {
          const name = `p${i}`;
          const res = await apps[i % replicas]!.request("/webhooks/validate/networkpool", {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(createReview(name, spec)),
          });
          assert.equal(res.status, 200);
          const { response } = await res.json();
          if (!response.allowed) return refused.push({ spec, message: response.status.message });
          admitted.push({ name, spec });
          // The API server stores what was admitted a moment later.
          for (let n = turns.next().value * 3; n > 0; n--) await Promise.resolve();
          api.store(createReview(name, spec).request.object);
        }));
        for (let i = 0; i < admitted.length; i++) {
          for (let j = i + 1; j < admitted.length; j++) {
            assert.deepEqual(
              shared(addresses(admitted[i]!.spec), addresses(admitted[j]!.spec)),
              [],
              `${admitted[i]!.name} and ${admitted[j]!.name}`,
            );
          }
        }
        // Every refusal names an admitted pool that really shares addresses with the refused one.
        for (const { spec, message } of refused) {
          const named = /NetworkPool butler-system\/(p\d+) can already grant/.exec(message);
          assert.ok(named, message);
          const other = admitted.find((a) => a.name === named[1]);
          assert.ok(other, `refused for ${named[1]}, which was not admitted: ${message}`);
          assert.notDeepEqual(shared(addresses(spec), addresses(other.spec)), [], message);
        }
      },
    ),
    { numRuns: 150 },
  );
});
