// Hot media ranges answered by the HTTP edge (ServiceEdge.fastRaw), before Effect: a GET of one
// byte range of a CID whose metadata, served state and every touched chunk this node holds in
// memory, already verified (ContentStore.hotRange, served.ts). Anything else (a whole item, which
// must be re-verified against its CID, several ranges, conditional requests, a cold chunk) goes
// to the Effect handler, which answers with the same headers (streamHeaders).
import type { IncomingMessage, ServerResponse } from "node:http"
import { corsHeaders } from "../../platform/http/openCors.ts"
import type { ContentStoreShape } from "../content/ContentStore.ts"
import { octetStream } from "../content/mediaTypes.ts"
import { contentRange, parseRange } from "../content/ranges.ts"
import { servedNow } from "../content/served.ts"

const prefix = "/api/stream/"

/**
 * The headers every /api/stream answer carries besides type, length and range. An item of no
 * known type (application/octet-stream, mediaTypes.ts) is a download, never rendered inline.
 */
export const streamHeaders = (cid: string, mediaType: string): Record<string, string> => ({
  etag: `"${cid}"`,
  "accept-ranges": "bytes",
  // Content never changes under a CID.
  "cache-control": "public, max-age=31536000, immutable",
  "x-content-type-options": "nosniff",
  "content-security-policy": "default-src 'none'; sandbox",
  ...(mediaType === octetStream ? { "content-disposition": `attachment; filename="${cid}"` } : {})
})

export const fastStream = (store: ContentStoreShape) =>
(req: IncomingMessage, res: ServerResponse, path: string, headers: Record<string, string>): number | undefined => {
  if (!path.startsWith(prefix) || req.headers.range === undefined || req.headers["if-range"] !== undefined || req.headers["if-none-match"] !== undefined) {
    return undefined
  }
  const cid = path.slice(prefix.length)
  const meta = store.knownMeta(cid)
  if (meta === undefined || servedNow(cid) !== true) return undefined
  const range = parseRange(req.headers.range, meta.size)
  if (range._tag !== "Partial" || range.ranges.length !== 1) return undefined
  const r = range.ranges[0]!
  const hot = store.hotRange(cid, r)
  if (hot === undefined) return undefined
  res.writeHead(206, {
    ...headers, ...corsHeaders, ...streamHeaders(cid, meta.mediaType),
    "content-type": meta.mediaType, "content-length": String(r.end - r.start + 1), "content-range": contentRange(r, meta.size)
  })
  for (const part of hot.parts) res.write(part)
  res.end()
  return 206
}
