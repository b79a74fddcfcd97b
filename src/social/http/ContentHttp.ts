// Handlers of the social content routes (schemas/social/content.ts): the composer (session),
// the public reads, media streaming with ranges, pages and embeds. Thin: the work is in
// Composer/PostEntity, ContentStore, ranges.ts, pages/html.ts and Timeline.ts.
import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { randomUUID } from "node:crypto"
import { Chunk, Effect, Either, Option, Schema, Stream } from "effect"
import { answeredAs, orElseUnavailable } from "./refusals.ts"
import { makeReplyWaits, type ReplyWaits } from "../../platform/entity/replyWaits.ts"
import { SocialApi } from "../../../schemas/social/api.ts"
import { BadRequest, ContentConflict, ContentGone, ContentTooLarge, Forbidden, IdempotencyKeyReused, idempotencyKeyReused, NotFound, NotImplemented, PaymentRequired, unavailable, UnsupportedMediaType } from "../../../schemas/social/errors.ts"
import { Change, ChangeUnsigned, CommentUnsigned, Post, type PostReceipt, PostRefused, Publish, PublishUnsigned, type UnsignedStamps } from "../../../schemas/social/post.ts"
import { CancelCountdown, Continuity, StartCountdown } from "../../../schemas/social/continuity.ts"
import { Session } from "../../../schemas/social/security.ts"
import { parseRawCid } from "../../crypto/cid.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { verifyMessage } from "../../chain/message.ts"
import { AppConfig } from "../../platform/Config.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { findAccount } from "../accounts/Accounts.ts"
import { accountOfIdentity, identityOf } from "../accounts/Succession.ts"
import { changeRequestId, keyedPost, parseIdempotencyKey, publishFingerprint } from "../posts/idempotency.ts"
import { currentReceipt, isPending } from "../posts/StampCompletion.ts"
import { memberSigns } from "../accounts/signing.ts"
import { SHORT_ID } from "../accounts/socialKeys.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { putMedia } from "../content/putMedia.ts"
import { contentRange, ifRangeHolds, parseRange } from "../content/ranges.ts"
import { servedState } from "../content/served.ts"
import { embedUrl, explorerTxUrl, liveOffline, livePlayer, mediaPlayer, oembedOf, oembedUrl, type PagePost, pageUrl, postEmbed, postPage } from "../pages/html.ts"
import { currentStream, type LiveChannel, liveChannelById, liveChannelByWallet, livePlaylistBytesMax } from "../pages/liveChannels.ts"
import { hlsPlaylist } from "../content/mediaTypes.ts"
import { publicPageCsp } from "../../platform/webapp/publicPages.ts"
import { findPost, type PostRow, postColumns, receiptOf, stampsOf } from "../posts/Composer.ts"
import { isServed } from "../posts/hosting.ts"
import { rebuildTimeline } from "../posts/Timeline.ts"
import { commentsOf } from "../posts/commentList.ts"
import { lookupCache } from "./LookupCache.ts"
import { streamHeaders } from "./fastStream.ts"
import { type NewPost, PostLookup } from "../../../schemas/social/content.ts"

export const uploadRoute = "/api/social/upload"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const HOST = /^[A-Za-z0-9.-]{1,253}(:\d{1,5})?$/

const notFound = (message: string) => new NotFound({ error: { code: "not_found", message } })
const badRequest = (message: string) => new BadRequest({ error: { code: "invalid_parameter", message } })

/** This service's own base URL as the client reached it (links, oEmbed). A Host that is not a host name is not echoed. */
const baseOf = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean) => {
  const host = request.headers.host !== undefined && HOST.test(request.headers.host) ? request.headers.host : "localhost"
  const https = trustProxy && request.headers["x-forwarded-proto"] === "https"
  return `${https ? "https" : "http"}://${host}`
}

