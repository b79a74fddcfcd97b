// Handlers of the member-signed stamp routes (schemas/social/memberSigned.ts): the author reads
// the PSBTs waiting for their wallet, and sends them back signed to the Post entity, which checks,
// records and broadcasts them (src/social/posts/memberSigned.ts).
import { HttpApiBuilder } from "@effect/platform"
import { randomUUID } from "node:crypto"
import { Effect, Option } from "effect"
import { SocialApi } from "../../../schemas/social/api.ts"
import { BadRequest, ContentConflict, Forbidden, NotFound, unavailable } from "../../../schemas/social/errors.ts"
import type { SignaturesBody } from "../../../schemas/social/memberSigned.ts"
import { Post, SubmitSignatures } from "../../../schemas/social/post.ts"
import { Session } from "../../../schemas/social/security.ts"
import { findPost, postColumns, type PostRow } from "../posts/Composer.ts"
import { awaitingSignatures, requestById, unsignedRows, viewOf } from "../posts/signatureRequests.ts"
import { SqlClient } from "@effect/sql"
import { SHORT_ID } from "../accounts/socialKeys.ts"
import { accountOfIdentity } from "../accounts/Succession.ts"
import { answeredAs, orElseUnavailable } from "./refusals.ts"
import { SecretBox } from "../../platform/SecretBox.ts"
import { POLL_INTERVAL_MS } from "../../platform/signin/challenge.ts"
import { socialUrls } from "../identity/urls.ts"
import { requestOfSigningToken, signingDeepLink, signingToken, signingUrl, STAMP_SIGNING_KEY_LABEL, STAMP_SIGNING_PATH } from "../posts/walletSigning.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const notFound = (message: string) => new NotFound({ error: { code: "not_found", message } })

/** The session's own post by long or short id; 404 unknown, 403 another author's. */
const ownPost = (id: string) =>
  Effect.gen(function*() {
    const session = yield* Session
    const sql = yield* SqlClient.SqlClient
    const found: Option.Option<PostRow> = UUID.test(id)
      ? yield* findPost(id)
      : SHORT_ID.test(id)
      ? Option.fromNullable((yield* sql.unsafe<PostRow>(`SELECT ${postColumns} FROM social_posts WHERE short_id = $1`, [id]))[0])
      : Option.none()
    if (Option.isNone(found)) return yield* Effect.fail(notFound(`No post ${id.slice(0, 64)}.`))
    // The author is the account; the session may be its identity after a succession (CHV1N).
    const me = yield* accountOfIdentity(session.address)
    if (Option.isNone(me) || found.value.author !== me.value) return yield* Effect.fail(new Forbidden({ error: { code: "not_author", message: "Only the author may do this." } }))
    return found.value
  }).pipe(Effect.catchTag("SqlError", () => Effect.fail(unavailable())))

/** The signed items of the body (decoded by HttpApi, JSON whatever its Content-Type: JsonBody). */
const signedItems = (body: typeof SignaturesBody.Type) => {
  const items = [...(body.psbts ?? []), ...(body.transactions ?? [])]
  return items.length === 0
    ? Effect.fail(new BadRequest({ error: { code: "invalid_parameter", message: "Parameter 'psbts' or 'transactions' is required." } }))
    : Effect.succeed(items)
}

/** The key signing codes are made with (src/social/posts/walletSigning.ts). */
const signingKey = Effect.map(SecretBox, (box) => box.subkey(STAMP_SIGNING_KEY_LABEL))

