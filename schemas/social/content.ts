// The social content routes (issue 14; docs/social.md): the composer's upload and post endpoints
// behind the session, and the public reads: post lookup with its proof, oEmbed, message
// verification, the chain-only timeline, media streaming, pages and embeds.
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonBody } from "../common/jsonBody.ts"
import { OpenCors } from "../common/OpenCors.ts"
import { Weight } from "../common/Weight.ts"
import { BadRequest, ContentConflict, ContentGone, ContentTooLarge, Forbidden, IdempotencyKeyReused, NotFound, NotImplemented, PaymentRequired, ServiceUnavailable, UnsupportedMediaType } from "./errors.ts"
import { chainSlug } from "./health.ts"
import { PostKind, PostReceipt, PostState, PostStateReply, StampingState, UnsignedStamps } from "./post.ts"
import { SessionAuth } from "./security.ts"
import { ContinuityView } from "./continuity.ts"

const Cid = Schema.String.pipe(Schema.maxLength(128))
const Id = Schema.String.pipe(Schema.maxLength(64))

export const MetadataBody = Schema.Struct({
  body: Schema.optional(Schema.String.pipe(Schema.maxLength(10_000))),
  tags: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(40))).pipe(Schema.maxItems(20)))
})
export const CommentBody = Schema.Struct({ body: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(10_000)) })

export const ContinuityStartBody = Schema.Struct({ newAddress: Schema.String.pipe(Schema.maxLength(64)) })

export const UploadReceipt = Schema.Struct({ cid: Schema.String, size: Schema.Int, mediaType: Schema.String })

export const NewPost = Schema.Struct({
  body: Schema.String.pipe(Schema.maxLength(10_000)),
  kind: Schema.optional(PostKind),
  tags: Schema.optional(Schema.Array(Schema.String.pipe(Schema.maxLength(40))).pipe(Schema.maxItems(20))),
  media: Schema.optional(Schema.Array(Cid).pipe(Schema.maxItems(20)))
})

export const PostLookup = Schema.Struct({
  post: Schema.Struct({
    shortId: Schema.String,
    id: Schema.String.annotations({ description: "Long id (uuid)" }),
    kind: Schema.String,
    body: Schema.String,
    tags: Schema.Array(Schema.String),
    media: Schema.Array(Schema.String),
    state: PostState,
    createdAt: Schema.String
  }),
  author: Schema.Struct({
    wallet: Schema.String.annotations({ description: "The account's identity address now (after a succession, the new one)" }),
    handle: Schema.NullOr(Schema.String),
    assetId: Schema.String,
    previousAddresses: Schema.Array(Schema.String).annotations({ description: "Earlier identity addresses of the account, oldest first (one per CHV1N succession)" })
  }),
  proof: Schema.Struct({
    metadataCid: Schema.String,
    ownerAddress: Schema.String,
    derivationPath: Schema.String,
    txHash: Schema.NullOr(Schema.String).annotations({ description: "The CHV1P stamp's txid; null while stamping is pending" }),
    opReturn: Schema.NullOr(Schema.String).annotations({ description: "<tag>|<cid>|<suffix>; suffix = <author #asset id>.<stamp number on the address, base 36>; null while pending" }),
    stamping: StampingState
  }),
  links: Schema.Struct({ page: Schema.String, embed: Schema.String, oembed: Schema.String })
})
export type PostLookup = typeof PostLookup.Type

export const CommentView = Schema.Struct({
  id: Schema.String.annotations({ description: "The comment's id (uuid)" }),
  author: Schema.Struct({
    wallet: Schema.String.annotations({ description: "The commenter's identity address now" }),
    handle: Schema.NullOr(Schema.String),
    assetId: Schema.String
  }),
  body: Schema.String,
  bodyCid: Schema.String.annotations({ description: "CID of the body (text/plain content, /api/stream/{cid})" }),
  manifestCid: Schema.NullOr(Schema.String).annotations({ description: "CID of the comment manifest (names the post and the body), carried by the XM stamp; by the X stamp for comments made before XM" }),
  address: Schema.NullOr(Schema.String).annotations({ description: "The comment's own derived address, which sent its X stamp" }),
  derivationPath: Schema.NullOr(Schema.String),
  txHash: Schema.NullOr(Schema.String).annotations({ description: "The X stamp's txid; null while it is owed (stamping pending)" }),
  opReturn: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})

