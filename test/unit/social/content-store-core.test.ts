// The content store's core over an in-memory backend: chunking, verification, and the hot-chunk
// cache (a range read of verified chunks skips the backend; a whole read always re-verifies).
import { Chunk, Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { rawCid } from "../../../src/crypto/cid.ts"
import { chunkBytes, makeContentStore } from "../../../src/social/content/ContentStore.ts"
import { memoryBlobs } from "../../support/memoryBlobs.ts"

const collect = (s: Stream.Stream<Uint8Array, unknown>) => Effect.runPromise(Effect.map(Stream.runCollect(s), (c) => Buffer.concat(Chunk.toArray(c))))

describe("content store core", () => {
  const bytes = Buffer.alloc(3 * chunkBytes + 7, 0).map((_, i) => (i * 31) & 0xff)
  it("serves a verified chunk again from memory, but a whole read goes back to the backend", async () => {
    const mem = memoryBlobs()
    const store = makeContentStore(mem.blobs, 10 * chunkBytes)
    const { cid } = await Effect.runPromise(store.put(Stream.succeed(bytes), "video/mp4"))
    expect(cid).toBe(rawCid(bytes))
    expect(mem.items.get(cid)!.chunks).toHaveLength(4)
    const range = { start: 10, end: chunkBytes + 10 }
    expect((await collect(store.read(cid, range))).equals(bytes.subarray(10, chunkBytes + 11))).toBe(true)
    const after = mem.calls.chunks
    expect((await collect(store.read(cid, range))).equals(bytes.subarray(10, chunkBytes + 11))).toBe(true)
    expect(mem.calls.chunks).toBe(after)
    expect((await collect(store.read(cid))).equals(bytes)).toBe(true)
    expect(mem.calls.chunks).toBeGreaterThan(after)
  })

  it("fails a read whose chunk no longer matches, and caches nothing of it", async () => {
    const mem = memoryBlobs()
    const store = makeContentStore(mem.blobs, 10 * chunkBytes)
    const { cid } = await Effect.runPromise(store.put(Stream.succeed(bytes), "video/mp4"))
    mem.items.get(cid)!.chunks[2]![5] ^= 1
    const range = { start: 2 * chunkBytes, end: 2 * chunkBytes + 9 }
    for (let i = 0; i < 2; i++) {
      const failure = await Effect.runPromise(Effect.flip(Stream.runDrain(store.read(cid, range))))
      expect(failure).toMatchObject({ _tag: "ContentCorrupt", chunk: 2 })
    }
  })

  it("keeps the cache within its byte bound", async () => {
    const mem = memoryBlobs()
    const store = makeContentStore(mem.blobs, 10 * chunkBytes, chunkBytes)
    const { cid } = await Effect.runPromise(store.put(Stream.succeed(bytes), "video/mp4"))
    await collect(store.read(cid, { start: 0, end: 1 }))
    await collect(store.read(cid, { start: chunkBytes, end: chunkBytes + 1 }))
    const before = mem.calls.chunks
    // Chunk 0 was evicted by chunk 1 (the bound holds one chunk).
    await collect(store.read(cid, { start: 0, end: 1 }))
    expect(mem.calls.chunks).toBe(before + 1)
  })
})
