import { type Family, FAMILY_BITS, familyName, formatAddress, parseAddress } from "./address.ts";
import type { PoolModel } from "./allocator.ts";
import {
  type Cidr,
  contains,
  normalizeRanges,
  overlaps,
  parseCidr,
  type Range,
  subtractRanges,
} from "./range.ts";

/** The address fields of a pool specification (a NetworkPool's `spec`, without Kubernetes). */
export interface PoolSpec {
  readonly cidr?: string | undefined;
  /** The network's gateway (Cluster API's IPAddress `gateway`): inside the CIDR, never granted. */
  readonly gateway?: string | undefined;
  /** The prefix length handed out with each address (Cluster API's IPAddress `prefix`); the CIDR's by default. */
  readonly prefix?: number | undefined;
  readonly reserved?: readonly { readonly cidr?: string | undefined }[] | undefined;
  readonly tenantAllocation?: {
    readonly start?: string | undefined;
    readonly end?: string | undefined;
    /** Several allocatable ranges (upstream's newer `ranges`); when set, `start`/`end` are ignored. */
    readonly ranges?:
      | readonly { readonly start?: string | undefined; readonly end?: string | undefined }[]
      | undefined;
  } | undefined;
}

/** One problem with a pool specification, located by field path relative to the spec. */
export interface SpecProblem {
  readonly path: string;
  readonly message: string;
}

/** The outcome of {@linkcode readPoolSpec}: the pool's address model, or every problem found. */
export type PoolSpecResult =
  | { ok: true; pool: Omit<PoolModel, "allocations">; cidr: Cidr }
  | { ok: false; problems: SpecProblem[] };

interface AddressField {
  path: string;
  text: string | undefined;
}

/**
 * Validates a pool specification and builds its address model: CIDR valid; every reserved CIDR valid, of the
 * pool's family, inside the pool CIDR and not overlapping another; tenant range(s) valid, inside the CIDR,
 * start <= end, sorted and non-overlapping. Every problem is returned, each with its field path.
 *
 * @example
 * ```ts
 * readPoolSpec({ cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.1.0", end: "10.40.7.254" } });
 * // { ok: true, pool: { family: 4, allocatable: [ { start, end } ], reserved: [] }, cidr }
 * ```
 */
export function readPoolSpec(spec: PoolSpec): PoolSpecResult {
  const problems: SpecProblem[] = [];
  const cidrText = spec.cidr ?? "";
  const parsedCidr = cidrText ? parseCidr(cidrText) : undefined;
  if (!parsedCidr) problems.push({ path: "cidr", message: "cidr is required" });
  else if (!parsedCidr.ok) {
    problems.push({ path: "cidr", message: `invalid pool CIDR: ${parsedCidr.message}` });
  }
  const cidr = parsedCidr?.ok ? parsedCidr.value : undefined;

  const reserved = readReserved(spec.reserved ?? [], cidr, cidrText, problems);

  const allocatable = cidr ? readAllocatable(spec.tenantAllocation, cidr, cidrText, problems) : [];
  const gateway = cidr && spec.gateway !== undefined
    ? readAddress({ path: "gateway", text: spec.gateway }, cidr.family, problems)
    : undefined;
  if (cidr && gateway !== undefined && !contains(cidr, { start: gateway, end: gateway })) {
    problems.push({
      path: "gateway",
      message: `gateway ${JSON.stringify(spec.gateway)} is not within pool CIDR ${JSON.stringify(cidrText)}`,
    });
  }
  if (
    cidr && spec.prefix !== undefined && (spec.prefix < cidr.prefix || spec.prefix > FAMILY_BITS[cidr.family])
  ) {
    problems.push({
      path: "prefix",
      message: `prefix ${spec.prefix} must be between the CIDR's ${cidr.prefix} and ${
        FAMILY_BITS[cidr.family]
      }`,
    });
  }
  if (problems.length || !cidr) return { ok: false, problems };
  const reservedRanges = reserved.map((r) => ({ start: r.range.start, end: r.range.end }));
  // The gateway is never granted (a reserved address) unless a reserved range already covers it.
  if (gateway !== undefined && !reservedRanges.some((r) => contains(r, { start: gateway, end: gateway }))) {
    reservedRanges.push({ start: gateway, end: gateway });
    reservedRanges.sort((a, b) => (a.start < b.start ? -1 : 1));
  }
  return {
    ok: true,
    cidr,
    pool: {
      family: cidr.family,
      allocatable: allocatable.length ? allocatable : [{ start: cidr.start, end: cidr.end }],
      reserved: reservedRanges,
    },
  };
}