/** A post by long id (uuid) or short id; none for anything else. */
const postByAnyId = (id: string) =>
  Effect.gen(function*() {
    if (UUID.test(id)) return yield* findPost(id)
    if (!SHORT_ID.test(id)) return Option.none<PostRow>()
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql.unsafe<PostRow>(`SELECT ${postColumns} FROM social_posts WHERE short_id = $1`, [id])
    return Option.fromNullable(rows[0])
  })

/** Everything a page, an embed and a lookup show of a post. */
const pagePostOf = (post: PostRow) =>
  Effect.gen(function*() {
    const store = yield* ContentStore
    const account = Option.getOrThrow(yield* findAccount(post.author))
    const stamps = yield* stampsOf(post.id)
    const proof = stamps.find((s) => s.tag === "CHV1P")
    const identity = yield* identityOf(post.author)
    const media: Array<{ cid: string; mediaType: string }> = []
    for (const cid of post.media_cids) {
      const stat = yield* store.stat(cid)
      media.push({ cid, mediaType: Option.match(stat, { onNone: () => "application/octet-stream", onSome: (s) => s.mediaType }) })
    }
    const explorer = (yield* SocialConfig).socialExplorerTxUrl
    const txHash = proof?.txid ?? null
    const page: PagePost = {
      id: post.id, shortId: post.short_id, kind: post.kind, body: post.body, tags: post.tags, media,
      authorWallet: identity.wallet, authorHandle: account.handle, assetId: account.asset_id, createdAt: new Date(post.created_at).toISOString(),
      state: post.state,
      proof: {
        txHash, opReturn: proof?.op_return ?? null, metadataCid: post.metadata_cid, ownerAddress: post.address, derivationPath: post.derivation_path,
        explorerTxUrl: txHash === null ? null : Option.getOrNull(Option.map(explorer, (template) => explorerTxUrl(template, txHash)))
      }
    }
    return { page, proof, account, identity, stamps }
  })

const foundPost = (id: string) =>
  Effect.flatMap(postByAnyId(id), Option.match({ onNone: () => Effect.fail(notFound(`No post ${id.slice(0, 64)}.`)), onSome: Effect.succeed }))

type InfraTag = "SqlError" | "ContentStoreError" | "ContentCorrupt" | "ContentTooLarge"
const infraTags: ReadonlySet<string> = new Set<InfraTag>(["SqlError", "ContentStoreError", "ContentCorrupt", "ContentTooLarge"])
/** Database and store failures as 503 unavailable; the API's own errors pass through. */
const orUnavailable = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.catchIf(
    self,
    (e): e is Extract<E, { readonly _tag: InfraTag }> => typeof e === "object" && e !== null && infraTags.has((e as { _tag?: string })._tag ?? ""),
    () => Effect.fail(unavailable())
  )

/** A public page: no script, styles and media from this origin; `frameable` for embeds (framed anywhere). */
const htmlResponse = (body: string, frameable = true) =>
  HttpServerResponse.text(body, {
    contentType: "text/html; charset=utf-8",
    headers: { "x-content-type-options": "nosniff", "content-security-policy": publicPageCsp(frameable), "referrer-policy": "strict-origin-when-cross-origin" }
  })

/** A member-signed publish (its stamps waiting for the member) as the publish receipt (202). */
const awaitingReceipt = (view: UnsignedStamps, mediaCids: ReadonlyArray<string>): PostReceipt => ({
  postId: view.postId, shortId: view.shortId, metadataCid: view.metadataCid, mediaCids, txHash: null, opReturn: null,
  stamping: view.state === "awaiting_signature" ? "awaiting_signature" : "done",
  state: view.state, action: "publish", requestId: view.requestId, expiresAt: view.expiresAt, signaturesUrl: view.signaturesUrl, stamps: view.stamps
})

type PostClient = Effect.Effect.Success<typeof Post.client>
type ChangeFields = { body?: string; tags?: ReadonlyArray<string> }

