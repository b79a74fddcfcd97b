// The content store (spec: "each item is identified by its CID, a cryptographic hash of its
// bytes"): bytes in, a CIDv1 (raw, sha2-256, base32) out, the same bytes giving the same CID.
// One port, `ContentStore`, over a small backend (`Blobs`) that keeps fixed-size chunks: Postgres
// (PgBlobs.ts, shared by every node of a cluster) or the filesystem (FsBlobs.ts, one node).
//
// Bytes stream in and out one chunk at a time (chunkBytes), never a whole item in memory. Every
// read is verified: each chunk against the sha2-256 recorded for it when the CID was computed
// (so a range read checks only the chunks it touches), and a whole read also against the CID
// itself; a mismatch ends the stream with ContentCorrupt instead of serving wrong bytes.
import { createHash } from "node:crypto"
import { Context, Data, Effect, Either, Option, Stream } from "effect"
import { CID } from "multiformats/cid"
import * as raw from "multiformats/codecs/raw"
import * as Digest from "multiformats/hashes/digest"
import { sha256 } from "multiformats/hashes/sha2"
import { parseRawCid } from "../../crypto/cid.ts"

/** Chunk size of both backends, bytes: one Postgres row, one verified unit of a range read. */
export const chunkBytes = 256 * 1024
/** Chunks one backend read brings at most (1 MiB): a bound on memory per stream, and one round trip per MiB. */
export const chunksPerReadMax = 4
const DIGEST_BYTES = 32

export class ContentTooLarge extends Data.TaggedError("ContentTooLarge")<{ readonly limit: number }> {}
/** The backend failed (database, disk). */
export class ContentStoreError extends Data.TaggedError("ContentStoreError")<{ readonly message: string }> {}
/** Stored bytes no longer match what was recorded for them: never served. */
export class ContentCorrupt extends Data.TaggedError("ContentCorrupt")<{ readonly cid: string; readonly chunk: number }> {}

export interface BlobMeta {
  readonly size: number
  readonly mediaType: string
  readonly chunkBytes: number
  /** sha2-256 of each chunk, concatenated (32 bytes each). */
  readonly digests: Uint8Array
}

export interface StoredContent {
  readonly cid: string
  readonly size: number
  readonly mediaType: string
}

/** An item being written: chunks in order, then committed under its CID or aborted. */
export interface Staging {
  readonly write: (n: number, bytes: Uint8Array) => Effect.Effect<void, ContentStoreError>
  /** Files the item under `cid`; false when that CID was already there (the staging is dropped). */
  readonly commit: (cid: string, meta: BlobMeta) => Effect.Effect<boolean, ContentStoreError>
  readonly abort: Effect.Effect<void>
}

/** What a backend keeps: chunks by CID and their metadata. */
export interface Blobs {
  readonly stage: Effect.Effect<Staging, ContentStoreError>
  readonly meta: (cid: string) => Effect.Effect<Option.Option<BlobMeta>, ContentStoreError>
  /** Chunks `from`..`to` (inclusive, at most chunksPerReadMax), in order. */
  readonly chunks: (cid: string, from: number, to: number, meta: BlobMeta) => Effect.Effect<ReadonlyArray<Uint8Array>, ContentStoreError>
}

/** Inclusive byte range, already checked against the size. */
export interface ByteRange {
  readonly start: number
  readonly end: number
}

export interface ContentStoreShape {
  /** Stores a stream of bytes; at most `limit` bytes (the setting when omitted). */
  readonly put: <E>(bytes: Stream.Stream<Uint8Array, E>, mediaType: string, limit?: number) =>
    Effect.Effect<StoredContent & { readonly created: boolean }, E | ContentTooLarge | ContentStoreError>
  readonly stat: (cid: string) => Effect.Effect<Option.Option<StoredContent>, ContentStoreError>
  /** Verified bytes of `cid` (a whole item, or one range of it). The item must exist (stat first). */
  readonly read: (cid: string, range?: ByteRange) => Stream.Stream<Uint8Array, ContentCorrupt | ContentStoreError>
  /** A small item whole (manifests): read and verified. */
  readonly readAll: (cid: string, max: number) => Effect.Effect<Option.Option<Uint8Array>, ContentCorrupt | ContentStoreError | ContentTooLarge>
  /**
   * Without I/O: the item's metadata and the bytes of `range` when every chunk of it is in memory
   * already verified; undefined otherwise (the HTTP edge then leaves the request to `read`).
   */
  readonly hotRange: (cid: string, range: ByteRange) => { readonly meta: StoredContent; readonly parts: ReadonlyArray<Uint8Array> } | undefined
  /** Without I/O: the item's metadata if this node has it in memory. */
  readonly knownMeta: (cid: string) => StoredContent | undefined
}

