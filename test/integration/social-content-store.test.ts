// The content store on both backends: same bytes → same CID, streaming in chunks, the size limit,
// ranges, and every read verified (a corrupted chunk is never served).
import { createHash } from "node:crypto"
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Layer, Option, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { rawCid } from "../../src/crypto/cid.ts"
import { configLayer, type NodeConfigs } from "../../src/config.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"
import { chunkBytes, ContentStore } from "../../src/social/content/ContentStore.ts"
import { layerFs } from "../../src/social/content/FsBlobs.ts"
import { layerPg } from "../../src/social/content/PgBlobs.ts"

let db: TestDatabase
const dataDir = mkdtempSync(join(tmpdir(), "sl-content-"))
beforeAll(async () => {
  db = await createTestDatabase("content")
})
afterAll(async () => {
  await db?.drop()
})

const limit = 3 * chunkBytes + 1000
const run = <A, E>(backend: "pg" | "fs", effect: Effect.Effect<A, E, ContentStore | SqlClient.SqlClient>) => {
  const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey, SHARDLINE_DATA_DIR: dataDir, SHARDLINE_SOCIAL_CONTENT_BYTES_MAX: String(limit) })
  const store: Layer.Layer<ContentStore, never, NodeConfigs | SqlClient.SqlClient> = backend === "pg" ? layerPg : layerFs
  const layer = store.pipe(Layer.provideMerge(databaseLayer({ applicationName: "shardline:test", migrations })), Layer.provide(configLayer(config)))
  return Effect.runPromise(Effect.scoped(Effect.provide(effect, layer)))
}

const pseudo = (n: number, seed: number) => {
  const out = Buffer.alloc(n)
  let x = seed
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    out[i] = x >>> 24
  }
  return out
}
/** The bytes as a stream of uneven pieces, the way a socket delivers them. */
const pieces = (bytes: Buffer) => Stream.fromIterable(Array.from({ length: Math.ceil(bytes.length / 7777) }, (_, i) => bytes.subarray(i * 7777, (i + 1) * 7777)))
const collect = (s: Stream.Stream<Uint8Array, unknown>) => Effect.map(Stream.runCollect(s), (c) => Buffer.concat(Chunk.toArray(c)))

describe.each(["pg", "fs"] as const)("content store (%s)", (backend) => {
  const bytes = pseudo(2 * chunkBytes + 12345, backend === "pg" ? 1 : 2)
  const cid = rawCid(bytes)

  it("stores streamed bytes under their CIDv1 raw sha2-256; the same bytes give the same CID once", async () => {
    const first = await run(backend, Effect.flatMap(ContentStore, (s) => s.put(pieces(bytes), "video/mp4")))
    expect(first).toEqual({ cid, size: bytes.length, mediaType: "video/mp4", created: true })
    expect(cid).toMatch(/^bafkrei[a-z2-7]{52}$/)
    const again = await run(backend, Effect.flatMap(ContentStore, (s) => s.put(Stream.succeed(bytes), "video/mp4")))
    expect(again).toEqual({ cid, size: bytes.length, mediaType: "video/mp4", created: false })
    const back = await run(backend, Effect.flatMap(ContentStore, (s) => collect(s.read(cid))))
    expect(back.equals(bytes)).toBe(true)
  })

  it("reads any range, across chunk borders", async () => {
    for (const [start, end] of [[0, 0], [chunkBytes - 3, chunkBytes + 2], [5, bytes.length - 1], [bytes.length - 1, bytes.length - 1], [100, 2 * chunkBytes + 10]] as const) {
      const part = await run(backend, Effect.flatMap(ContentStore, (s) => collect(s.read(cid, { start, end }))))
      expect(part.equals(bytes.subarray(start, end + 1)), `${start}-${end}`).toBe(true)
    }
  })

  it("stores the empty item and a one-byte item", async () => {
    const empty = await run(backend, Effect.flatMap(ContentStore, (s) => s.put(Stream.empty, "text/plain")))
    expect(empty.cid).toBe("bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku")
    expect((await run(backend, Effect.flatMap(ContentStore, (s) => collect(s.read(empty.cid))))).length).toBe(0)
    const one = await run(backend, Effect.flatMap(ContentStore, (s) => s.put(Stream.succeed(Buffer.from("x")), "text/plain")))
    expect(one.cid).toBe(rawCid(Buffer.from("x")))
  })

  it("refuses an item over the limit and keeps nothing of it", async () => {
    const big = pseudo(limit + 1, 9)
    const r = await run(backend, Effect.flatMap(ContentStore, (s) => Effect.flip(s.put(pieces(big), "video/mp4"))))
    expect(r._tag).toBe("ContentTooLarge")
    expect(await run(backend, Effect.flatMap(ContentStore, (s) => s.stat(rawCid(big))))).toEqual(Option.none())
    // Exactly the limit is fine.
    const edge = await run(backend, Effect.flatMap(ContentStore, (s) => s.put(pieces(pseudo(limit, 10)), "video/mp4")))
    expect(edge.size).toBe(limit)
    if (backend === "pg") expect((await db.query("SELECT count(*)::int AS n FROM social_blobs WHERE cid IS NULL"))[0]).toEqual({ n: 0 })
    else expect(readdirSync(join(dataDir, "content", "staging"))).toEqual([])
  })

  it("never serves a corrupted chunk: the read fails instead", async () => {
    const victim = pseudo(chunkBytes + 10, backend === "pg" ? 3 : 4)
    const vcid = (await run(backend, Effect.flatMap(ContentStore, (s) => s.put(Stream.succeed(victim), "image/png")))).cid
    const bad = Buffer.from(victim)
    bad[chunkBytes + 1] ^= 0xff
    if (backend === "pg") {
      await db.query("UPDATE social_blob_chunks SET bytes = $1 FROM social_blobs b WHERE b.blob_id = social_blob_chunks.blob_id AND b.cid = $2 AND n = 1", [bad.subarray(chunkBytes), vcid])
    } else {
      writeFileSync(join(dataDir, "content", vcid.slice(-2), vcid), bad)
    }
    const whole = await run(backend, Effect.flatMap(ContentStore, (s) => Effect.flip(collect(s.read(vcid)))))
    expect(whole).toMatchObject({ _tag: "ContentCorrupt", cid: vcid, chunk: 1 })
    const range = await run(backend, Effect.flatMap(ContentStore, (s) => Effect.flip(collect(s.read(vcid, { start: chunkBytes, end: chunkBytes + 5 })))))
    expect(range).toMatchObject({ _tag: "ContentCorrupt", chunk: 1 })
    // The untouched first chunk still reads.
    const ok = await run(backend, Effect.flatMap(ContentStore, (s) => collect(s.read(vcid, { start: 0, end: 99 }))))
    expect(ok.equals(victim.subarray(0, 100))).toBe(true)
    expect(createHash("sha256").update(victim).digest("hex")).not.toBe(createHash("sha256").update(bad).digest("hex"))
  })
})