/** The errors a change or a publish documents; anything else from the entity is 503. */
const changeAnswered = answeredAs(PaymentRequired, Forbidden, ContentConflict, NotFound, BadRequest)

/** The account the session's address is the identity of now (none for a retired or unknown address). */
const member = Effect.flatMap(Session, (session) => orElseUnavailable(accountOfIdentity(session.address)))
const noAccount = () => notFound("The session's address has no social account.")

/** A post by any id, 404 when there is none; a database failure is 503. */
const anyPost = (id: string) => Effect.catchAll(foundPost(id), (e) => Effect.fail(e instanceof NotFound ? e : unavailable()))

/** The post, when the session's account wrote it (403 otherwise). */
const ownPost = (id: string) =>
  Effect.gen(function*() {
    const me = yield* member
    const post = yield* anyPost(id)
    if (Option.isNone(me) || post.author !== me.value) return yield* Effect.fail(new Forbidden({ error: { code: "not_author", message: "Only the author may do this." } }))
    return post
  })

/** Whether the account signs its own stamps (linked by xpub only): its changes come back unsigned (202). */
const signsOwnStamps = (address: string) => Effect.map(orElseUnavailable(findAccount(address)), (a) => memberSigns(Option.getOrThrow(a)))

/**
 * The change's request id: with an Idempotency-Key (as on publish), the same for every retry of
 * the same request by the same account (docs/social.md, "Retrying a change"); else a fresh one.
 */
const requestIdOf = (account: string, postId: string, action: string, fields: ChangeFields) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const key = parseIdempotencyKey(request.headers["idempotency-key"])
    if (Either.isLeft(key)) return yield* Effect.fail(badRequest(`Idempotency-Key: ${key.left}`))
    return key.right === undefined ? randomUUID() : changeRequestId({ account, postId, action }, key.right, { body: fields.body ?? null, tags: [...(fields.tags ?? [])] })
  })

/** A takedown, renewal, metadata change (the author's) or comment (any member's), sent to the post's entity. */
const change = (posts: PostClient, waits: ReplyWaits, id: string, action: "takedown" | "renew" | "metadata" | "comment", fields: ChangeFields = {}) =>
  Effect.gen(function*() {
    const me = yield* member
    const post = action === "comment" ? yield* anyPost(id) : yield* ownPost(id)
    if (action === "comment" && Option.isNone(me)) return yield* Effect.fail(noAccount())
    const requestId = yield* requestIdOf(Option.getOrElse(me, () => post.author), post.id, action, fields)
    // An xpub-only commenter: the comment's X comes back unsigned for their wallet (202).
    if (action === "comment" && (yield* signsOwnStamps(Option.getOrThrow(me)))) {
      return yield* waits(`CommentUnsigned/${post.id}/${requestId}`,
        posts(post.id).CommentUnsigned(new CommentUnsigned({ postId: post.id, author: Option.getOrThrow(me), body: fields.body ?? "", requestId }))).pipe(changeAnswered)
    }
    // An account linked by xpub only: the stamp comes back unsigned for the member (202).
    if (action !== "comment" && (yield* signsOwnStamps(post.author))) {
      return yield* waits(`ChangeUnsigned/${post.id}/${requestId}`, posts(post.id).ChangeUnsigned(new ChangeUnsigned({ postId: post.id, action, requestId, ...fields }))).pipe(changeAnswered)
    }
    // Waited once per node and to its reply, whoever leaves (replyWaits.ts): a retry with the same key is the same Change.
    return yield* waits(`Change/${post.id}/${requestId}`, posts(post.id).Change(new Change({
      postId: post.id, action, requestId, ...fields, ...(action === "comment" ? { author: Option.getOrThrow(me) } : {})
    }))).pipe(changeAnswered)
  })

