/**
 * Reading a long-lived response body with little memory. A default reader of a fetch body allocates a fresh
 * 64 KiB buffer for every pending read, and a watch has a read pending all the time: with one watch per tenant
 * that is 32 MiB for 500 idle tenants. Reading into one small buffer of our own (a BYOB reader) costs `size`
 * bytes per watch instead.
 *
 * @module
 */

/** Reads a body chunk by chunk; see {@linkcode chunkReader}. */
export interface ChunkReader {
  /**
   * The next chunk, or `undefined` at the end. The chunk is only valid until the next call: its memory is
   * reused for the next read, so decode or copy it first.
   */
  read(): Promise<Uint8Array | undefined>;
  /** Stops reading and closes the body. */
  cancel(): Promise<void>;
}

/** The buffer size of {@linkcode chunkReader} when none is given (bytes). */
export const DEFAULT_CHUNK_BYTES = 4096;

function byobReader(body: ReadableStream<Uint8Array>): ReadableStreamBYOBReader | undefined {
  try {
    return body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a Response built from a plain stream): its chunks are already allocated.
    return undefined;
  }
}

/**
 * A reader of `body` that reads into one reused buffer of `size` bytes when the stream allows it (a byte
 * stream, as every fetch body is), or reads the stream's own chunks when it does not.
 *
 * @example
 * ```ts
 * const reader = chunkReader((await fetch(url)).body!);
 * const decoder = new TextDecoder();
 * let text = "";
 * for (let chunk; (chunk = await reader.read());) text += decoder.decode(chunk, { stream: true });
 * ```
 */
export function chunkReader(body: ReadableStream<Uint8Array>, size = DEFAULT_CHUNK_BYTES): ChunkReader {
  const byob = byobReader(body);
  if (!byob) {
    const reader = body.getReader();
    return {
      read: async () => (await reader.read()).value,
      cancel: () => reader.cancel(),
    };
  }
  let buffer = new ArrayBuffer(size);
  return {
    async read() {
      const { done, value } = await byob.read(new Uint8Array(buffer));
      if (done || !value) return undefined;
      // The read transfers the buffer: the next read goes into the one it came back in.
      buffer = value.buffer as ArrayBuffer;
      return value;
    },
    cancel: () => byob.cancel(),
  };
}