/** The reserved CIDRs, each of the pool's family, within it, and overlapping no other (problems noted). */
function readReserved(
  entries: readonly { cidr?: string }[],
  cidr: Cidr | undefined,
  cidrText: string,
  problems: SpecProblem[],
): { index: number; text: string; range: Cidr }[] {
  const reserved: { index: number; text: string; range: Cidr }[] = [];
  entries.forEach((r, index) => {
    const path = `reserved[${index}].cidr`;
    const text = r.cidr ?? "";
    const parsed = parseCidr(text);
    if (!parsed.ok) {
      return problems.push({
        path,
        message: `invalid reserved CIDR ${JSON.stringify(text)}: ${parsed.message}`,
      });
    }
    if (cidr && parsed.value.family !== cidr.family) {
      return problems.push({
        path,
        message: `reserved CIDR ${JSON.stringify(text)} is ${familyName(parsed.value.family)} but pool CIDR ${
          JSON.stringify(cidrText)
        } is ${familyName(cidr.family)}`,
      });
    }
    if (cidr && !contains(cidr, parsed.value)) {
      return problems.push({
        path,
        message: `reserved CIDR ${JSON.stringify(text)} is not within pool CIDR ${JSON.stringify(cidrText)}`,
      });
    }
    const clash = reserved.find((o) => overlaps(o.range, parsed.value));
    if (clash) {
      return problems.push({
        path,
        message: `reserved CIDR ${JSON.stringify(text)} overlaps reserved CIDR ${
          JSON.stringify(clash.text)
        } (reserved[${clash.index}])`,
      });
    }
    reserved.push({ index, text, range: parsed.value });
  });
  return reserved;
}

function readAddress(field: AddressField, family: Family, problems: SpecProblem[]): bigint | undefined {
  const a = field.text === undefined ? undefined : parseAddress(field.text);
  if (!a) {
    problems.push({
      path: field.path,
      message: `${field.path} ${JSON.stringify(field.text ?? "")} is not a valid IP address`,
    });
    return undefined;
  }
  if (a.family !== family) {
    problems.push({
      path: field.path,
      message: `${field.path} ${JSON.stringify(field.text)} is ${familyName(a.family)} but the pool is ${
        familyName(family)
      }`,
    });
    return undefined;
  }
  return a.value;
}

function readAllocatable(
  tenant: PoolSpec["tenantAllocation"],
  cidr: Cidr,
  cidrText: string,
  problems: SpecProblem[],
): Range[] {
  if (!tenant) return [];
  const fmt = (v: bigint) => formatAddress(cidr.family, v);
  if (tenant.ranges?.length) {
    const out: Range[] = [];
    tenant.ranges.forEach((r, i) => {
      const base = `tenantAllocation.ranges[${i}]`;
      const start = readAddress({ path: `${base}.start`, text: r.start }, cidr.family, problems);
      const end = readAddress({ path: `${base}.end`, text: r.end }, cidr.family, problems);
      if (start === undefined || end === undefined) return;
      if (start > end) {
        return problems.push({
          path: base,
          message: `ranges[${i}] start ${fmt(start)} is after end ${fmt(end)}`,
        });
      }
      if (!contains(cidr, { start, end })) {
        return problems.push({
          path: base,
          message: `ranges[${i}] (${fmt(start)}-${fmt(end)}) falls outside pool CIDR ${cidrText}`,
        });
      }
      const prev = out[out.length - 1];
      if (prev && start <= prev.end) {
        return problems.push({
          path: `${base}.start`,
          message: `ranges must be sorted by start IP and non-overlapping; ranges[${i}].start (${
            fmt(start)
          }) must be greater than ranges[${i - 1}].end (${fmt(prev.end)})`,
        });
      }
      // Touching ranges are one block, as upstream treats them: a request may span the boundary, and free space
      // across it is one run (fragmentation and the largest free block are computed on blocks).
      if (prev && start === prev.end + 1n) out[out.length - 1] = { start: prev.start, end };
      else out.push({ start, end });
    });
    return out;
  }
  if (tenant.start === undefined && tenant.end === undefined) return [];
  if (tenant.start === undefined || tenant.end === undefined) {
    problems.push({
      path: tenant.start === undefined ? "tenantAllocation.start" : "tenantAllocation.end",
      message: "tenantAllocation.start and tenantAllocation.end must be set together",
    });
    return [];
  }
  const start = readAddress({ path: "tenantAllocation.start", text: tenant.start }, cidr.family, problems);
  const end = readAddress({ path: "tenantAllocation.end", text: tenant.end }, cidr.family, problems);
  if (start === undefined || end === undefined) return [];
  if (start > end) {
    problems.push({
      path: "tenantAllocation",
      message: `allocation start ${fmt(start)} is after end ${fmt(end)}`,
    });
    return [];
  }
  if (!contains(cidr, { start, end })) {
    problems.push({
      path: "tenantAllocation",
      message: `allocation range ${fmt(start)}-${fmt(end)} is not within pool CIDR ${
        JSON.stringify(cidrText)
      }`,
    });
    return [];
  }
  return [{ start, end }];
}

/**
 * The addresses a pool can grant: its allocatable ranges minus its reserved ones, sorted and disjoint. Two pools
 * whose grantable ranges intersect would each grant the same addresses.
 *
 * @example
 * ```ts
 * const spec = readPoolSpec({ cidr: "10.40.0.0/24", reserved: [{ cidr: "10.40.0.0/28" }] });
 * if (spec.ok) grantableRanges(spec.pool); // [{ start: 10.40.0.16, end: 10.40.0.255 }]
 * ```
 */
export function grantableRanges(pool: Omit<PoolModel, "allocations">): Range[] {
  return subtractRanges(normalizeRanges(pool.allocatable), normalizeRanges(pool.reserved));
}