/** An upload stored by its bytes' CID; the bytes decide the type (mediaTypes.ts), active content (HTML, SVG, XML, script) is refused. */
const upload = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const stored = yield* putMedia(request.stream, request.headers["content-type"]).pipe(
      Effect.catchTag("MediaRefused", (e) => Effect.fail(new UnsupportedMediaType({ error: { code: "unsupported_media_type", message: `${e.message}.` } }))),
      Effect.catchTag("ContentTooLarge", (e) => Effect.fail(new ContentTooLarge({ error: { code: "content_too_large", message: `An item may be at most ${e.limit} bytes.` } }))),
      Effect.catchTag("RequestError", () => Effect.fail(new BadRequest({ error: { code: "invalid_request", message: "The upload did not arrive whole." } }))),
      Effect.catchTag("ContentStoreError", () => Effect.fail(unavailable()))
    )
    return { cid: stored.cid, size: stored.size, mediaType: stored.mediaType }
  })

/** The publish's media, each a raw CID (normalised); the first that is not one is refused. */
const mediaCidsOf = (cids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const media: Array<string> = []
    for (const cid of cids) {
      const parsed = parseRawCid(cid)
      if (Either.isLeft(parsed)) return yield* Effect.fail(badRequest(`media: ${parsed.left.message}`))
      media.push(parsed.right.cid)
    }
    return media
  })

/**
 * The post id a publish writes: a fresh one, or with an Idempotency-Key the one the key names (a
 * read: the Post entity claims the key when it runs the publish, idempotency.ts). A replay whose
 * post is written (not waiting for signatures) comes with that post's receipt as it stands now:
 * never a second publish, never a second charge. A member-signed post still waiting is answered
 * by PublishUnsigned (its PSBTs).
 */
const keyedPostId = (author: string, key: string | undefined, wanted: Parameters<typeof publishFingerprint>[0]) =>
  Effect.gen(function*() {
    const fresh = randomUUID()
    if (key === undefined) return { postId: fresh, replay: Option.none<PostReceipt>() }
    const named = yield* orElseUnavailable(keyedPost(author, key))
    if (Option.isNone(named)) return { postId: fresh, replay: Option.none<PostReceipt>() }
    if (named.value.fingerprint !== publishFingerprint(wanted)) return yield* Effect.fail(idempotencyKeyReused())
    const existing = yield* orElseUnavailable(findPost(named.value.postId))
    if (Option.isSome(existing) && existing.value.state !== "awaiting_signature") {
      return { postId: named.value.postId, replay: Option.some(yield* orElseUnavailable(currentReceipt(existing.value))) }
    }
    return { postId: named.value.postId, replay: Option.none<PostReceipt>() }
  })

/** The entity's refusal of a key that names another post: the request goes there (once). */
const claimedElsewhere = (e: unknown): e is PostRefused => e instanceof PostRefused && e.code === "idempotency_key_claimed"

