// Content chunks in Postgres (social_blobs, social_blob_chunks): every node of a cluster reads
// what any node wrote, and the embedded default needs nothing else. A staging row (cid NULL)
// collects the chunks; commit names it by its CID, or drops it when that CID is already stored
// (two uploads of the same bytes racing: the unique index on cid decides).
import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { SocialConfig } from "../SocialConfig.ts"
import { type Blobs, type BlobMeta, ContentStore, ContentStoreError, makeContentStore, type Staging } from "./ContentStore.ts"

const storeError = (e: { readonly message: string }) => new ContentStoreError({ message: `content store (postgres): ${e.message}` })

export const makePgBlobs = Effect.map(SqlClient.SqlClient, (sql): Blobs => ({
  stage: Effect.gen(function*() {
    const id = randomUUID()
    yield* sql`INSERT INTO social_blobs (blob_id) VALUES (${id})`
    const drop = sql`DELETE FROM social_blobs WHERE blob_id = ${id} AND cid IS NULL`
    const staging: Staging = {
      write: (n, bytes) => sql`INSERT INTO social_blob_chunks (blob_id, n, bytes) VALUES (${id}, ${n}, ${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)})`.pipe(
        Effect.asVoid, Effect.mapError(storeError)),
      commit: (cid, meta) =>
        Effect.gen(function*() {
          const [known] = yield* sql`SELECT 1 FROM social_blobs WHERE cid = ${cid}`
          if (known !== undefined) return yield* Effect.as(drop, false)
          return yield* sql`UPDATE social_blobs SET cid = ${cid}, size = ${meta.size}, media_type = ${meta.mediaType},
              chunk_bytes = ${meta.chunkBytes}, digests = ${Buffer.from(meta.digests)} WHERE blob_id = ${id}`.pipe(
            Effect.as(true),
            // Another upload of the same bytes committed first.
            Effect.catchAll(() => Effect.as(drop, false))
          )
        }).pipe(Effect.mapError(storeError)),
      abort: Effect.ignore(drop)
    }
    return staging
  }).pipe(Effect.mapError(storeError)),
  meta: (cid) =>
    sql<{ size: string; media_type: string; chunk_bytes: number; digests: Uint8Array }>`SELECT size::text AS size, media_type, chunk_bytes, digests
      FROM social_blobs WHERE cid = ${cid}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r): BlobMeta => ({
        size: Number(r.size), mediaType: r.media_type, chunkBytes: r.chunk_bytes, digests: r.digests
      })))),
      Effect.mapError(storeError)
    ),
  // Base64 rather than bytea's hex text: 1.33 bytes on the wire per byte instead of 2, and about
  // half the client CPU per MiB (measured with pg: 2.5 ms against 4.7 ms for 1.25 MiB).
  chunks: (cid, from, to, _meta) =>
    sql<{ b64: string }>`SELECT encode(c.bytes, 'base64') AS b64 FROM social_blob_chunks c JOIN social_blobs b USING (blob_id)
      WHERE b.cid = ${cid} AND c.n BETWEEN ${from} AND ${to} ORDER BY c.n`.pipe(
      Effect.map((rows) => rows.map((r): Uint8Array => Buffer.from(r.b64, "base64"))),
      Effect.mapError(storeError)
    )
}))

export const layerPg = Layer.effect(ContentStore, Effect.gen(function*() {
  const config = yield* SocialConfig
  return makeContentStore(yield* makePgBlobs, config.socialContentBytesMax, config.socialChunkCacheBytes)
}))
