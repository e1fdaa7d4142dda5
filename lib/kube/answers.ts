/**
 * Reading an API server's answers: the bytes up to a cap, decoded through the door of `lib/foreign` (charged
 * first, or projected), a failed answer's Status, and lists page by page with a page size that shrinks to what fits.
 *
 * @module
 */
import {
  bounded,
  createHeapBudget,
  each,
  ForeignRefused,
  type HeapBudget,
  members,
  parseForeign,
  projectForeign,
  type Projection,
  WHOLE,
} from "../foreign/mod.ts";
import { KubeApiError } from "./errors.ts";

/** What is read of a failed answer's Status: its reason and message, at most 4 KiB each. */
const STATUS = members({ reason: bounded(4096), message: bounded(4096) });
/** A Status is read up to 64 KiB: its parse is charged to a budget of its own, 8 MiB at most. */
const STATUS_BUDGET = createHeapBudget({ maxInFlight: 8 * 1024 * 1024 });

/** A page of a list, as {@linkcode pageProjection} keeps it. */
export interface ListPage {
  readonly items?: unknown[];
  readonly metadata?: { readonly resourceVersion?: string; readonly continue?: string };
}

/** What is kept of a list page: its items (each projected; at most `maxItems`, the rest skipped unbuilt) and its metadata. */
export function pageProjection(items: Projection = WHOLE, maxItems?: number): Projection {
  return members({
    items: each(items, maxItems),
    metadata: members({ resourceVersion: WHOLE, continue: WHOLE }),
  });
}

/**
 * Reads a list page by page through `fetchPage(limit, continue)`, handing each to `onPage`. A page over the answer
 * cap, or whose parse the heap budget cannot hold now, is asked again with half as many objects, down to one: a
 * collection of large objects is paged, never left unread. Past `maxPages` the list stops (returns false).
 */
export async function listPages(
  fetchPage: (limit: number, cont: string | undefined) => Promise<ListPage | undefined>,
  pageSize: number,
  onPage: (page: ListPage) => void,
  maxPages = Infinity,
): Promise<boolean> {
  let limit = pageSize;
  let cont: string | undefined;
  for (let pages = 0;; pages++) {
    if (pages >= maxPages) return false;
    let page: ListPage | undefined;
    try {
      page = await fetchPage(limit, cont);
    } catch (err) {
      const smaller = err instanceof KubeApiError &&
        (err.reason === "TooLarge" || err.reason === "TooCostly") &&
        limit > 1;
      if (!smaller) throw err;
      limit = Math.max(1, Math.floor(limit / 2));
      pages--;
      continue;
    }
    onPage(page ?? {});
    cont = page?.metadata?.continue || undefined;
    if (!cont) return true;
  }
}

/**
 * Every item of the list at `path` (with `labelSelector`), read by `get` page by page ({@linkcode listPages}), each
 * item as `projection` keeps it.
 */
export async function listAll(
  get: (url: string, projection: Projection) => Promise<unknown>,
  path: string,
  opts: { readonly labelSelector?: string; readonly projection?: Projection },
  pageSize: number,
): Promise<unknown[]> {
  const selector = opts.labelSelector ? `labelSelector=${encodeURIComponent(opts.labelSelector)}&` : "";
  const page = pageProjection(opts.projection);
  const items: unknown[] = [];
  await listPages(
    (limit, cont) =>
      get(
        `${path}?${selector}limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`,
        page,
      ) as Promise<
        ListPage | undefined
      >,
    pageSize,
    (p) => items.push(...p.items ?? []),
  );
  return items;
}

/**
 * An answer's value: parsed through the door (charged first), or projected. A parse the budget cannot hold is a
 * {@linkcode KubeApiError} `TooCostly` (the caller may ask for less), bytes that are not JSON `BadResponse`.
 */
export function decode(
  bytes: Uint8Array,
  budget: HeapBudget,
  path: string,
  projection?: Projection,
): unknown {
  try {
    return projection ? projectForeign(bytes, projection, budget) : parseForeign(bytes, budget);
  } catch (err) {
    if (err instanceof ForeignRefused) throw new KubeApiError(0, "TooCostly", err.message, path);
    if (err instanceof SyntaxError) throw new KubeApiError(0, "BadResponse", err.message, path);
    throw err;
  }
}

/** Reads a response body, failing past `max` bytes without reading the rest. */
export async function readBytes(res: Response, max: number, path: string): Promise<Uint8Array> {
  if (!res.body) return new Uint8Array();
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new KubeApiError(0, "TooLarge", `response over ${max} bytes`, path);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return all;
}

/**
 * The error of a failed answer, with the API's `reason` and `message` when the body is a Status (read up to 64 KiB:
 * a Status is a few hundred bytes, and the rest is not read).
 */
export async function apiError(res: Response, path: string, maxBytes: number): Promise<KubeApiError> {
  const body = await readBytes(res, Math.min(maxBytes, 64 * 1024), path)
    .then((bytes) => projectForeign(bytes, STATUS, STATUS_BUDGET))
    .catch(() => ({})) as { reason?: unknown; message?: unknown };
  return new KubeApiError(
    res.status,
    typeof body.reason === "string" ? body.reason : res.statusText,
    typeof body.message === "string" ? body.message : "",
    path,
  );
}
