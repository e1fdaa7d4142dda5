import assert from "node:assert/strict";
import { chunkReader } from "./chunks.ts";

const bytes = (n: number, from = 0) => Uint8Array.from({ length: n }, (_, i) => (from + i) % 251);

async function readAll(body: ReadableStream<Uint8Array>, size?: number) {
  const reader = chunkReader(body, size);
  const chunks: number[] = [];
  const all: number[] = [];
  for (let chunk; (chunk = await reader.read());) {
    chunks.push(chunk.byteLength);
    all.push(...chunk);
  }
  return { chunks, all: Uint8Array.from(all) };
}

Deno.test("chunkReader", async (t) => {
  await t.step("a fetch body is read into the small buffer, every byte in order", async () => {
    const sent = bytes(70_000);
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response(sent),
    );
    try {
      const res = await fetch(`http://127.0.0.1:${server.addr.port}/`);
      const { chunks, all } = await readAll(res.body!, 1024);
      assert.deepEqual(all, sent);
      assert.ok(chunks.every((n) => n > 0 && n <= 1024), `chunks within 1024 bytes: ${chunks}`);
    } finally {
      await server.shutdown();
    }
  });

  await t.step("reads fill the one buffer, which each read hands on to the next", async () => {
    const body = new ReadableStream<Uint8Array>({
      type: "bytes",
      start(c) {
        c.enqueue(bytes(10, 0));
        c.enqueue(bytes(10, 100));
        c.close();
      },
    });
    const reader = chunkReader(body, 16);
    const first = await reader.read();
    assert.deepEqual(first, Uint8Array.from([...bytes(10, 0), ...bytes(6, 100)]));
    const second = await reader.read();
    assert.deepEqual(second, bytes(4, 106));
    assert.equal(first!.byteLength, 0, "the first chunk's memory went into the second read");
    assert.equal(second!.buffer.byteLength, 16);
    assert.equal(await reader.read(), undefined);
  });

  await t.step("a plain stream (not bytes) is read chunk by chunk as it comes", async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(bytes(5000));
        c.enqueue(bytes(3));
        c.close();
      },
    });
    const { chunks, all } = await readAll(body, 1024);
    assert.deepEqual(chunks, [5000, 3]);
    assert.deepEqual(all, Uint8Array.from([...bytes(5000), ...bytes(3)]));
  });

  await t.step("cancel closes the body", async () => {
    let cancelled: unknown = "no";
    const body = new ReadableStream<Uint8Array>({
      type: "bytes",
      pull(c) {
        c.enqueue(bytes(8));
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const reader = chunkReader(body);
    assert.equal((await reader.read())?.byteLength, 8);
    await reader.cancel();
    assert.equal(cancelled, undefined);
  });
});
