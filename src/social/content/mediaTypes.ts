// What type an uploaded item is served as (docs/social.md, "Upload types"): decided by its bytes,
// not only by what the client declared (a browser names a .ts segment video/mp2t, or
// video/vnd.dlna.mpeg-tts, or a TypeScript type; an .m3u8 or .m4s often nothing at all). Pure.
//
// 1. Active types are refused: a declared type that is HTML, XML (SVG included) or script, or
//    bytes that begin like HTML, SVG or XML (WHATWG MIME Sniffing §7.1). Served from our origin
//    they could run script; nothing else we serve can.
// 2. Bytes that match a signature are served as that type, whatever was declared: PNG, JPEG,
//    GIF, WebP, MP4 (an ftyp box; an fMP4 init segment too), fMP4 media segment (styp or moof
//    box: video/iso.segment), WebM, Ogg, MP3, MPEG-TS (sync byte 0x47 every 188 bytes:
//    video/mp2t) and the HLS playlist (#EXTM3U: application/vnd.apple.mpegurl).
// 3. Bytes that match none keep the declared type when it is one of the passive types above or
//    text/plain (after its aliases: image/jpg, audio/mp3, audio/x-mpegurl, …).
// 4. Anything else is application/octet-stream, served as an attachment (downloadResponse).
import { Either } from "effect"

export const octetStream = "application/octet-stream"
export const hlsPlaylist = "application/vnd.apple.mpegurl"
export const mpegTs = "video/mp2t"
export const fmp4Segment = "video/iso.segment"

/** Types an item may be served as besides application/octet-stream. */
export const passiveTypes: ReadonlySet<string> = new Set([
  "image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4", "video/webm", "audio/mpeg", "audio/ogg", "text/plain",
  mpegTs, fmp4Segment, hlsPlaylist
])

/** Bytes of an item's head the decision reads (enough for five MPEG-TS packets). */
export const sniffBytes = 188 * 5

const aliases: Readonly<Record<string, string>> = {
  "image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "audio/mp3": "audio/mpeg", "audio/x-mp3": "audio/mpeg",
  "video/vnd.dlna.mpeg-tts": mpegTs, "video/mp2ts": mpegTs, "video/mpeg2-ts": mpegTs,
  "audio/mpegurl": hlsPlaylist, "audio/x-mpegurl": hlsPlaylist, "application/x-mpegurl": hlsPlaylist, "application/mpegurl": hlsPlaylist
}

/** The declared type's essence (no parameters, lower case, aliases resolved); "" when none. */
export const essenceOf = (declared: string | undefined): string => {
  const essence = (declared ?? "").split(";")[0]!.trim().toLowerCase()
  return aliases[essence] ?? essence
}

/** HTML, XML (SVG, XHTML, XSLT) or script: what a browser may run when served from our origin. */
export const isActiveType = (essence: string): boolean => /html|xml|javascript|ecmascript|jscript/.test(essence)

const ascii = (head: Uint8Array, at: number, text: string): boolean => {
  if (head.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) if (head[at + i] !== text.charCodeAt(i)) return false
  return true
}

/** The four-character type of an ISO BMFF box at the start (its 32-bit size at least 8). */
const firstBox = (head: Uint8Array): string | undefined => {
  if (head.length < 8) return undefined
  const size = ((head[0]! << 24) >>> 0) + (head[1]! << 16) + (head[2]! << 8) + head[3]!
  if (size !== 1 && size < 8) return undefined
  const type = String.fromCharCode(head[4]!, head[5]!, head[6]!, head[7]!)
  return /^[a-z0-9 ]{4}$/.test(type) ? type : undefined
}

/** MPEG-TS: 0x47 at the start of every 188-byte packet in the head, at least two of them. */
const isMpegTs = (head: Uint8Array): boolean => {
  if (head.length <= 188) return false
  for (let at = 0; at < head.length; at += 188) if (head[at] !== 0x47) return false
  return true
}

