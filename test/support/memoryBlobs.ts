// The content store's backend in memory (unit tests): chunks and metadata in a Map, and a count
// of chunk reads, so a test can tell a read served from the verified-chunk cache.
import { Effect, Option } from "effect"
import type { BlobMeta, Blobs } from "../../src/social/content/ContentStore.ts"

export const memoryBlobs = () => {
  const items = new Map<string, { meta: BlobMeta; chunks: Array<Uint8Array> }>()
  const calls = { chunks: 0 }
  const blobs: Blobs = {
    stage: Effect.sync(() => {
      const chunks: Array<Uint8Array> = []
      return {
        write: (n, bytes) => Effect.sync(() => { chunks[n] = Buffer.from(bytes) }),
        commit: (cid, meta) => Effect.sync(() => {
          if (items.has(cid)) return false
          items.set(cid, { meta, chunks })
          return true
        }),
        abort: Effect.void
      }
    }),
    meta: (cid) => Effect.sync(() => Option.fromNullable(items.get(cid)?.meta)),
    chunks: (cid, from, to) => Effect.sync(() => {
      calls.chunks++
      return items.get(cid)!.chunks.slice(from, to + 1)
    })
  }
  return { blobs, items, calls }
}
