/**
 * The reads a watch cache makes past its memory, shaped as the cache keeps the collection, and the label selectors
 * it answers from memory.
 *
 * @module
 */
import type { FullKubeClient, KubeReader } from "./client.ts";
import type { Projection } from "../foreign/mod.ts";

/** One cached collection. */
export interface CachedCollection {
  /** `/api/v1` or `/apis/<group>/<version>`. */
  readonly prefix: string;
  /** The resource, e.g. `tenantclusters`. */
  readonly resource: string;
  /** Only objects of this name are cached (the watch selects them by `metadata.name`); GETs of others read live. */
  readonly name?: string;
  /** What of each object is read and kept, here and on a live read (default: the whole object). */
  readonly projection?: Projection;
  /** Reduces an object, as projected, to what readers use (default: kept as projected). */
  readonly select?: (raw: unknown) => unknown;
}

/**
 * The label selector `key=value[,key=value]` (equality only, as admission writes them) as a predicate on an
 * object's labels; undefined for any other form, which is read from the API.
 */
export function equalitySelector(
  selector: string,
): ((labels: Record<string, string>) => boolean) | undefined {
  const pairs = selector.split(",").map((term) => /^([^=!<>\s,]+)==?([^=!<>\s,]*)$/.exec(term.trim()));
  if (pairs.some((m) => !m)) return undefined;
  return (labels) => pairs.every((m) => labels[m![1]!] === m![2]);
}

/** An object's labels, or none. */
export function labelsOf(o: unknown): Record<string, string> {
  return (o as { metadata?: { labels?: Record<string, string> } } | null)?.metadata?.labels ?? {};
}

/** Reads of the API, projected and selected as the cache keeps the collection a path is of, when it is one. */
export function apiReads(
  client: FullKubeClient,
  collectionOf: (path: string) => CachedCollection | undefined,
): KubeReader {
  const shaped = (path: string) => {
    const collection = collectionOf(path);
    return {
      projection: collection?.projection ? { projection: collection.projection } : {},
      select: collection?.select ?? ((raw: unknown) => raw),
    };
  };
  return {
    async get(path) {
      const { projection, select } = shaped(path);
      const raw = await client.get(path, projection);
      return raw === undefined ? undefined : select(raw);
    },
    async list(path, options = {}) {
      const { projection, select } = shaped(path);
      const selector = options.labelSelector ? { labelSelector: options.labelSelector } : {};
      return (await client.list(path, { ...projection, ...selector })).map(select);
    },
  };
}
