/**
 * `kubectl butler pool show`: a picture of a NetworkPool. The address space (its CIDR) as a grid of cells, each
 * marked by what its addresses are (granted, partly granted, pinned, free, reserved, outside the tenant range);
 * the figures the pool's hook reports (computed by the same allocator); and every grant with its tenant. As text
 * for a terminal, SVG for a page, JSON for scripts. Pure: the pool and the IPAllocations in, text out.
 *
 * @module
 */
import {
  Allocator,
  type Family,
  familyName,
  formatAddress,
  formatSpan,
  type Range,
  rangeSize,
  readPoolSpec,
  subtractRanges,
} from "../lib/ipam/mod.ts";
import { describeLedger } from "../lib/pool_ledger/mod.ts";
import { LABELS } from "../lib/butler/mod.ts";
import { readReleases } from "../hooks/networkpool/releases.ts";

/** What a cell's addresses are, in the order a mixed cell is marked. */
export const CELL_MARKS = {
  pinned: "P",
  allocated: "#",
  partial: "+",
  free: ".",
  reserved: "x",
  outside: "-",
} as const;

/** The words of the legend, per mark. */
const LEGEND: Record<keyof typeof CELL_MARKS, string> = {
  pinned: "pinned grant",
  allocated: "allocated",
  partial: "partly allocated",
  free: "free",
  reserved: "reserved",
  outside: "outside the tenant range",
};

