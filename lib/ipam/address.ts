import ipaddr from "ipaddr.js";

/** An address family: 4 or 6. */
export type Family = 4 | 6;

/** Address width in bits per family. */
export const FAMILY_BITS: Readonly<Record<Family, number>> = { 4: 32, 6: 128 };

/** The largest address of a family as an integer. */
export function maxAddress(family: Family): bigint {
  return (1n << BigInt(FAMILY_BITS[family])) - 1n;
}

/** A parsed address: its family and its value as an unsigned integer. */
export interface Address {
  readonly family: Family;
  readonly value: bigint;
}

const OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
/** Strict dotted quad: four decimal octets, no leading zeros, no shorthand. */
const DOTTED_QUAD = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);

function bytesToBigInt(bytes: readonly number[]): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}

/**
 * Parses one IPv4 (strict dotted quad) or IPv6 address. Zone ids and shorthand IPv4 forms such as `10.1` are
 * rejected. Returns `undefined` for anything else.
 *
 * @example
 * ```ts
 * parseAddress("10.40.1.0"); // { family: 4, value: 170393856n }
 * parseAddress("fd00::1");   // { family: 6, value: 336294682933583715844663186250927177729n }
 * parseAddress("10.1");      // undefined
 * ```
 */
export function parseAddress(text: string): Address | undefined {
  const s = text.trim();
  if (s !== text || s.includes("%")) return undefined;
  const quad = DOTTED_QUAD.exec(s);
  if (quad) {
    const value = Number(quad[1]) * 16777216 + Number(quad[2]) * 65536 + Number(quad[3]) * 256 +
      Number(quad[4]);
    return { family: 4, value: BigInt(value) };
  }
  if (s.includes(":") && ipaddr.IPv6.isValid(s)) {
    return { family: 6, value: bytesToBigInt(ipaddr.IPv6.parse(s).toByteArray()) };
  }
  return undefined;
}

/**
 * Formats an address value: dotted quad for IPv4, RFC 5952 for IPv6.
 *
 * @example
 * ```ts
 * formatAddress(4, 4294967295n); // "255.255.255.255"
 * formatAddress(6, 1n);          // "::1"
 * ```
 */
export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) {
    const n = Number(value);
    return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  }
  const bytes: number[] = new Array(16);
  let v = value;
  for (let i = 15; i >= 0; i--) {
    bytes[i] = Number(v & 255n);
    v >>= 8n;
  }
  return (ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String();
}

/** "IPv4" or "IPv6", for messages. */
export function familyName(family: Family): string {
  return family === 4 ? "IPv4" : "IPv6";
}
