/** Upstream's error texts, quoted so that messages match Butler's. */
export const MESSAGES = {
  exhausted: "pool exhausted: no contiguous block available",
  invalidCount: "requested count must be positive",
  outOfRange: "range falls outside pool boundaries",
  invalidRange: "invalid IP range: start is after end",
} as const;

/** Why an allocation was refused. */
export type IpamErrorCode =
  | "exhausted"
  | "invalid-count"
  | "invalid-address"
  | "reversed"
  | "straddle"
  | "outside"
  | "conflict";

/** A refused allocation: a stable code for logic, and upstream's message for people. */
export interface IpamError {
  readonly code: IpamErrorCode;
  readonly message: string;
}

/** The outcome of an allocation. */
export type AllocationResult<T> = { ok: true; value: T } | { ok: false; error: IpamError };

/** Builds a refused result. */
export function refuse(code: IpamErrorCode, message: string): { ok: false; error: IpamError } {
  return { ok: false, error: { code, message } };
}