/** An IPAllocation as the picture needs it. */
export interface AllocationInfo {
  readonly metadata: {
    readonly name: string;
    readonly namespace: string;
    readonly uid: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec?: { readonly pinnedRange?: unknown; readonly tenantClusterRef?: { readonly name?: string } };
}

/** One grant of the pool, for people. */
export interface GrantRow {
  readonly first: string;
  readonly last: string;
  readonly count: string;
  readonly grantedAt: string;
  readonly uid: string;
  /** `namespace/TenantCluster`, when its IPAllocation was found and names one. */
  readonly tenant?: string;
  /** `namespace/name` of the IPAllocation, when found. */
  readonly allocation?: string;
  readonly pinned: boolean;
}

/** Everything `pool show` prints; numbers that may pass 2^53 are decimal strings. */
export interface PoolReport {
  readonly pool: string;
  readonly cidr: string;
  readonly family: string;
  readonly tenantRanges: readonly string[];
  readonly reserved: readonly string[];
  readonly total: string;
  readonly allocated: string;
  readonly available: string;
  readonly utilisationPercent: number;
  readonly largestFreeBlock: string;
  readonly freeBlocks: number;
  readonly fragmentationPercent: number;
  /** Addresses per cell, and each row's first address. */
  readonly cellSize: string;
  readonly columns: number;
  readonly rows: readonly { readonly first: string; readonly cells: string }[];
  readonly grants: readonly GrantRow[];
  /** Released ranges still cooling down (`status.releases.cooling`), and since when. */
  readonly cooling: readonly { readonly range: string; readonly releasedAt: string }[];
  /** Grants released since the pool was created, and the last ones, newest first (`status.releases`). */
  readonly releases: { readonly total: number; readonly history: readonly ReleaseRow[] };
}

/** One release of the pool's history, for people. */
export interface ReleaseRow {
  readonly range: string;
  /** `namespace/name` of the IPAllocation that held it, or its UID when the pool did not see its name. */
  readonly holder: string;
  readonly grantedAt: string;
  readonly releasedAt: string;
}

/** What `status.releases` holds ({@linkcode readReleases}: an entry that does not read is left out). */
function releasesOf(status: unknown): Pick<PoolReport, "cooling" | "releases"> {
  const r = readReleases(status);
  const history = r.history.map((h) => ({
    range: h.range,
    holder: h.holder.namespace && h.holder.name ? `${h.holder.namespace}/${h.holder.name}` : h.holder.uid,
    grantedAt: h.grantedAt,
    releasedAt: h.releasedAt,
  }));
  return {
    cooling: r.cooling.map(({ range, releasedAt }) => ({ range, releasedAt })),
    releases: { total: r.total, history },
  };
}

/** Releases the text picture lists (JSON has them all). */
export const RELEASES_SHOWN = 10;

/** The pool fields read (a NetworkPool object). */
export interface PoolObject {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: Parameters<typeof readPoolSpec>[0];
  readonly status?: unknown;
}

/** Cells per row, and at most this many rows: a picture fits a terminal. */
export const COLUMNS = 64;
export const MAX_ROWS = 16;

/**
 * The report of a pool, or why it cannot be drawn (its spec or its ledger does not read).
 *
 * @example
 * ```ts
 * const r = poolReport(pool, allocations);
 * if (r.ok) console.log(renderPoolText(r.report));
 * ```
 */
export function poolReport(
  pool: PoolObject,
  allocations: readonly AllocationInfo[],
): { ok: true; report: PoolReport } | { ok: false; message: string } {
  const name = `${pool.metadata.namespace ?? ""}/${pool.metadata.name}`;
  const spec = readPoolSpec(pool.spec ?? {});
  if (!spec.ok) {
    return {
      ok: false,
      message: `NetworkPool ${name}: ${spec.problems.map((p) => `spec.${p.path}: ${p.message}`).join("; ")}`,
    };
  }
  const described = describeLedger(pool.status);
  if (!described.ok) return { ok: false, message: `NetworkPool ${name}: ${described.message}` };
  const { family, allocatable, reserved } = spec.pool;
  const ledger = described.ledger;
  const grants = ledger.size ? ledger.decode() : [];
  const c = Allocator.create({ ...spec.pool, allocations: ledger.ranges() }).capacity();
  const byUid = new Map(allocations.map((a) => [a.metadata.uid, a]));
  const pinned = grants.filter((g) => byUid.get(g.uid)?.spec?.pinnedRange !== undefined).map((g) => g.range);
  const space = { start: spec.cidr.start, end: spec.cidr.end };
  const grid = cells(space, {
    granted: grants.map((g) => g.range),
    pinned,
    usable: subtractRanges(allocatable, reserved),
    reserved,
  });
  return {
    ok: true,
    report: {
      pool: name,
      cidr: `${formatAddress(family, spec.cidr.start)}/${spec.cidr.prefix}`,
      family: familyName(family),
      tenantRanges: allocatable.map((r) => formatSpan(family, r)),
      reserved: reserved.map((r) => formatSpan(family, r)),
      total: String(c.total),
      allocated: String(c.allocated),
      available: String(c.available),
      utilisationPercent: c.total === 0n ? 0 : Number((c.allocated * 100n) / c.total),
      largestFreeBlock: String(c.largestFreeBlock),
      freeBlocks: c.freeBlockCount,
      fragmentationPercent: c.fragmentationPercent,
      cellSize: String(grid.cellSize),
      columns: COLUMNS,
      rows: grid.rows.map((cells, i) => ({
        first: formatAddress(family, space.start + BigInt(i * COLUMNS) * grid.cellSize),
        cells,
      })),
      grants: grants.map((g) => grantRow(family, g, byUid.get(g.uid))),
      ...releasesOf(pool.status),
    },
  };
}

function grantRow(
  family: Family,
  g: { uid: string; range: Range; grantedAt: string },
  a: AllocationInfo | undefined,
): GrantRow {
  const tenant = a?.metadata.labels?.[LABELS.tenant] ?? a?.spec?.tenantClusterRef?.name;
  return {
    first: formatAddress(family, g.range.start),
    last: formatAddress(family, g.range.end),
    count: String(rangeSize(g.range)),
    grantedAt: g.grantedAt,
    uid: g.uid,
    ...(a && tenant ? { tenant: `${a.metadata.namespace}/${tenant}` } : {}),
    ...(a ? { allocation: `${a.metadata.namespace}/${a.metadata.name}` } : {}),
    pinned: a?.spec?.pinnedRange !== undefined,
  };
}

interface Layers {
  readonly granted: readonly Range[];
  readonly pinned: readonly Range[];
  readonly usable: readonly Range[];
  readonly reserved: readonly Range[];
}

/** The grid: `space` cut into at most COLUMNS × MAX_ROWS cells of equal size, each marked. */
function cells(space: Range, layers: Layers): { cellSize: bigint; rows: string[] } {
  const size = rangeSize(space);
  const max = BigInt(COLUMNS * MAX_ROWS);
  const cellSize = (size + max - 1n) / max;
  const count = Number((size + cellSize - 1n) / cellSize);
  const at = (layer: readonly Range[]) => coverage(layer, space.start, cellSize, count);
  const [granted, pinned, usable, reserved] = [
    at(layers.granted),
    at(layers.pinned),
    at(layers.usable),
    at(
      layers.reserved,
    ),
  ];
  const marks: string[] = [];
  for (let i = 0; i < count; i++) {
    marks.push(
      pinned[i]! > 0n
        ? CELL_MARKS.pinned
        : usable[i]! > 0n && granted[i]! >= usable[i]!
        ? CELL_MARKS.allocated
        : granted[i]! > 0n
        ? CELL_MARKS.partial
        : usable[i]! > 0n
        ? CELL_MARKS.free
        : reserved[i]! > 0n
        ? CELL_MARKS.reserved
        : CELL_MARKS.outside,
    );
  }
  const rows: string[] = [];
  for (let i = 0; i < count; i += COLUMNS) rows.push(marks.slice(i, i + COLUMNS).join(""));
  return { cellSize, rows };
}

/** How many addresses of sorted, disjoint `ranges` fall in each cell: one pass over ranges and cells touched. */
function coverage(ranges: readonly Range[], origin: bigint, cellSize: bigint, count: number): bigint[] {
  const out = new Array<bigint>(count).fill(0n);
  for (const r of ranges) {
    let start = r.start < origin ? origin : r.start;
    while (start <= r.end) {
      const cell = Number((start - origin) / cellSize);
      if (cell >= count) break;
      const cellEnd = origin + BigInt(cell + 1) * cellSize - 1n;
      const end = r.end < cellEnd ? r.end : cellEnd;
      out[cell] = out[cell]! + (end - start + 1n);
      start = end + 1n;
    }
  }
  return out;
}

const pad = (rows: readonly (readonly string[])[]) => {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) =>
    r.map((v, c) => (c === r.length - 1 ? v : v.padEnd(widths[c]!))).join("  ").trimEnd()
  );
};

