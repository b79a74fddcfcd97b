// Content on the filesystem, for a single node: `<dir>/<last two CID characters>/<cid>` holds the
// bytes and `<cid>.json` the metadata (size, media type, chunk digests). An item is written to
// `<dir>/staging/` first and renamed into place on commit, so a reader never sees half a file.
import { randomUUID } from "node:crypto"
import { existsSync } from "node:fs"
import { mkdir, open, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../platform/Config.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { type Blobs, type BlobMeta, ContentStore, ContentStoreError, makeContentStore } from "./ContentStore.ts"

const storeError = (e: unknown) => new ContentStoreError({ message: `content store (filesystem): ${e instanceof Error ? e.message : String(e)}` })
const io = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: storeError })

interface MetaFile {
  readonly size: number
  readonly mediaType: string
  readonly chunkBytes: number
  readonly digests: string
}

export const makeFsBlobs = (dir: string): Blobs => {
  const place = (cid: string) => join(dir, cid.slice(-2), cid)
  return {
    stage: io(async () => {
      const staging = join(dir, "staging")
      await mkdir(staging, { recursive: true })
      const path = join(staging, `${randomUUID()}.part`)
      const handle = await open(path, "w")
      let closed = false
      const close = async () => {
        if (!closed) {
          closed = true
          await handle.close()
        }
      }
      return {
        // Chunks come in order, so appending is writing at n × chunkBytes.
        write: (_n: number, bytes: Uint8Array) => io(() => handle.write(bytes).then(() => undefined)),
        commit: (cid: string, meta: BlobMeta) =>
          io(async () => {
            await close()
            const target = place(cid)
            if (existsSync(`${target}.json`)) {
              await rm(path, { force: true })
              return false
            }
            await mkdir(join(dir, cid.slice(-2)), { recursive: true })
            await rename(path, target)
            const file: MetaFile = { size: meta.size, mediaType: meta.mediaType, chunkBytes: meta.chunkBytes, digests: Buffer.from(meta.digests).toString("base64") }
            // Metadata last: an item is there once its .json is.
            await writeFile(`${target}.json.tmp`, JSON.stringify(file))
            await rename(`${target}.json.tmp`, `${target}.json`)
            return true
          }),
        abort: Effect.promise(async () => {
          await close().catch(() => undefined)
          await rm(path, { force: true }).catch(() => undefined)
        })
      }
    }),
    meta: (cid) =>
      io(async () => {
        const path = `${place(cid)}.json`
        if (!existsSync(path)) return Option.none()
        const m = JSON.parse(await readFile(path, "utf8")) as MetaFile
        return Option.some({ size: m.size, mediaType: m.mediaType, chunkBytes: m.chunkBytes, digests: Buffer.from(m.digests, "base64") })
      }),
    chunks: (cid, from, to, m) =>
      io(async () => {
        // One open per batch of chunks, read in order.
        const handle = await open(place(cid), "r")
        try {
          const out: Array<Uint8Array> = []
          for (let n = from; n <= to; n++) {
            const start = n * m.chunkBytes
            const length = Math.max(0, Math.min(m.chunkBytes, m.size - start))
            const buffer = Buffer.alloc(length)
            const { bytesRead } = await handle.read(buffer, 0, length, start)
            out.push(buffer.subarray(0, bytesRead))
          }
          return out
        } finally {
          await handle.close()
        }
      })
  }
}

export const layerFs = Layer.effect(ContentStore, Effect.map(Effect.all([AppConfig, SocialConfig]), ([app, social]) =>
  makeContentStore(makeFsBlobs(join(app.dataDir, "content")), social.socialContentBytesMax, social.socialChunkCacheBytes)))

