/**
 * A TenantCluster's quota record: what its Team admitted it to use (its {@linkcode Share}: environment, owner,
 * ProviderConfig and workers) and, while it asks for more, its claim. The controllers keep it in the cluster's
 * ConfigMap child `{tc}-quota` (label `butler.butlerlabs.dev/quota-record`); team roles cannot write ConfigMaps.
 *
 * Why a child, not status: a quota decision must not live only in status, which backups drop and a restore
 * rebuilds; a child is an object of its own that exists exactly as long as its cluster. And Metacontroller writes
 * a child under the resourceVersion it observed (a stale sync gets a conflict, never an overwrite): so a Team that
 * grants a claim grants one version of the record, and the cluster applies the grant only to that version
 * (hooks/tenantcluster/holds.ts).
 *
 * @module
 */
import { z } from "zod";
import { LABELS, OWNER_ANNOTATIONS, ownerOf } from "../../lib/butler/mod.ts";
import { buildObject, type KubeObject } from "../../lib/contract/mod.ts";
import {
  compare,
  formatQuantity,
  multiply,
  parseQuantity,
  type Quantity,
  ZERO,
} from "../../lib/quantity/mod.ts";
import { type EffectiveShape, SOURCES } from "../../lib/shape/mod.ts";
import type { ClusterObject } from "./footprint.ts";
import { CONFIGMAP } from "./metallb.ts";
import type { Load } from "./usage.ts";

/** The name of a cluster's quota record. */
export function recordName(tc: string): string {
  return `${tc}-quota`;
}

const quantity = z.string().max(64).refine((v) => parseQuantity(v).ok, "not a quantity");
const effective = <T extends z.ZodType>(value: T) => z.object({ value, source: z.enum(SOURCES) });

/**
 * What a cluster takes from the limits its team's clusters share: where it counts (environment, owner,
 * ProviderConfig `namespace/name`) and its workers (count, and per node CPU, memory and disk, with their sources
 * as `status.effective` shows them).
 */
export const Share = z.object({
  env: z.string().optional(),
  owner: z.string().optional(),
  provider: z.string().optional(),
  workerCount: effective(z.number().int().min(1)),
  workerCPU: effective(quantity),
  workerMemory: effective(quantity),
  workerDisk: effective(quantity),
});
/** A {@linkcode Share}. */
export type Share = z.infer<typeof Share>;

