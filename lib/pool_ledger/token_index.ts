/**
 * The ledger's index of grants by UID token (open addressing over typed arrays).
 *
 * @module
 */
import { tokenHash } from "./uid.ts";

/**
 * Grant positions by UID token: open addressing over typed arrays, keyed by {@linkcode tokenHash} and confirmed by
 * comparing the tokens. A `Map` of 10,000 freshly sliced strings cost more than reading the whole ledger.
 */
export class TokenIndex {
  readonly #records: readonly string[];
  readonly #tokenAt: ArrayLike<number>;
  /** Position + 1 of the token in each slot; 0 when empty. */
  readonly #slots: Int32Array;
  readonly #slotHashes: Int32Array;
  readonly #mask: number;

  private constructor(records: readonly string[], tokenAt: ArrayLike<number>) {
    this.#records = records;
    this.#tokenAt = tokenAt;
    let size = 16;
    while (size < records.length * 2) size *= 2;
    this.#slots = new Int32Array(size);
    this.#slotHashes = new Int32Array(size);
    this.#mask = size - 1;
  }

  /**
   * The index of the tokens at `tokenAt` in `records` (hashed already or not), or the positions of tokens seen
   * before.
   */
  static build(
    records: readonly string[],
    tokenAt: ArrayLike<number>,
    hashes?: Int32Array,
  ): TokenIndex | number[] {
    const index = new TokenIndex(records, tokenAt);
    const repeats: number[] = [];
    for (let i = 0; i < records.length; i++) {
      const hash = hashes ? hashes[i]! : tokenHash(records[i]!, tokenAt[i]!);
      if (!index.#insert(i, hash)) repeats.push(i);
    }
    return repeats.length ? repeats : index;
  }

  /** Whether the token of record `i` is `token` (no slice: tokens end their records). */
  #is(i: number, token: string): boolean {
    const record = this.#records[i]!;
    return record.length - this.#tokenAt[i]! === token.length && record.endsWith(token);
  }

  /** Adds position `i`; false when its token is there already. */
  #insert(i: number, hash: number): boolean {
    for (let s = hash & this.#mask;; s = (s + 1) & this.#mask) {
      const at = this.#slots[s]!;
      if (at === 0) {
        this.#slots[s] = i + 1;
        this.#slotHashes[s] = hash;
        return true;
      }
      if (this.#slotHashes[s] === hash && this.#is(at - 1, this.#records[i]!.slice(this.#tokenAt[i]!))) {
        return false;
      }
    }
  }

  /** The position of `token`, or -1. */
  find(token: string): number {
    const hash = tokenHash(token);
    if (hash < 0) return -1;
    for (let s = hash & this.#mask;; s = (s + 1) & this.#mask) {
      const at = this.#slots[s]!;
      if (at === 0) return -1;
      if (this.#slotHashes[s] === hash && this.#is(at - 1, token)) return at - 1;
    }
  }
}
