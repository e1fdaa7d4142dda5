/**
 * Waiting in the real controller tier: controllers converge in their own time.
 *
 * @module
 */

/**
 * Polls `check` every `intervalMs` until it returns a value (not undefined) or the deadline passes; the last error
 * explains.
 */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  seconds = 60,
  intervalMs = 500,
): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out after ${seconds} s waiting for ${what}${last ? `: ${last}` : ""}`);
}
