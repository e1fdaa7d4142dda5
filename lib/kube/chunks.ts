/**
 * Reading a long-lived response body with little memory. A default reader of a fetch body allocates a fresh
 * 64 KiB buffer for every pending read, and a watch has a read pending all the time: with one watch per tenant
 * that is 32 MiB for 500 idle tenants. Reading into one small buffer of our own (a BYOB reader) costs `size`
 * bytes per watch instead.
 *
 * {@linkcode readEvents} reads a watch stream's lines with it, in time linear in the bytes.
 *
 * @module
 */
import { KubeApiError } from "./errors.ts";

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

/**
 * Reads a watch stream's events, one JSON object per line, each at most `maxEventBytes`, and hands each line's bytes
 * to `onLine`. Linear in the bytes however they are cut: each chunk is copied once into a buffer that grows by
 * doubling, and only its new bytes are searched for the end of a line (a tenant sending one-byte chunks costs one
 * step per byte, not one per byte already held). The chunks come through a small reused buffer
 * ({@linkcode chunkReader}): one watch per tenant waits on a read all the time.
 */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  maxEventBytes: number,
  path: string,
  onBytes: () => void,
  onLine: (line: Uint8Array) => void,
): Promise<void> {
  const reader = chunkReader(body);
  let buffer = new Uint8Array(4096);
  let held = 0;
  const tooLarge = async () => {
    await reader.cancel();
    return new KubeApiError(0, "TooLarge", `watch event over ${maxEventBytes} bytes`, path);
  };
  for (;;) {
    const value = await reader.read();
    if (!value) return;
    onBytes();
    if (held + value.length > buffer.length) {
      const grown = new Uint8Array(Math.max(buffer.length * 2, held + value.length));
      grown.set(buffer.subarray(0, held));
      buffer = grown;
    }
    let searchFrom = held;
    buffer.set(value, held);
    held += value.length;
    const view = buffer.subarray(0, held);
    let start = 0;
    for (let nl = view.indexOf(NEWLINE, searchFrom); nl >= 0; nl = view.indexOf(NEWLINE, searchFrom)) {
      if (nl - start > maxEventBytes) throw await tooLarge();
      if (!isBlank(buffer, start, nl)) onLine(buffer.slice(start, nl));
      start = searchFrom = nl + 1;
    }
    if (start > 0) {
      buffer.copyWithin(0, start, held);
      held -= start;
    }
    if (held > maxEventBytes) throw await tooLarge();
  }
}

const NEWLINE = 0x0a;

function isBlank(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d) return false;
  }
  return true;
}