/**
 * The report as text for a terminal: header, grid, figures, legend, and the grants (at a fixed width, the same
 * bytes every run).
 */
export function renderPoolText(r: PoolReport): string {
  const labelWidth = Math.max(...r.rows.map((row) => row.first.length));
  const lines = [
    `NetworkPool ${r.pool}  ${r.cidr} (${r.family})`,
    `tenant range ${r.tenantRanges.join(", ")}${
      r.reserved.length ? `; reserved ${r.reserved.join(", ")}` : ""
    }`,
    "",
    ...r.rows.map((row) => `  ${row.first.padEnd(labelWidth)}  ${row.cells}`),
    "",
    `utilisation ${r.utilisationPercent}% (${r.allocated}/${r.total} addresses), ${r.available} available in ${r.freeBlocks} free block(s), largest ${r.largestFreeBlock}, fragmentation ${r.fragmentationPercent}%`,
    `one cell = ${r.cellSize} address(es): ${
      (Object.keys(CELL_MARKS) as (keyof typeof CELL_MARKS)[]).map((k) => `${CELL_MARKS[k]} ${LEGEND[k]}`)
        .join(
          "  ",
        )
    }`,
    "",
  ];
  const released = releasedText(r);
  if (!r.grants.length) return [...lines, "no grants", ...released].join("\n") + "\n";
  const table = pad([
    ["FIRST", "LAST", "COUNT", "TENANT", "IPALLOCATION", "GRANTED AT"],
    ...r.grants.map((g) => [
      g.first,
      g.last,
      g.count,
      `${g.tenant ?? "-"}${g.pinned ? " (pinned)" : ""}`,
      g.allocation ?? `uid ${g.uid}`,
      g.grantedAt,
    ]),
  ]);
  return [...lines, ...table, ...released].join("\n") + "\n";
}

