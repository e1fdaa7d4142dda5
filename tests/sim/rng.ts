/**
 * The simulator's only source of randomness: a small seeded generator (sfc32), so that a seed names one run and
 * a run can be replayed exactly.
 *
 * @module
 */

/** A seeded generator of 32-bit integers. */
export interface Rng {
  /** The next integer in [0, 2^32). */
  next(): number;
  /** An integer in [0, n). */
  below(n: number): number;
}

/**
 * sfc32 seeded from one integer (mixed with splitmix32, so that nearby seeds give unrelated streams).
 *
 * @example
 * ```ts
 * rng(7).below(10) === rng(7).below(10); // true
 * ```
 */
export function rng(seed: number): Rng {
  let s = seed >>> 0;
  const mix = () => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  let a = mix(), b = mix(), c = mix(), d = mix();
  function next(): number {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  }
  for (let i = 0; i < 12; i++) next();
  return { next, below: (n) => (n <= 0 ? 0 : next() % n) };
}
