/**
 * The pool registry: a ConfigMap `butler-pool-registry` in `butler-system` where NetworkPool admission records
 * the space of every pool it admits (a create, or an update that changes what the pool can grant) until the API
 * server has surely stored it. Two pools admitted at once both write it with the resourceVersion they read as
 * precondition: the second loses, reads again, and sees the first one's space, so at most one of two overlapping
 * pools gets in (the quota ledger's protocol, docs/design.md#race-free-quotas). An entry stops counting after
 * {@linkcode ADMITTED_STORED_WITHIN_SECONDS}; by then the pool is stored (and listed) or its create failed.
 *
 * @module
 */
import { z } from "zod";
import { SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import { ADMITTED_STORED_WITHIN_SECONDS } from "../../lib/contract/mod.ts";
import { type Family, formatSpan, parseRange, type Range } from "../../lib/ipam/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";
import type { NamedSpace, PoolSpace } from "./overlap.ts";

/** The registry's name, in {@linkcode SYSTEM_NAMESPACE}. */
export const REGISTRY_NAME = "butler-pool-registry";

/** The most the registry's data may hold: entries live 45 s, so this bounds pool admissions in flight. */
export const REGISTRY_MAX_BYTES = 256 * 1024;

/** The API path of the registry (`name` omitted: the collection, for a create). */
export function registryPath(name?: string): string {
  return `/api/v1/namespaces/${SYSTEM_NAMESPACE}/configmaps${name ? `/${name}` : ""}`;
}

const Entry = z.object({ at: z.string(), ranges: z.array(z.string()).min(1) });

/** One admitted pool's space, and when it was admitted. */
export interface RegistryEntry extends NamedSpace {
  readonly at: Date;
}

/** The registry as read: its entries by pool (`namespace/name`) and the resourceVersion a write is conditioned on. */
export interface PoolRegistry {
  readonly entries: ReadonlyMap<string, RegistryEntry>;
  readonly resourceVersion?: string;
}

/** ConfigMap keys allow `[-._a-zA-Z0-9]`: a namespace (a DNS label, no dot) and a name, joined by a dot. */
function keyOf(pool: string): string {
  return pool.replace("/", ".");
}

function poolOf(key: string): string {
  const dot = key.indexOf(".");
  return `${key.slice(0, dot)}/${key.slice(dot + 1)}`;
}

/**
 * Reads the registry ConfigMap (or its absence). An entry that cannot be read is dropped at the next write: it
 * is at most 45 s of one admission, and every stored pool is listed anyway.
 */
export function readRegistry(configMap: unknown): PoolRegistry {
  const cm = configMap as
    | { metadata?: { resourceVersion?: string }; data?: Record<string, unknown> }
    | undefined;
  const entries = new Map<string, RegistryEntry>();
  for (const [key, value] of Object.entries(cm?.data ?? {})) {
    const entry = typeof value === "string" ? parseEntry(poolOf(key), value) : undefined;
    if (entry) entries.set(entry.pool, entry);
  }
  const rv = cm?.metadata?.resourceVersion;
  return { entries, ...(rv ? { resourceVersion: rv } : {}) };
}

function parseEntry(pool: string, text: string): RegistryEntry | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = Entry.safeParse(json);
  const at = parsed.success ? parseTime(parsed.data.at) : undefined;
  if (!parsed.success || !at) return undefined;
  const ranges: Range[] = [];
  let family: Family | undefined;
  for (const text of parsed.data.ranges) {
    const r = parseRange(text);
    if (!r.ok || (family !== undefined && r.value.family !== family)) return undefined;
    family = r.value.family;
    ranges.push({ start: r.value.start, end: r.value.end });
  }
  return { pool, family: family!, ranges, at };
}

/** Whether an entry still counts at `now`: its pool may not be stored yet. */
export function entryFresh(entry: RegistryEntry, now: Date): boolean {
  return now.getTime() - entry.at.getTime() < ADMITTED_STORED_WITHIN_SECONDS * 1000;
}

/**
 * The registry ConfigMap after recording `pool`'s space at `now`, entries no longer counting dropped, keys sorted,
 * the resourceVersion read kept as precondition; and its data's size in bytes.
 */
export function registryObject(
  registry: PoolRegistry,
  pool: string,
  space: PoolSpace,
  now: Date,
): { body: Record<string, unknown>; bytes: number } {
  const entries = new Map([...registry.entries].filter(([key, e]) => key !== pool && entryFresh(e, now)));
  entries.set(pool, { pool, ...space, at: now });
  const data = Object.fromEntries(
    [...entries.keys()].sort().map((key) => {
      const e = entries.get(key)!;
      const ranges = e.ranges.map((r) => formatSpan(e.family, r));
      return [keyOf(key), JSON.stringify({ at: formatTime(e.at), ranges })];
    }),
  );
  const bytes = Object.entries(data).reduce((n, [k, v]) => n + k.length + v.length, 0);
  return {
    bytes,
    body: {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: REGISTRY_NAME,
        namespace: SYSTEM_NAMESPACE,
        // In-flight admission state (entries live 45 s): never worth restoring, and its policy refuses a restore.
        labels: {
          "app.kubernetes.io/managed-by": "butler-admission",
          "velero.io/exclude-from-backup": "true",
        },
        annotations: {
          "butler.butlerlabs.dev/description":
            "NetworkPools admitted in the last 45 s and what they can grant, written by the NetworkPool admission webhook; do not edit.",
        },
        ...(registry.resourceVersion ? { resourceVersion: registry.resourceVersion } : {}),
      },
      data,
    },
  };
}