/** A new post: 201 when stamped, 202 while its stamps are pending or wait for the member's signatures. */
const publish = (posts: PostClient, waits: ReplyWaits, request: HttpServerRequest.HttpServerRequest, payload: typeof NewPost.Type) =>
  Effect.gen(function*() {
    const idempotencyKey = parseIdempotencyKey(request.headers["idempotency-key"])
    if (Either.isLeft(idempotencyKey)) return yield* Effect.fail(badRequest(`Idempotency-Key: ${idempotencyKey.left}`))
    const me = yield* member
    if (Option.isNone(me)) return yield* Effect.fail(noAccount())
    const author = me.value
    const media = yield* mediaCidsOf(payload.media ?? [])
    const wanted = { kind: payload.kind ?? "story", body: payload.body, tags: [...(payload.tags ?? [])], mediaCids: media }
    // A pending receipt (written and charged, stamps on the entity's timer) is 202 Accepted.
    const answer = (r: PostReceipt) => HttpServerResponse.unsafeJson(r, { status: r.stamping === "done" ? 201 : 202 })
    const key = idempotencyKey.right
    const signs = yield* Effect.map(orElseUnavailable(findAccount(author)), (a) => Option.isSome(a) && memberSigns(a.value))
    const message = { author, ...wanted, ...(key === undefined ? {} : { idempotencyKey: key }) }
    const send = (postId: string) =>
      // An account linked by xpub only: the stamps come back unsigned for the member (202). A
      // replayed key reaches the same PublishUnsigned, which answers the post as it stands.
      signs
        ? Effect.map(waits(`PublishUnsigned/${postId}`, posts(postId).PublishUnsigned(new PublishUnsigned({ postId, ...message }))), (view) => awaitingReceipt(view, media))
        : waits(`Publish/${postId}`, posts(postId).Publish(new Publish({ postId, ...message })))
    const attempt = Effect.gen(function*() {
      const { postId, replay } = yield* keyedPostId(author, key, wanted)
      return Option.isSome(replay) ? replay.value : yield* send(postId)
    })
    // Two first requests with one key raced (each a fresh id): the loser's goes to the post the key names.
    const receipt = yield* attempt.pipe(
      Effect.catchIf(claimedElsewhere, () => attempt),
      answeredAs(PaymentRequired, Forbidden, NotFound, BadRequest, IdempotencyKeyReused)
    )
    return answer(receipt)
  })

const ComposerHandlers = HttpApiBuilder.group(SocialApi, "composer", (handlers) =>
  Effect.gen(function*() {
    const store = yield* ContentStore
    const posts = yield* Post.client
    const waits = yield* makeReplyWaits
    const continuity = yield* Continuity.client
    return handlers
      .handleRaw("upload", ({ request }) => Effect.provideService(upload(request), ContentStore, store))
      .handle("post", ({ payload, request }) => publish(posts, waits, request, payload))
      .handle("takedown", ({ path }) => change(posts, waits, path.id, "takedown"))
      .handle("renew", ({ path }) => change(posts, waits, path.id, "renew"))
      .handle("metadata", ({ path, payload }) => change(posts, waits, path.id, "metadata", payload))
      .handle("comment", ({ path, payload }) => change(posts, waits, path.id, "comment", payload).pipe(
        // 201 with the X's txid; 202 with its PSBT for an xpub-only commenter.
        Effect.map((r) => HttpServerResponse.unsafeJson(r, { status: "txid" in r ? 201 : 202 }))))
      .handle("continuityStart", ({ payload }) =>
        Effect.flatMap(member, (me) =>
          Option.isNone(me) ? Effect.fail(noAccount()) : continuity(me.value).Start(new StartCountdown({ account: me.value, newAddress: payload.newAddress, requestId: randomUUID() })).pipe(
            answeredAs(BadRequest, ContentConflict, Forbidden, NotFound)
          )))
      .handle("continuityCancel", () =>
        Effect.flatMap(member, (me) =>
          Option.isNone(me) ? Effect.fail(noAccount()) : continuity(me.value).Cancel(new CancelCountdown({ account: me.value, requestId: randomUUID() })).pipe(
            answeredAs(ContentConflict, NotFound)
          )))
  }))

const boundaryOf = (cid: string) => `shardline-${cid.slice(-16)}`