/** MPEG audio frame header (layer I-III, a valid bitrate and sample rate) or an ID3v2 tag. */
const isMp3 = (head: Uint8Array): boolean => {
  if (ascii(head, 0, "ID3")) return true
  if (head.length < 4 || head[0] !== 0xff || (head[1]! & 0xe0) !== 0xe0) return false
  const version = (head[1]! >> 3) & 3
  const layer = (head[1]! >> 1) & 3
  const bitrate = head[2]! >> 4
  const rate = (head[2]! >> 2) & 3
  return version !== 1 && layer !== 0 && bitrate !== 0xf && rate !== 3
}

const BOM = [0xef, 0xbb, 0xbf]
const withoutBom = (head: Uint8Array): Uint8Array => (head[0] === BOM[0] && head[1] === BOM[1] && head[2] === BOM[2] ? head.subarray(3) : head)

/** WHATWG MIME Sniffing §7.1 "identifying a resource with an unknown MIME type": the HTML and XML patterns, and <svg. */
const htmlTags = ["!DOCTYPE HTML", "HTML", "HEAD", "SCRIPT", "IFRAME", "H1", "DIV", "FONT", "TABLE", "A", "STYLE", "TITLE", "B", "BODY", "BR", "P", "!--", "SVG"]
const looksActive = (head: Uint8Array): boolean => {
  const bytes = withoutBom(head)
  let i = 0
  while (i < bytes.length && (bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0c || bytes[i] === 0x0d || bytes[i] === 0x20)) i++
  if (bytes[i] !== 0x3c) return false
  const rest = Buffer.from(bytes.subarray(i + 1, i + 16)).toString("latin1").toUpperCase()
  if (rest.startsWith("?XML")) return true
  return htmlTags.some((tag) => rest.startsWith(tag) && (rest.length === tag.length || rest[tag.length] === " " || rest[tag.length] === ">"))
}

/** The type the bytes themselves say, or undefined. Active content is "active". */
export const sniff = (head: Uint8Array): string | "active" | undefined => {
  if (ascii(head, 0, "\x89PNG\r\n\x1a\n")) return "image/png"
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg"
  if (ascii(head, 0, "GIF87a") || ascii(head, 0, "GIF89a")) return "image/gif"
  if (ascii(head, 0, "RIFF") && ascii(head, 8, "WEBP")) return "image/webp"
  const box = firstBox(head)
  if (box === "ftyp") return "video/mp4"
  if (box === "styp" || box === "moof") return fmp4Segment
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return "video/webm"
  if (ascii(head, 0, "OggS")) return "audio/ogg"
  if (ascii(withoutBom(head), 0, "#EXTM3U")) return hlsPlaylist
  if (isMpegTs(head)) return mpegTs
  if (isMp3(head)) return "audio/mpeg"
  if (looksActive(head)) return "active"
  return undefined
}

/**
 * The type an upload is stored and served as, from its declared type and the first
 * `sniffBytes` of its bytes (all of them when shorter); Left(reason) for active content.
 */
export const mediaTypeOf = (declared: string | undefined, head: Uint8Array): Either.Either<string, string> => {
  const essence = essenceOf(declared)
  if (isActiveType(essence)) return Either.left(`${essence} is refused: served from this origin it could run script`)
  const sniffed = sniff(head)
  if (sniffed === "active") return Either.left("the content is HTML, SVG or XML, which is refused: served from this origin it could run script")
  if (sniffed !== undefined) return Either.right(sniffed)
  return Either.right(passiveTypes.has(essence) ? essence : octetStream)
}

/** Extensions the CLI names a file's declared type by; any other file is declared as nothing (its bytes decide). */
export const typesByExtension: Readonly<Record<string, string>> = {
  ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
  ".mp4": "video/mp4", ".m4v": "video/mp4", ".webm": "video/webm", ".mp3": "audio/mpeg", ".ogg": "audio/ogg", ".txt": "text/plain",
  ".ts": mpegTs, ".m4s": fmp4Segment, ".m3u8": hlsPlaylist
}