/** A cluster's share as it asks for it now: its labels and owner, the provider it resolves to, its shape. */
export function shareOf(
  cluster: { readonly metadata: { readonly labels?: unknown; readonly annotations?: unknown } },
  provider: string | undefined,
  shape: EffectiveShape,
): Share {
  const env = (cluster.metadata.labels as Record<string, string> | undefined)?.[LABELS.environment];
  const owner = ownerOf(cluster.metadata.annotations as Record<string, string> | undefined);
  return {
    ...(env !== undefined ? { env } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(provider !== undefined ? { provider } : {}),
    workerCount: shape.workerCount,
    workerCPU: shape.workerCPU,
    workerMemory: shape.workerMemory,
    workerDisk: shape.workerDisk,
  };
}

const parsed = (v: string): Quantity => {
  const p = parseQuantity(v);
  return p.ok ? p.value : ZERO;
};

/** A share's load: its place, its worker count, and each per-node quantity times that count. */
export function shareLoad(s: Share): Load {
  const n = s.workerCount.value;
  return {
    ...(s.env !== undefined ? { env: s.env } : {}),
    ...(s.owner !== undefined ? { owner: s.owner } : {}),
    ...(s.provider !== undefined ? { provider: s.provider } : {}),
    nodes: n,
    cpu: multiply(parsed(s.workerCPU.value), n),
    memory: multiply(parsed(s.workerMemory.value), n),
    storage: multiply(parsed(s.workerDisk.value), n),
  };
}

/** Whether `within` takes no more than `share` anywhere: the same place, and no dimension larger. */
export function shareCovers(share: Share, within: Share): boolean {
  const a = shareLoad(share), b = shareLoad(within);
  return a.env === b.env && a.owner === b.owner && a.provider === b.provider && b.nodes <= a.nodes &&
    compare(b.cpu, a.cpu) <= 0 && compare(b.memory, a.memory) <= 0 && compare(b.storage, a.storage) <= 0;
}

/** Whether two shares ask for the same (sources aside). */
export function sameShare(a: Share, b: Share): boolean {
  return shareCovers(a, b) && shareCovers(b, a) && a.workerCount.value === b.workerCount.value;
}

/** A share as a TenantCluster admission's checks read one (its labels, owner and explicit workers). */
export function shareObject(name: string, s: Share): ClusterObject {
  return {
    metadata: {
      name,
      labels: s.env !== undefined ? { [LABELS.environment]: s.env } : {},
      annotations: s.owner !== undefined ? { [OWNER_ANNOTATIONS[0]]: s.owner } : {},
    },
    spec: {
      workers: {
        replicas: s.workerCount.value,
        machineTemplate: {
          cpu: s.workerCPU.value,
          memory: s.workerMemory.value,
          diskSize: s.workerDisk.value,
        },
      },
    },
  };
}

/** What a change asks for beyond a share, in words: `workers 2 -> 3, environment dev -> prod`. */
export function describeChange(from: Share, to: Share): string {
  const fields: [string, unknown, unknown][] = [
    ["workers", from.workerCount.value, to.workerCount.value],
    ["CPU per worker", from.workerCPU.value, to.workerCPU.value],
    ["memory per worker", from.workerMemory.value, to.workerMemory.value],
    ["disk per worker", from.workerDisk.value, to.workerDisk.value],
    ["environment", from.env ?? "none", to.env ?? "none"],
    ["owner", from.owner ?? "none", to.owner ?? "none"],
    ["ProviderConfig", from.provider ?? "none", to.provider ?? "none"],
  ];
  const changed = fields.filter(([, a, b]) => a !== b).map(([what, a, b]) => `${what} ${a} -> ${b}`);
  return changed.join(", ").slice(0, 512);
}

/** A quota record as read: the version it was read at, whose it is, and what it holds that reads. */
export interface ObservedRecord {
  readonly name: string;
  /** Its resourceVersion: a Team grants the claim of one version. */
  readonly version: string;
  /** The UID of the TenantCluster that owns it (its controller reference). */
  readonly owner?: string | undefined;
  /** The raw object, to keep as it is when nothing is decided. */
  readonly raw: KubeObject;
  readonly admitted?: Share | undefined;
  readonly claim?: Share | undefined;
}

const json = (v: unknown): unknown => {
  if (typeof v !== "string" || v.length > 4096) return undefined;
  try {
    return JSON.parse(v);
  } catch {
    return undefined;
  }
};

/** A quota record ConfigMap as read; a part that does not read is left out (as if absent). */
export function readRecord(raw: unknown): ObservedRecord | undefined {
  const o = raw as KubeObject & { data?: Record<string, unknown> };
  const m = o?.metadata;
  if (typeof m?.name !== "string" || typeof m.resourceVersion !== "string") return undefined;
  const refs = (m as { ownerReferences?: unknown }).ownerReferences;
  const owner = Array.isArray(refs) ? refs.find((r) => r?.controller === true)?.uid : undefined;
  const part = (k: string) => {
    const p = Share.safeParse(json(o.data?.[k]));
    return p.success ? p.data : undefined;
  };
  return {
    name: m.name,
    version: m.resourceVersion,
    owner: typeof owner === "string" ? owner : undefined,
    raw: o,
    admitted: part("admitted"),
    claim: part("claim"),
  };
}

/** A share as the record's data holds it: one line of JSON, keys in a fixed order. */
function shareText(s: Share): string {
  const q = (v: string) => formatQuantity(parsed(v));
  return JSON.stringify({
    env: s.env,
    owner: s.owner,
    provider: s.provider,
    workerCount: s.workerCount,
    workerCPU: { value: q(s.workerCPU.value), source: s.workerCPU.source },
    workerMemory: { value: q(s.workerMemory.value), source: s.workerMemory.source },
    workerDisk: { value: q(s.workerDisk.value), source: s.workerDisk.source },
  });
}

/** The record a cluster writes: what was admitted, and what it claims beyond it. */
export function recordObject(
  tc: string,
  namespace: string,
  content: { readonly admitted?: Share | undefined; readonly claim?: Share | undefined },
): KubeObject {
  return buildObject(CONFIGMAP, {
    name: recordName(tc),
    namespace,
    labels: { [LABELS.quotaRecord]: "true", [LABELS.tenant]: tc, [LABELS.managedBy]: "butler" },
  }, {
    data: {
      ...(content.admitted ? { admitted: shareText(content.admitted) } : {}),
      ...(content.claim ? { claim: shareText(content.claim) } : {}),
    },
  });
}