/** /api/stream/{cid}: RFC 9110 ranges over the verified store (docs/social.md, "Streaming"). */
const streamResponse = (cidText: string, head: boolean) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const store = yield* ContentStore
    const parsed = parseRawCid(cidText)
    if (Either.isLeft(parsed)) return yield* Effect.fail(badRequest(`cid: ${parsed.left.message}`))
    const cid = parsed.right.cid
    const stat = yield* store.stat(cid)
    if (Option.isNone(stat)) return yield* Effect.fail(notFound(`No content ${cid}.`))
    const served = yield* servedState(cid)
    if (served === "blocked") return yield* Effect.fail(new ContentGone({ error: { code: "content_blocked", message: "A moderator pulled this content; it is not served under any post." } }))
    if (served === "unpinned") return yield* Effect.fail(new ContentGone({ error: { code: "unpinned", message: "This content was unpinned from the gateway; its CID and chain record remain." } }))
    const { size, mediaType } = stat.value
    const etag = `"${cid}"`
    const common = streamHeaders(cid, mediaType)
    const inm = request.headers["if-none-match"]
    if (inm !== undefined && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
      return HttpServerResponse.empty({ status: 304, headers: common })
    }
    const range = ifRangeHolds(request.headers["if-range"], etag) ? parseRange(request.headers.range, size) : { _tag: "Whole" as const }
    const body = (s: Stream.Stream<Uint8Array, unknown>) => (head ? Stream.empty : s)
    if (range._tag === "Unsatisfiable") {
      return HttpServerResponse.text("", { status: 416, headers: { ...common, "content-range": `bytes */${size}` } })
    }
    if (range._tag === "Whole") {
      return HttpServerResponse.stream(body(store.read(cid)), { status: 200, contentType: mediaType, contentLength: size, headers: common })
    }
    if (range.ranges.length === 1) {
      const r = range.ranges[0]!
      return HttpServerResponse.stream(body(store.read(cid, r)), {
        status: 206, contentType: mediaType, contentLength: r.end - r.start + 1, headers: { ...common, "content-range": contentRange(r, size) }
      })
    }
    // Several ranges: multipart/byteranges (RFC 9110 §14.6), each part with its own headers.
    const boundary = boundaryOf(cid)
    const heads = range.ranges.map((r, i) => Buffer.from(`${i === 0 ? "" : "\r\n"}--${boundary}\r\nContent-Type: ${mediaType}\r\nContent-Range: ${contentRange(r, size)}\r\n\r\n`))
    const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
    const length = heads.reduce((n, h) => n + h.length, 0) + range.ranges.reduce((n, r) => n + r.end - r.start + 1, 0) + tail.length
    const parts = Stream.concatAll(Chunk.fromIterable([
      ...range.ranges.flatMap((r, i) => [Stream.succeed(new Uint8Array(heads[i]!)), store.read(cid, r)]),
      Stream.succeed(new Uint8Array(tail))
    ]))
    return HttpServerResponse.stream(body(parts), {
      status: 206, contentType: `multipart/byteranges; boundary=${boundary}`, contentLength: length, headers: common
    })
  }).pipe(orUnavailable)