export const CommentList = Schema.Struct({
  postId: Schema.String,
  comments: Schema.Array(CommentView).annotations({ description: "Newest first" }),
  next: Schema.NullOr(Schema.String).annotations({ description: "The `before` cursor of the next (older) page; null on the last page" })
})

export const CommentListParams = Schema.Struct({
  limit: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))),
  before: Schema.optional(Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)))
})

export const OEmbed = Schema.Struct({
  type: Schema.Literal("rich"),
  version: Schema.Literal("1.0"),
  provider_name: Schema.String,
  provider_url: Schema.String,
  title: Schema.String,
  author_name: Schema.String,
  html: Schema.String,
  width: Schema.Int,
  height: Schema.Int
})

export const VerifyRequest = Schema.Struct({
  address: Schema.String.pipe(Schema.maxLength(128)),
  signature: Schema.String.pipe(Schema.maxLength(256)),
  message: Schema.String.pipe(Schema.maxLength(64 * 1024))
})

export const TimelineEntry = Schema.Struct({
  txid: Schema.String,
  tag: Schema.String,
  cid: Schema.String,
  suffix: Schema.String,
  assetId: Schema.String,
  seq: Schema.Int,
  address: Schema.String,
  derivationPath: Schema.String,
  blockHeight: Schema.Int,
  confirmations: Schema.Int
})
export const Timeline = Schema.Struct({
  address: Schema.String,
  xpub: Schema.String,
  addressesScanned: Schema.Int,
  events: Schema.Array(TimelineEntry)
})

const Html = HttpApiSchema.Text({ contentType: "text/html" })
const Bytes = HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" })
const postIdParam = Schema.Struct({ id: Id })