export class ContentStore extends Context.Tag("shardline/social/ContentStore")<ContentStore, ContentStoreShape>() {}

const sha = (bytes: Uint8Array): Buffer => createHash("sha256").update(bytes).digest()
const cidOfDigest = (digest: Uint8Array): string => CID.create(1, raw.code, Digest.create(sha256.code, digest)).toString()

/** Collects incoming pieces into chunks of exactly chunkBytes (the last may be shorter). */
class Chunker {
  private parts: Array<Uint8Array> = []
  private held = 0
  push(piece: Uint8Array): Array<Uint8Array> {
    const out: Array<Uint8Array> = []
    let rest = piece
    while (this.held + rest.length >= chunkBytes) {
      const take = chunkBytes - this.held
      this.parts.push(rest.subarray(0, take))
      out.push(Buffer.concat(this.parts))
      this.parts = []
      this.held = 0
      rest = rest.subarray(take)
    }
    if (rest.length > 0) {
      this.parts.push(rest)
      this.held += rest.length
    }
    return out
  }
  flush(): Uint8Array | undefined {
    return this.held === 0 ? undefined : Buffer.concat(this.parts)
  }
}

/** Metadata kept per node: an item never changes under its CID, so a hit never goes stale. */
export const metaCacheEntriesMax = 10_000
/** Chunks kept in memory per node once verified (hot media: a gateway's working set), bytes. */
export const verifiedChunksBytesMax = 64 * 1024 * 1024

/** A bounded, least-recently-used map of verified chunks. */
const chunkCache = (bytesMax: number) => {
  const entries = new Map<string, Uint8Array>()
  let bytes = 0
  return {
    get: (key: string) => {
      const hit = entries.get(key)
      if (hit !== undefined) {
        entries.delete(key)
        entries.set(key, hit)
      }
      return hit
    },
    put: (key: string, chunk: Uint8Array) => {
      if (chunk.length > bytesMax || entries.has(key)) return
      entries.set(key, chunk)
      bytes += chunk.length
      while (bytes > bytesMax) {
        const [oldest, value] = entries.entries().next().value!
        entries.delete(oldest)
        bytes -= value.length
      }
    }
  }
}