export const MemberSignedHandlers = HttpApiBuilder.group(SocialApi, "memberSigned", (handlers) =>
  Effect.gen(function*() {
    const posts = yield* Post.client
    const key = yield* signingKey
    const urls = yield* socialUrls
    return handlers
      .handle("walletSigning", ({ path }) =>
        Effect.gen(function*() {
          const post = yield* ownPost(path.id)
          const waiting = yield* orElseUnavailable(awaitingSignatures(post))
          if (Option.isNone(waiting) || waiting.value.action === "comment") return yield* Effect.fail(notFound("Nothing of this post waits for signatures."))
          const url = signingUrl(urls.base, signingToken(key, waiting.value.requestId))
          return { requestId: waiting.value.requestId, action: waiting.value.action, url, deepLink: signingDeepLink(url), expiresAt: waiting.value.expiresAt, pollIntervalMs: POLL_INTERVAL_MS }
        }))
      .handle("unsigned", ({ path }) =>
        Effect.gen(function*() {
          const post = yield* ownPost(path.id)
          const waiting = yield* orElseUnavailable(awaitingSignatures(post))
          if (Option.isNone(waiting)) return yield* Effect.fail(notFound("Nothing of this post waits for signatures."))
          return waiting.value
        }))
      .handle("signatures", ({ path, payload }) =>
        Effect.gen(function*() {
          const items = yield* signedItems(payload)
          const post = yield* ownPost(path.id)
          return yield* posts(post.id).SubmitSignatures(new SubmitSignatures({ postId: post.id, items, submissionId: randomUUID() })).pipe(
            answeredAs(BadRequest, Forbidden, NotFound, ContentConflict)
          )
        }))
      .handle("commentUnsigned", ({ path }) =>
        Effect.gen(function*() {
          const session = yield* Session
          if (!UUID.test(path.id) || !UUID.test(path.commentId)) return yield* Effect.fail(notFound("No such comment."))
          const request = yield* requestById(path.commentId)
          if (Option.isNone(request) || request.value.post_id !== path.id || request.value.action !== "comment") {
            return yield* Effect.fail(notFound("No member-signed comment with this id on this post."))
          }
          const me = yield* accountOfIdentity(session.address)
          if (Option.isNone(me) || me.value !== request.value.account) return yield* Effect.fail(new Forbidden({ error: { code: "not_author", message: "Only the commenter may do this." } }))
          const post = yield* findPost(path.id)
          if (request.value.state !== "awaiting" || Option.isNone(post)) return yield* Effect.fail(notFound("This comment no longer waits for a signature."))
          return viewOf(post.value, request.value, yield* unsignedRows(path.commentId))
        }).pipe(Effect.catchTag("SqlError", () => Effect.fail(unavailable()))))
      .handle("commentSignatures", ({ path, payload }) =>
        Effect.gen(function*() {
          const items = yield* signedItems(payload)
          const session = yield* Session
          const sql = yield* SqlClient.SqlClient
          if (!UUID.test(path.id) || !UUID.test(path.commentId)) return yield* Effect.fail(notFound("No such comment."))
          const [request] = yield* sql<{ account: string | null }>`SELECT account FROM social_signature_requests
            WHERE id = ${path.commentId} AND post_id = ${path.id} AND action = 'comment'`
          if (request === undefined) return yield* Effect.fail(notFound("No member-signed comment with this id on this post."))
          const me = yield* accountOfIdentity(session.address)
          if (Option.isNone(me) || me.value !== request.account) return yield* Effect.fail(new Forbidden({ error: { code: "not_author", message: "Only the commenter may do this." } }))
          return yield* posts(path.id).SubmitSignatures(new SubmitSignatures({ postId: path.id, items, submissionId: randomUUID(), requestId: path.commentId })).pipe(
            answeredAs(BadRequest, Forbidden, NotFound, ContentConflict)
          )
        }).pipe(Effect.catchTag("SqlError", () => Effect.fail(unavailable()))))
  }))

const badCode = () => new BadRequest({ error: { code: "invalid_parameter", message: "Parameter 'token' is invalid: not a signing code of this service." } })
const nothingWaits = () => notFound("Nothing waits for signatures with this signing code (already signed, lapsed, or never made).")

/** The waiting request a signing code is for, with its post: 400 for a code not ours, 404 once it no longer waits. */
const waitingRequestOf = (key: Uint8Array, token: string) =>
  Effect.gen(function*() {
    const requestId = requestOfSigningToken(key, token)
    if (requestId === undefined) return yield* Effect.fail(badCode())
    const request = yield* requestById(requestId)
    if (Option.isNone(request) || request.value.state !== "awaiting" || Number(request.value.expires_at_ms) <= Date.now()) return yield* Effect.fail(nothingWaits())
    const post = yield* findPost(request.value.post_id)
    if (Option.isNone(post)) return yield* Effect.fail(nothingWaits())
    return { request: request.value, post: post.value }
  }).pipe(Effect.catchTag("SqlError", () => Effect.fail(unavailable())))

/** The wallet app's routes: the signing code stands in for the session; the signatures speak for themselves. */
export const StampSigningHandlers = HttpApiBuilder.group(SocialApi, "stampSigning", (handlers) =>
  Effect.gen(function*() {
    const posts = yield* Post.client
    const key = yield* signingKey
    return handlers
      .handle("read", ({ urlParams }) =>
        Effect.gen(function*() {
          const { post, request } = yield* waitingRequestOf(key, urlParams.token)
          const rows = yield* orElseUnavailable(unsignedRows(request.id))
          return { ...viewOf(post, request, rows), signaturesUrl: STAMP_SIGNING_PATH }
        }))
      .handle("submit", ({ payload: body }) =>
        Effect.gen(function*() {
          const items = yield* signedItems(body)
          const requestId = requestOfSigningToken(key, body.token)
          if (requestId === undefined) return yield* Effect.fail(badCode())
          const request = yield* orElseUnavailable(requestById(requestId))
          if (Option.isNone(request)) return yield* Effect.fail(nothingWaits())
          // An author action is the post's one waiting action; a comment is named by its request id.
          const named = request.value.action === "comment" ? { requestId } : {}
          return yield* posts(request.value.post_id).SubmitSignatures(new SubmitSignatures({ postId: request.value.post_id, items, submissionId: randomUUID(), ...named })).pipe(
            answeredAs(BadRequest, Forbidden, NotFound, ContentConflict)
          )
        }))
  }))