export const ComposerGroup = HttpApiGroup.make("composer")
  .add(HttpApiEndpoint.post("upload", "/api/social/upload").addSuccess(UploadReceipt, { status: 201 })
    .addError(ContentTooLarge).addError(UnsupportedMediaType).addError(BadRequest).addError(ServiceUnavailable)
    .annotate(Weight, 10)
    .annotate(OpenApi.Description, "The raw bytes of one media item as the body, its Content-Type (if any) as the header; streamed into the content store and answered with its CID and the type it is served as. The bytes decide that type: image/png, image/jpeg, image/gif, image/webp, video/mp4, video/webm, audio/ogg, audio/mpeg, HLS segments (video/mp2t: sync byte 0x47 every 188 bytes; video/iso.segment: an fMP4 styp or moof box) and playlists (application/vnd.apple.mpegurl: #EXTM3U) by signature, whatever was declared; bytes of no known signature keep a declared type of that list or text/plain, else application/octet-stream (served as a download). HTML, SVG, XML and script, declared or sniffed, are 415. Not charged: posting is.")
    .annotate(OpenApi.Summary, "Upload media (session, weight 10)"))
  .add(HttpApiEndpoint.post("post", "/api/social/posts").setPayload(JsonBody(NewPost)).addSuccess(PostReceipt, { status: 201 })
    .addSuccess(PostReceipt.annotations({ description: "Written and charged, stamps not on the ledger yet. stamping \"pending\": the ledger or the fee sponsor failed, the Post entity sends them on its own timer. stamping \"awaiting_signature\": an account linked by xpub only; `stamps` holds one PSBT per stamp for the member to sign and send to `signaturesUrl` before `expiresAt` (as takedown, renew and metadata answer)" }), { status: 202 })
    .addError(PaymentRequired).addError(Forbidden).addError(BadRequest).addError(NotFound).addError(IdempotencyKeyReused).addError(ServiceUnavailable)
    .annotate(Weight, 10)
    .annotate(OpenApi.Description, "Optional header Idempotency-Key (draft-ietf-httpapi-idempotency-key-header; a Structured Field String, or a bare token; scoped to the account): a retry with the same key and payload answers the same post and is never charged again; the same key with another payload is 422. Both kinds of account (service-keyed, xpub-only).")
    .annotate(OpenApi.Summary, "Publish a post: manifest pinned, own address derived, stamped, charged (session, weight 10)"))
  .add(HttpApiEndpoint.post("takedown", "/api/social/posts/:id/takedown").setPath(postIdParam).addSuccess(PostStateReply).addSuccess(UnsignedStamps, { status: 202 })
    .addError(BadRequest).addError(PaymentRequired).addError(Forbidden).addError(ContentConflict).addError(NotFound).addError(ServiceUnavailable)
    .annotate(OpenApi.Description, "Optional header Idempotency-Key, as on publish (scoped to the account): a retry of the same request with the same key is the same change, applied and charged once.")
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Author takedown: unpinned now, tag T (session, weight 5)"))
  .add(HttpApiEndpoint.post("renew", "/api/social/posts/:id/renew").setPath(postIdParam).addSuccess(PostStateReply).addSuccess(UnsignedStamps, { status: 202 })
    .addError(BadRequest).addError(PaymentRequired).addError(Forbidden).addError(ContentConflict).addError(NotFound).addError(ServiceUnavailable)
    .annotate(OpenApi.Description, "Optional header Idempotency-Key, as on publish (scoped to the account): a retry of the same request with the same key is the same change, applied and charged once.")
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Prepay another hosting period, tag R (session, weight 5)"))
  .add(HttpApiEndpoint.post("metadata", "/api/social/posts/:id/metadata").setPath(postIdParam).setPayload(JsonBody(MetadataBody)).addSuccess(PostStateReply).addSuccess(UnsignedStamps, { status: 202 })
    .addError(BadRequest).addError(PaymentRequired).addError(Forbidden).addError(ContentConflict).addError(NotFound).addError(ServiceUnavailable)
    .annotate(OpenApi.Description, "Optional header Idempotency-Key, as on publish (scoped to the account): a retry of the same request with the same key is the same change, applied and charged once.")
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Author: a new body or tags; a new manifest naming the previous one, tag M (session, weight 5)"))
  .add(HttpApiEndpoint.post("comment", "/api/social/posts/:id/comments").setPath(postIdParam).setPayload(JsonBody(CommentBody)).addSuccess(PostStateReply, { status: 201 }).addSuccess(UnsignedStamps, { status: 202 })
    .addError(BadRequest).addError(PaymentRequired).addError(Forbidden).addError(ContentConflict).addError(NotFound).addError(ServiceUnavailable)
    .annotate(OpenApi.Description, "Optional header Idempotency-Key, as on publish (scoped to the account): a retry of the same request with the same key is the same change, applied and charged once.")
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Comment on a post: the body stored by CID, charged, tag X (session, weight 5)"))
  .add(HttpApiEndpoint.post("continuityStart", "/api/social/continuity").setPayload(JsonBody(ContinuityStartBody))
    .addSuccess(ContinuityView, { status: 201 }).addError(BadRequest).addError(ContentConflict).addError(Forbidden).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Start the account's recovery countdown to a new identity address: tag CHV1G now, CHV1N when it ends (session, weight 5)"))
  .add(HttpApiEndpoint.post("continuityCancel", "/api/social/continuity/cancel").addSuccess(ContinuityView)
    .addError(ContentConflict).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Cancel a running recovery countdown: no CHV1N follows (session, weight 5)"))
  .middleware(SessionAuth)
  .annotate(OpenApi.Title, "Composer")

export const PublicContentGroup = HttpApiGroup.make("content")
  .add(HttpApiEndpoint.get("lookup", "/api/public/post/:id").setPath(postIdParam).addSuccess(PostLookup).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "A post by short or long id, with its on-chain proof (no key)"))
  .add(HttpApiEndpoint.get("comments", "/api/public/post/:id/comments").setPath(postIdParam).setUrlParams(CommentListParams)
    .addSuccess(CommentList).addError(BadRequest).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 2)
    .annotate(OpenApi.Description, "Newest first, `limit` 1 to 100 (default 50); `before` = the `next` of the previous page. Each comment with its body, its CIDs, its own derived address and its X stamp (null while owed).")
    .annotate(OpenApi.Summary, "A post's comments with their on-chain proof (no key)"))
  .add(HttpApiEndpoint.get("oembed", "/api/public/oembed").setUrlParams(Schema.Struct({
    url: Schema.String.pipe(Schema.maxLength(2048)),
    maxwidth: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(200, 1200))),
    maxheight: Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(200, 2000))),
    format: Schema.optional(Schema.String.pipe(Schema.maxLength(16)))
  })).addSuccess(OEmbed).addError(NotFound).addError(NotImplemented).addError(BadRequest).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "oEmbed 1.0 (rich) for a post URL of this service; 404 for other URLs, 501 for format=xml"))
  .add(HttpApiEndpoint.post("verify", `/api/public/${chainSlug}-verify-message`).setPayload(JsonBody(VerifyRequest))
    .addSuccess(Schema.Struct({ valid: Schema.Boolean })).addError(BadRequest)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "BIP-137 message verification for any address form; a well-formed wrong signature is 200 {valid:false}"))
  .add(HttpApiEndpoint.get("timeline", "/api/public/timeline/:address").setPath(Schema.Struct({ address: Id }))
    .setUrlParams(Schema.Struct({ xpub: Schema.optional(Schema.String.pipe(Schema.maxLength(120))) }))
    .addSuccess(Timeline).addError(NotFound).addError(BadRequest).addError(ServiceUnavailable)
    .annotate(Weight, 20)
    .annotate(OpenApi.Summary, "An author's lifecycle stamps rebuilt from the chain alone (their derived addresses' OP_RETURNs), weight 20"))
  .add(HttpApiEndpoint.get("stream", "/api/stream/:cid").setPath(Schema.Struct({ cid: Cid })).addSuccess(Bytes)
    .addError(BadRequest).addError(NotFound).addError(ContentGone).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "RFC 9110 ranges: single, suffix, open-ended and multiple (multipart/byteranges); 206, 416 with Content-Range: bytes */size; ETag is the quoted CID; If-Range; Accept-Ranges: bytes. 400 for a malformed CID, 404 unknown, 410 unpinned.")
    .annotate(OpenApi.Summary, "Media bytes by CID, with HTTP Range"))
  .add(HttpApiEndpoint.head("streamHead", "/api/stream/:cid").setPath(Schema.Struct({ cid: Cid })).addSuccess(Bytes)
    .addError(BadRequest).addError(NotFound).addError(ContentGone).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Headers of /api/stream/{cid} without the body"))
  .middleware(OpenCors)
  .annotate(OpenApi.Title, "Content")

export const PagesGroup = HttpApiGroup.make("pages")
  .add(HttpApiEndpoint.get("page", "/p/:id").setPath(postIdParam).addSuccess(Html).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Post page: canonical, Open Graph, Twitter card, SocialMediaPosting JSON-LD, oEmbed discovery"))
  .add(HttpApiEndpoint.get("embedPost", "/embed/p/:id").setPath(postIdParam).setUrlParams(Schema.Struct({ theme: Schema.optional(Schema.String.pipe(Schema.maxLength(16))) }))
    .addSuccess(Html).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Iframe post card (dark; theme=light), frameable anywhere"))
  .add(HttpApiEndpoint.get("embedMedia", "/embed/:cid").setPath(Schema.Struct({ cid: Cid }))
    .setUrlParams(Schema.Struct({ autoplay: Schema.optional(Schema.String.pipe(Schema.maxLength(8))), muted: Schema.optional(Schema.String.pipe(Schema.maxLength(8))), t: Schema.optional(Schema.String.pipe(Schema.maxLength(16))) }))
    .addSuccess(Html).addError(NotFound).addError(ServiceUnavailable).addError(BadRequest)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Video player for a CID (autoplay=1, muted=1, t=<start seconds>)"))
  .add(HttpApiEndpoint.get("embedLive", "/embed/live/:streamId").setPath(Schema.Struct({ streamId: Id })).addSuccess(Html).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Live channel player"))
  .add(HttpApiEndpoint.get("embedLiveByWallet", "/embed/live/by-wallet/:wallet").setPath(Schema.Struct({ wallet: Id })).addSuccess(Html).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1).annotate(OpenApi.Summary, "Live channel player by wallet"))
  .add(HttpApiEndpoint.get("livePlaylist", "/live/:streamId/index.m3u8").setPath(Schema.Struct({ streamId: Id })).addSuccess(Bytes).addError(NotFound).addError(ServiceUnavailable)
    .annotate(Weight, 1)
    .annotate(OpenApi.Description, "The channel's current HLS playlist (application/vnd.apple.mpegurl, Cache-Control: no-cache); its segments are /api/stream/{cid} URIs. 404 while the channel has no stream.")
    .annotate(OpenApi.Summary, "Live channel's current HLS playlist"))
  .annotate(OpenApi.Title, "Pages and embeds")