const ContentHandlers = HttpApiBuilder.group(SocialApi, "content", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const ledger = yield* UtxoLedger
    const lookups = lookupCache
    const encodeLookup = Schema.encode(PostLookup)
    return handlers
      .handle("lookup", ({ path }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const base = baseOf(request, config.trustProxy)
          const post = yield* foundPost(path.id)
          const { page, proof, account, identity, stamps } = yield* pagePostOf(post)
          // A member-signed post never signed (waiting, or lapsed) has no stamp and is not served.
          if (proof === undefined && (post.state === "awaiting_signature" || post.state === "unsigned")) {
            return yield* Effect.fail(notFound(`Post ${path.id.slice(0, 64)} is not signed by its author yet.`))
          }
          // A post written and charged whose stamps are not all out yet is shown, with stamping "pending" (docs/social.md).
          const stamping = receiptOf(post, stamps).stamping === "pending" || (yield* isPending(post.id)) ? "pending" as const : "done" as const
          const answer = yield* encodeLookup({
            post: { shortId: post.short_id, id: post.id, kind: post.kind, body: post.body, tags: [...post.tags], media: [...post.media_cids], state: post.state, createdAt: page.createdAt },
            author: { wallet: identity.wallet, handle: account.handle, assetId: account.asset_id, previousAddresses: [...identity.previousAddresses] },
            proof: {
              metadataCid: post.metadata_cid, ownerAddress: post.address, derivationPath: post.derivation_path,
              txHash: proof?.txid ?? null, opReturn: proof?.op_return ?? null, stamping
            },
            links: { page: pageUrl(base, post.short_id), embed: embedUrl(base, post.short_id), oembed: oembedUrl(base, post.short_id) }
          }).pipe(Effect.orDie)
          // The same bytes the edge will answer from the cache for the next lookupCacheMs.
          const body = JSON.stringify(answer)
          lookups.put(path.id, request.headers.host, body)
          return HttpServerResponse.text(body, { contentType: "application/json" })
        }).pipe(orUnavailable))
      .handle("comments", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const post = yield* foundPost(path.id)
          if (post.state === "awaiting_signature" || post.state === "unsigned") return yield* Effect.fail(notFound(`Post ${path.id.slice(0, 64)} is not signed by its author yet.`))
          return yield* commentsOf(post.id, urlParams.limit, urlParams.before)
        }).pipe(orUnavailable))
      .handle("oembed", ({ urlParams }) =>
        Effect.gen(function*() {
          if (urlParams.format !== undefined && urlParams.format !== "json") {
            if (urlParams.format === "xml") return yield* Effect.fail(new NotImplemented({ error: { code: "not_implemented", message: "Only format=json is served." } }))
            return yield* Effect.fail(badRequest("format must be json"))
          }
          const request = yield* HttpServerRequest.HttpServerRequest
          const base = baseOf(request, config.trustProxy)
          const foreign = notFound("Not a post URL of this service.")
          if (!URL.canParse(urlParams.url)) return yield* Effect.fail(foreign)
          const url = new URL(urlParams.url)
          const m = /^\/p\/([^/]+)$/.exec(url.pathname)
          if (url.host !== new URL(base).host || m === null || !["http:", "https:"].includes(url.protocol)) return yield* Effect.fail(foreign)
          const post = yield* foundPost(decodeURIComponent(m[1]!))
          const { page } = yield* pagePostOf(post)
          return oembedOf(base, page, urlParams.maxwidth, urlParams.maxheight)
        }).pipe(orUnavailable))
      .handle("verify", ({ payload }) =>
        Effect.gen(function*() {
          const sig = Buffer.from(payload.signature, "base64")
          if (!/^[A-Za-z0-9+/]+={0,2}$/.test(payload.signature) || sig.length !== 65) return yield* Effect.fail(badRequest("signature must be base64 of 65 bytes"))
          if (!/^[A-Za-z0-9]{20,90}$/.test(payload.address)) return yield* Effect.fail(badRequest("address is not a chain address"))
          return { valid: verifyMessage({ address: payload.address, message: payload.message, signature: payload.signature }, ledger.params).valid }
        }))
      .handle("timeline", ({ path, urlParams }) =>
        Effect.gen(function*() {
          // An account's first address, or its identity since a succession: the chain walked is the
          // account's own (its first address holds its CHV1G/CHV1N).
          const direct = yield* findAccount(path.address)
          const account = Option.isSome(direct) ? direct
            : yield* Effect.flatMap(accountOfIdentity(path.address), Option.match({ onNone: () => Effect.succeed(Option.none()), onSome: findAccount }))
          const xpub = urlParams.xpub ?? Option.getOrUndefined(account)?.xpub ?? undefined
          if (xpub === undefined) return yield* Effect.fail(notFound("No xpub for this address: link a wallet or pass ?xpub=."))
          const walked = Option.match(account, { onNone: () => path.address, onSome: (a) => a.address })
          const built = yield* rebuildTimeline(ledger, walked, xpub).pipe(
            Effect.catchAll((e) => Effect.fail("_tag" in e && e._tag === "BadXpub" ? badRequest(`xpub: ${e.message}`) : unavailable()))
          )
          return { address: path.address, xpub, addressesScanned: built.addressesScanned, events: built.events }
        }).pipe(orUnavailable))
      .handle("stream", ({ path }) => streamResponse(path.cid, false))
      .handle("streamHead", ({ path }) => streamResponse(path.cid, true))
  }))