export const makeContentStore = (blobs: Blobs, limitDefault: number, hotBytesMax = verifiedChunksBytesMax): ContentStoreShape => {
  const metas = new Map<string, BlobMeta>()
  const hot = chunkCache(hotBytesMax)
  const metaOf = (cid: string) =>
    Effect.suspend(() => {
      const hit = metas.get(cid)
      if (hit !== undefined) return Effect.succeed(Option.some(hit))
      return Effect.tap(blobs.meta(cid), (found) => Effect.sync(() => {
        if (Option.isNone(found)) return
        if (metas.size >= metaCacheEntriesMax) metas.delete(metas.keys().next().value!)
        metas.set(cid, found.value)
      }))
    })
  const put: ContentStoreShape["put"] = (bytes, mediaType, limit = limitDefault) =>
    Effect.acquireUseRelease(
      blobs.stage,
      (staging) =>
        Effect.gen(function*() {
          const whole = createHash("sha256")
          const digests: Array<Buffer> = []
          const chunker = new Chunker()
          let size = 0
          const writeChunk = (chunk: Uint8Array) =>
            Effect.suspend(() => {
              digests.push(sha(chunk))
              return staging.write(digests.length - 1, chunk)
            })
          yield* Stream.runForEach(bytes, (piece: Uint8Array) =>
            Effect.suspend((): Effect.Effect<void, ContentStoreError | ContentTooLarge> => {
              size += piece.length
              if (size > limit) return Effect.fail(new ContentTooLarge({ limit }))
              whole.update(piece)
              return Effect.forEach(chunker.push(piece), writeChunk, { discard: true })
            }))
          const last = chunker.flush()
          if (last !== undefined) yield* writeChunk(last)
          const cid = cidOfDigest(whole.digest())
          const created = yield* staging.commit(cid, { size, mediaType, chunkBytes, digests: Buffer.concat(digests) })
          return { cid, size, mediaType, created }
        }),
      // Committed stagings are gone already; abort is a no-op for them.
      (staging) => staging.abort
    )

  const stat: ContentStoreShape["stat"] = (cid) =>
    Effect.map(metaOf(cid), Option.map((m) => ({ cid, size: m.size, mediaType: m.mediaType })))

  const read: ContentStoreShape["read"] = (cid, range) =>
    Stream.unwrap(Effect.gen(function*() {
      const meta = yield* metaOf(cid)
      if (Option.isNone(meta)) return yield* new ContentStoreError({ message: `no content ${cid}` })
      const m = meta.value
      if (m.size === 0) {
        return range === undefined && cidOfDigest(sha(new Uint8Array())) === cid ? Stream.empty : Stream.fail(new ContentCorrupt({ cid, chunk: 0 }))
      }
      const start = range?.start ?? 0
      const end = range?.end ?? m.size - 1
      const first = Math.floor(start / m.chunkBytes)
      const lastChunk = Math.floor(end / m.chunkBytes)
      const whole = range === undefined || (start === 0 && end === m.size - 1) ? createHash("sha256") : undefined
      const expected = Either.getOrUndefined(parseRawCid(cid))?.sha256
      const slice = (n: number, chunk: Uint8Array) => {
        const base = n * m.chunkBytes
        return chunk.subarray(Math.max(0, start - base), Math.min(chunk.length, end - base + 1))
      }
      const verify = (n: number, chunk: Uint8Array) =>
        Effect.gen(function*() {
          const digest = sha(chunk)
          if (!digest.equals(m.digests.subarray(n * DIGEST_BYTES, (n + 1) * DIGEST_BYTES))) return yield* new ContentCorrupt({ cid, chunk: n })
          whole?.update(chunk)
          if (n === lastChunk && whole !== undefined && (expected === undefined || !whole.digest().equals(expected))) {
            return yield* new ContentCorrupt({ cid, chunk: n })
          }
          hot.put(`${cid}:${n}`, chunk)
          return slice(n, chunk)
        })
      const batch = (from: number) =>
        Effect.gen(function*() {
          const to = Math.min(lastChunk, from + chunksPerReadMax - 1)
          // A range read serves chunks verified earlier from memory; a whole read hashes every
          // chunk again for its check against the CID, so it always goes to the backend.
          if (whole === undefined) {
            const kept: Array<Uint8Array> = []
            for (let n = from; n <= to; n++) {
              const hit = hot.get(`${cid}:${n}`)
              if (hit === undefined) break
              kept.push(slice(n, hit))
            }
            if (kept.length === to - from + 1) return kept
          }
          const got = yield* blobs.chunks(cid, from, to, m)
          if (got.length !== to - from + 1) return yield* new ContentStoreError({ message: `chunks ${from}..${to} of ${cid}: ${got.length} found` })
          return yield* Effect.forEach(got, (chunk, i) => verify(from + i, chunk))
        })
      const starts = Array.from({ length: Math.ceil((lastChunk - first + 1) / chunksPerReadMax) }, (_, i) => first + i * chunksPerReadMax)
      return Stream.fromIterable(starts).pipe(Stream.mapEffect(batch), Stream.flattenIterables)
    }))

  const readAll: ContentStoreShape["readAll"] = (cid, max) =>
    Effect.gen(function*() {
      const found = yield* stat(cid)
      if (Option.isNone(found)) return Option.none()
      if (found.value.size > max) return yield* new ContentTooLarge({ limit: max })
      const chunks = yield* Stream.runCollect(read(cid))
      return Option.some(new Uint8Array(Buffer.concat([...chunks])))
    })

  const knownMeta: ContentStoreShape["knownMeta"] = (cid) => {
    const m = metas.get(cid)
    return m === undefined ? undefined : { cid, size: m.size, mediaType: m.mediaType }
  }

  const hotRange: ContentStoreShape["hotRange"] = (cid, range) => {
    const m = metas.get(cid)
    if (m === undefined || range.start > range.end || range.end >= m.size) return undefined
    const parts: Array<Uint8Array> = []
    for (let n = Math.floor(range.start / m.chunkBytes); n <= Math.floor(range.end / m.chunkBytes); n++) {
      const hit = hot.get(`${cid}:${n}`)
      if (hit === undefined) return undefined
      const base = n * m.chunkBytes
      parts.push(hit.subarray(Math.max(0, range.start - base), Math.min(hit.length, range.end - base + 1)))
    }
    return { meta: { cid, size: m.size, mediaType: m.mediaType }, parts }
  }

  return { put, stat, read, readAll, hotRange, knownMeta }
}

/** A stream over one in-memory buffer (small items the service writes itself: manifests). */
export const bytesStream = (bytes: Uint8Array): Stream.Stream<Uint8Array> => Stream.succeed(bytes)
