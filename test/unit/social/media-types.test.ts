// What an upload is stored and served as (issue 23.15): decided by its bytes, HLS segments and
// playlists included, unknown bytes as application/octet-stream, active content refused.
import { Effect, Either, Option, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { ContentStore, chunkBytes, makeContentStore } from "../../../src/social/content/ContentStore.ts"
import { essenceOf, hlsPlaylist, mediaTypeOf, octetStream, sniffBytes } from "../../../src/social/content/mediaTypes.ts"
import { putMedia } from "../../../src/social/content/putMedia.ts"
import { memoryBlobs } from "../../support/memoryBlobs.ts"

/** `packets` MPEG-TS packets: sync byte 0x47, then payload bytes that are not 0x47. */
const tsSegment = (packets: number): Buffer => {
  const b = Buffer.alloc(188 * packets, 0x11)
  for (let i = 0; i < packets; i++) b[i * 188] = 0x47
  return b
}
const box = (type: string, payload: Buffer = Buffer.alloc(8)): Buffer => {
  const size = Buffer.alloc(4)
  size.writeUInt32BE(8 + payload.length)
  return Buffer.concat([size, Buffer.from(type, "latin1"), payload])
}
const playlist = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.0,\nbafkreiabc\n"
const decided = (declared: string | undefined, bytes: Uint8Array) => mediaTypeOf(declared, bytes.subarray(0, sniffBytes))

describe("media types by content", () => {
  it("names HLS segments and playlists by their bytes, whatever the client declared", () => {
    for (const declared of [undefined, "", "application/octet-stream", "video/vnd.dlna.mpeg-tts", "text/vnd.trolltech.linguist", "video/mp2t"]) {
      expect(decided(declared, tsSegment(10)), String(declared)).toEqual(Either.right("video/mp2t"))
    }
    expect(decided(undefined, box("styp", Buffer.from("msdh\0\0\0\0msdhmsix")))).toEqual(Either.right("video/iso.segment"))
    expect(decided("", box("moof"))).toEqual(Either.right("video/iso.segment"))
    // An fMP4 init segment is an MP4 file (ftyp).
    expect(decided("video/iso.segment", box("ftyp", Buffer.from("isom\0\0\0\0")))).toEqual(Either.right("video/mp4"))
    for (const declared of [undefined, "audio/x-mpegurl", "text/plain", "application/x-mpegURL"]) {
      expect(decided(declared, Buffer.from(playlist))).toEqual(Either.right(hlsPlaylist))
    }
    expect(decided(undefined, Buffer.from(`\ufeff${playlist}`))).toEqual(Either.right(hlsPlaylist))
  })

  it("needs the sync byte at every packet: one packet, a missing sync or a GIF is not MPEG-TS", () => {
    expect(decided(undefined, tsSegment(1))).toEqual(Either.right(octetStream))
    const broken = tsSegment(4)
    broken[188 * 2] = 0x48
    expect(decided(undefined, broken)).toEqual(Either.right(octetStream))
    expect(decided(undefined, Buffer.concat([Buffer.from("GIF89a"), tsSegment(3).subarray(6)]))).toEqual(Either.right("image/gif"))
  })

  it("knows the other media by signature, and the bytes win over a wrong declaration", () => {
    const cases: ReadonlyArray<[Buffer, string]> = [
      [Buffer.from("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", "latin1"), "image/png"],
      [Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]), "image/jpeg"],
      [Buffer.from("RIFF\0\0\0\0WEBPVP8 ", "latin1"), "image/webp"],
      [Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 1, 2]), "video/webm"],
      [Buffer.from("OggS\0\x02", "latin1"), "audio/ogg"],
      [Buffer.from("ID3\x04\0\0", "latin1"), "audio/mpeg"],
      [Buffer.from([0xff, 0xfb, 0x90, 0x64]), "audio/mpeg"]
    ]
    for (const [bytes, type] of cases) expect(decided("video/mp4", bytes), type).toEqual(Either.right(type))
  })

  it("keeps a declared passive type for bytes of no known signature; anything else is application/octet-stream", () => {
    const noise = Buffer.from("just some bytes \x01\x02", "latin1")
    expect(decided("video/mp4", noise)).toEqual(Either.right("video/mp4"))
    expect(decided("text/plain; charset=utf-8", Buffer.from("hello"))).toEqual(Either.right("text/plain"))
    expect(decided("image/jpg", noise)).toEqual(Either.right("image/jpeg"))
    for (const declared of [undefined, "", "application/pdf", "application/zip", "x/y", "application/octet-stream"]) {
      expect(decided(declared, noise), String(declared)).toEqual(Either.right(octetStream))
    }
    expect(decided(undefined, new Uint8Array())).toEqual(Either.right(octetStream))
  })

  it("refuses active content, declared or sniffed (the XSS guard)", () => {
    for (const declared of ["text/html", "image/svg+xml", "application/xhtml+xml", "text/xml", "application/xml", "text/javascript", "application/javascript", "TEXT/HTML; charset=utf-8"]) {
      expect(Either.isLeft(decided(declared, Buffer.from("plain words"))), declared).toBe(true)
    }
    for (const body of ["<!DOCTYPE html><p>x", "  \n<html>", "<svg onload=alert(1)>", "<?xml version=\"1.0\"?><svg/>", "\ufeff<script>alert(1)</script>", "<b>bold</b>", "<!-- x -->"]) {
      expect(Either.isLeft(decided("image/png", Buffer.from(body))), body).toBe(true)
    }
    // Text that merely mentions a tag is not HTML.
    expect(decided("text/plain", Buffer.from("a <b> tag"))).toEqual(Either.right("text/plain"))
    expect(decided("text/plain", Buffer.from("<bold claim>"))).toEqual(Either.right("text/plain"))
  })

  it("resolves aliases and parameters of the declared type", () => {
    expect(essenceOf(" Audio/MPEGURL ; x=1")).toBe(hlsPlaylist)
    expect(essenceOf(undefined)).toBe("")
  })
})

describe("putMedia", () => {
  const store = makeContentStore(memoryBlobs().blobs, 10 * chunkBytes)
  const put = (pieces: ReadonlyArray<Uint8Array>, declared: string | undefined) =>
    Effect.runPromise(Effect.either(putMedia(Stream.fromIterable(pieces), declared).pipe(Effect.provideService(ContentStore, store))))

  it("stores every byte under the type its head decides, however the stream is cut", async () => {
    const segment = tsSegment(2000)
    const pieces = [segment.subarray(0, 1), segment.subarray(1, 300), segment.subarray(300, 100_000), segment.subarray(100_000)]
    const stored = Either.getOrThrow(await put(pieces, "video/vnd.dlna.mpeg-tts"))
    expect(stored).toMatchObject({ size: segment.length, mediaType: "video/mp2t" })
    const back = Option.getOrThrow(await Effect.runPromise(store.readAll(stored.cid, segment.length)))
    expect(Buffer.from(back).equals(segment)).toBe(true)
    expect(Either.getOrThrow(await put([Buffer.from(playlist)], undefined)).mediaType).toBe(hlsPlaylist)
    expect(Either.getOrThrow(await put([], undefined))).toMatchObject({ size: 0, mediaType: octetStream })
  })

  it("refuses active content before storing anything", async () => {
    const refused = await put([Buffer.from("<svg onload=alert(1)>")], "image/png")
    expect(Either.isLeft(refused) && refused.left._tag).toBe("MediaRefused")
  })
})