/**
 * /live/{id}/index.m3u8: the channel's current HLS playlist, read from the store (verified) and
 * never cached, so a player polling it sees each new playlist the ingest sets; its segments are
 * /api/stream/{cid} URIs. 404 while the channel is offline.
 */
const livePlaylistResponse = (streamId: string) =>
  Effect.gen(function*() {
    const store = yield* ContentStore
    const found = yield* liveChannelById(streamId)
    const cid = Option.isNone(found) ? Option.none<string>() : yield* currentStream(found.value)
    const bytes = Option.isNone(cid) ? Option.none<Uint8Array>() : yield* store.readAll(cid.value, livePlaylistBytesMax)
    if (Option.isNone(bytes)) return yield* Effect.fail(notFound(`Live channel ${streamId.slice(0, 64)} is offline.`))
    return HttpServerResponse.uint8Array(bytes.value, {
      contentType: hlsPlaylist,
      headers: { "cache-control": "no-cache", "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'; sandbox" }
    })
  })

const PagesHandlers = HttpApiBuilder.group(SocialApi, "pages", (handlers) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ContentStore
    const base = Effect.map(HttpServerRequest.HttpServerRequest, (r) => baseOf(r, config.trustProxy))
    // An embed always answers a frameable page: "offline" when no channel has this id or wallet,
    // or while the channel has no stream; the player only once its playlist route answers.
    const channel = (what: string) => (found: Option.Option<LiveChannel>) =>
      Effect.gen(function*() {
        if (Option.isNone(found)) return htmlResponse(liveOffline(what))
        const c = found.value
        if (Option.isNone(yield* currentStream(c))) return htmlResponse(liveOffline(c.title))
        return htmlResponse(livePlayer(yield* base, { streamId: c.stream_id, title: c.title, wallet: c.wallet }))
      })
    return handlers
      .handle("page", ({ path }) => Effect.gen(function*() {
        const { page } = yield* pagePostOf(yield* foundPost(path.id))
        return htmlResponse(postPage(yield* base, page), false)
      }).pipe(orUnavailable))
      .handle("embedPost", ({ path, urlParams }) => Effect.gen(function*() {
        const { page } = yield* pagePostOf(yield* foundPost(path.id))
        return htmlResponse(postEmbed(yield* base, page, urlParams.theme === "light" ? "light" : "dark"))
      }).pipe(orUnavailable))
      .handle("embedMedia", ({ path, urlParams }) => Effect.gen(function*() {
        const parsed = parseRawCid(path.cid)
        if (Either.isLeft(parsed)) return yield* Effect.fail(badRequest(`cid: ${parsed.left.message}`))
        const stat = yield* store.stat(parsed.right.cid)
        if (Option.isNone(stat)) return yield* Effect.fail(notFound(`No content ${parsed.right.cid}.`))
        const t = urlParams.t === undefined ? undefined : Number(urlParams.t)
        return htmlResponse(mediaPlayer(yield* base, parsed.right.cid, stat.value.mediaType, {
          autoplay: urlParams.autoplay === "1", muted: urlParams.muted === "1", startSeconds: t !== undefined && Number.isFinite(t) && t >= 0 ? Math.floor(t) : undefined
        }))
      }).pipe(orUnavailable))
      .handle("embedLive", ({ path }) => liveChannelById(path.streamId).pipe(Effect.flatMap(channel(`Live channel ${path.streamId}`)), orUnavailable))
      .handle("embedLiveByWallet", ({ path }) => liveChannelByWallet(path.wallet).pipe(Effect.flatMap(channel(`The live channel of ${path.wallet}`)), orUnavailable))
      .handle("livePlaylist", ({ path }) => livePlaylistResponse(path.streamId).pipe(orUnavailable))
  }))

export const contentHandlers = [ComposerHandlers, ContentHandlers, PagesHandlers] as const
export { isServed }