/** The cooling ranges and the last releases, under the grants. */
function releasedText(r: PoolReport): string[] {
  const cooling = r.cooling.length
    ? ["", `cooling down: ${r.cooling.map((c) => `${c.range} (released ${c.releasedAt})`).join(", ")}`]
    : [];
  if (!r.releases.total) return cooling;
  const shown = r.releases.history.slice(0, RELEASES_SHOWN);
  return [
    ...cooling,
    "",
    `${r.releases.total} release(s)${shown.length < r.releases.total ? `, the last ${shown.length}` : ""}:`,
    ...pad([
      ["RANGE", "HELD BY", "GRANTED AT", "RELEASED AT"],
      ...shown.map((h) => [h.range, h.holder, h.grantedAt, h.releasedAt]),
    ]),
  ];
}

const COLOURS: Record<keyof typeof CELL_MARKS, string> = {
  pinned: "#7b3fa0",
  allocated: "#2f6fb0",
  partial: "#8fb8e0",
  free: "#e8f0e0",
  reserved: "#c0504d",
  outside: "#d9d9d9",
};

const escapeXml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&apos;" })[c]!,
  );

/** The report as an SVG picture: the grid in colour, with a title, the figures and a legend. */
export function renderPoolSvg(r: PoolReport): string {
  const cell = 12;
  const left = 8 + Math.max(...r.rows.map((row) => row.first.length)) * 7 + 8;
  const top = 48;
  const width = left + r.columns * cell + 8;
  const height = top + r.rows.length * cell + 40;
  const kinds = Object.entries(CELL_MARKS) as [keyof typeof CELL_MARKS, string][];
  const kindOf = new Map(kinds.map(([k, mark]) => [mark, k]));
  const rects = r.rows.flatMap((row, y) =>
    [...row.cells].map((mark, x) =>
      `<rect x="${left + x * cell}" y="${top + y * cell}" width="${cell - 1}" height="${cell - 1}" fill="${
        COLOURS[kindOf.get(mark)!]
      }"/>`
    )
  );
  const labels = r.rows.map((row, y) =>
    `<text x="8" y="${top + y * cell + cell - 2}">${escapeXml(row.first)}</text>`
  );
  const legend = kinds.map(([k], i) =>
    `<rect x="${8 + i * 150}" y="${top + r.rows.length * cell + 16}" width="10" height="10" fill="${
      COLOURS[k]
    }"/>` +
    `<text x="${22 + i * 150}" y="${top + r.rows.length * cell + 25}">${escapeXml(LEGEND[k])}</text>`
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${
      Math.max(width, 8 + kinds.length * 150)
    }" height="${height}" font-family="monospace" font-size="11">`,
    `<text x="8" y="18" font-size="14">${escapeXml(`NetworkPool ${r.pool}  ${r.cidr} (${r.family})`)}</text>`,
    `<text x="8" y="36">${
      escapeXml(
        `${r.utilisationPercent}% used (${r.allocated}/${r.total}), largest free block ${r.largestFreeBlock}, fragmentation ${r.fragmentationPercent}%, ${r.grants.length} grant(s), one cell = ${r.cellSize}`,
      )
    }</text>`,
    ...labels,
    ...rects,
    ...legend,
    "</svg>",
    "",
  ].join("\n");
}
