// Member-signed stamps (docs/social.md, "Member-signed stamps"): an account linked by xpub only
// (no sealed seed) posts from its own wallet. Publishing and the author's later actions (T, R, M)
// do what they do for a service-held account — charge, manifest by CID, rows, the post's address
// derived from the xpub (…/1101'/{i}/0/0, all non-hardened) — except the signing: the Post entity
// funds one sponsor coin per stamp (one funding transaction), builds every stamp of the action as a
// PSBT (signatureRequests.ts, psbt.ts), and waits. The member signs in their wallet and sends them
// back (signedStamps.ts): each is checked to be exactly the transaction built, recorded, then
// broadcast, and only then does the action take effect. Unsigned past the window
// (SHARDLINE_SOCIAL_SIGNATURE_WINDOW_MS, a durable timer on the Post entity) the action lapses.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Stream } from "effect"
import { underKey } from "./idempotency.ts"
import type { ChangeUnsigned, CommentUnsigned, PublishUnsigned, SignatureDeadline, SubmitSignatures, UnsignedStamps } from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { memberSigns } from "../accounts/signing.ts"
import { postSteps, shortIdOf } from "../accounts/socialKeys.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { checkPublish, claimedCids, findPost, nextManifest, type PostRow, recordPostCids, requiredStamps, storeBodyClaim } from "./Composer.ts"
import { isClosed } from "./hosting.ts"
import { postKeyFromXpub } from "./psbt.ts"
import { type Action, accountOf, asRefusal, loadPost, type MemberAccount, openRequest, refuse, requestById, unsignedRows, viewOf } from "./signatureRequests.ts"
import { expireSignatures, submitSignatures } from "./signedStamps.ts"
import { commentUnsigned } from "./memberComments.ts"
import { refuseOrRetry } from "../../platform/entity/refuseOrRetry.ts"

/** Indexes skipped at most when a short id is already taken (as Composer.ts). */
const SHORT_ID_ATTEMPTS = 8

/**
 * Publish for a member-signed account: the rows as Composer.publish writes them (charge,
 * manifest, post), the address derived from the xpub, state `awaiting_signature`; then the
 * deadline (`deadline`, before any funding, so even a publish whose funding failed lapses and is
 * refunded), then the stamps C… (media, or the body of a post without media), CHV1P, P built for signing. A redelivered message finds the post.
 */
export const publishUnsigned = (p: PublishUnsigned, deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const store = yield* ContentStore
    const ledger = yield* UtxoLedger
    const messageKey = `publish-unsigned:${p.postId}`
    let post = yield* findPost(p.postId)
    if (Option.isNone(post)) {
      yield* checkPublish(p)
      yield* Effect.gen(function*() {
        const [account] = yield* sql<MemberAccount>`SELECT address, asset_id, xpub, xpub_path, balance_base::text AS balance_base, seed_enc, next_post_index
          FROM social_accounts WHERE address = ${p.author} FOR UPDATE`
        if (account === undefined) return yield* refuse("unknown_account", `no social account ${p.author.slice(0, 40)}`)
        if (!memberSigns(account) || account.xpub === null) return yield* refuse("no_service_key", "this account has no linked xpub to derive its post addresses from")
        const price = config.socialPostPriceBase
        if (BigInt(account.balance_base) < price) {
          return yield* refuse("insufficient_balance", `a post costs ${price} base units; the balance is ${account.balance_base}`)
        }
        const accountPath = account.xpub_path ?? `m/44'/${ledger.params.coinType}'/1101'`
        const derive = (i: number) => Either.getOrThrowWith(postKeyFromXpub(account.xpub!, postSteps(i), ledger.params), (m) => new Error(m))
        let index = account.next_post_index
        let key = derive(index)
        for (let i = 0; i < SHORT_ID_ATTEMPTS && (yield* sql`SELECT 1 FROM social_posts WHERE short_id = ${shortIdOf(key.address)}`).length > 0; i++) {
          index += 1
          key = derive(index)
        }
        const path = `${accountPath}/${postSteps(index).join("/")}`
        const createdAt = new Date()
        const manifest = canonicalJson({
          version: 1, kind: p.kind, body: p.body, tags: [...p.tags], media: [...p.mediaCids], author: p.author,
          address: key.address, derivationPath: path, createdAt: createdAt.toISOString()
        })
        const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
        const bodyCid = yield* storeBodyClaim(p)
        yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()}, next_post_index = ${index + 1} WHERE address = ${p.author}`
        yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${p.author}, ${price.toString()}, 'post', ${p.postId})`
        // The paid period starts when the stamps are signed (submitSignatures); until then nothing is served.
        yield* sql`INSERT INTO social_posts (id, short_id, author, post_index, address, derivation_path, kind, body, tags, media_cids, metadata_cid, body_cid, state, paid_until_ms, created_at)
          VALUES (${p.postId}, ${shortIdOf(key.address)}, ${p.author}, ${index}, ${key.address}, ${path}, ${p.kind}, ${p.body},
            ${JSON.stringify(p.tags)}::jsonb, ${JSON.stringify(p.mediaCids)}::jsonb, ${stored.cid}, ${bodyCid}, 'awaiting_signature', ${createdAt.getTime()}, ${createdAt})`
        yield* recordPostCids(p.postId, [stored.cid, ...claimedCids({ media_cids: p.mediaCids, body_cid: bodyCid })])
      }).pipe(sql.withTransaction)
      post = yield* findPost(p.postId)
    }
    const row = Option.getOrThrow(post)
    if (row.state !== "awaiting_signature") {
      const request = yield* requestById(row.id)
      if (Option.isSome(request)) return viewOf(row, request.value, yield* unsignedRows(row.id))
      return yield* refuse("post_closed", `the post is ${row.state.replace("_", " ")}`)
    }
    yield* deadline(row.id, new Date(row.created_at).getTime() + config.socialSignatureWindowMs)
    const account = yield* accountOf(row.author)
    return yield* openRequest(row, account, row.id, messageKey, "publish", requiredStamps(row))
  }).pipe(refuseOrRetry(asRefusal))

/** T, R or M for a member-signed post: charged (R) and built for signing; takes effect once signed. */
export const changeUnsigned = (c: ChangeUnsigned, deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* SocialConfig
    const post = yield* loadPost(c.postId)
    const account = yield* accountOf(post.author)
    const messageKey = `change-unsigned:${c.postId}:${c.requestId}`
    const existing = yield* requestById(c.requestId)
    if (Option.isSome(existing)) return viewOf(post, existing.value, yield* unsignedRows(c.requestId))
    if (post.state === "awaiting_signature") return yield* refuse("signature_pending", "the post's publish waits for your signatures")
    if (post.state === "unsigned" || isClosed(post.state)) return yield* refuse("post_closed", `the post is ${post.state.replace("_", " ")}; it cannot change any more`)
    let view: UnsignedStamps
    if (c.action === "takedown") {
      view = yield* openRequest(post, account, c.requestId, messageKey, "takedown", [{ tag: "T", cid: post.metadata_cid }])
    } else if (c.action === "renew") {
      const price = config.socialPostPriceBase
      if (BigInt(account.balance_base) < price) return yield* refuse("insufficient_balance", `a renewal costs ${price} base units`)
      view = yield* openRequest(post, account, c.requestId, messageKey, "renew", [{ tag: "R", cid: post.metadata_cid }], { chargedBase: price })
    } else {
      const { body, tags, stored } = yield* nextManifest(post, c)
      yield* sql`INSERT INTO social_post_cids (post_id, cid) VALUES (${post.id}, ${stored.cid}) ON CONFLICT DO NOTHING`
      view = yield* openRequest(post, account, c.requestId, messageKey, "metadata", [{ tag: "M", cid: stored.cid }], { body, tags })
    }
    yield* deadline(c.requestId, Date.parse(view.expiresAt))
    return view
  }).pipe(refuseOrRetry(asRefusal))

/** What the Post entity lends the member-signed handlers: its own timer and what follows a change. */
export interface MemberSignedContext {
  readonly deadline: (requestId: string, dueAtMs: number) => Effect.Effect<void>
  /** After signatures took effect: hosting scheduled again (publish, renew), caches dropped. */
  readonly afterChange: (post: PostRow, action: Action) => Effect.Effect<void, unknown, never>
  /** Signed stamps recorded whose broadcast failed: sent again on the entity's FinishStamps timer. */
  readonly later: (error: unknown) => Effect.Effect<void, unknown, never>
}

/** The Post entity's member-signed messages (schemas/social/post.ts). */
export const memberSignedHandlers = (ctx: MemberSignedContext) => ({
  PublishUnsigned: ({ payload }: { readonly payload: PublishUnsigned }) => underKey(payload, publishUnsigned(payload, ctx.deadline)).pipe(refuseOrRetry(asRefusal)),
  ChangeUnsigned: ({ payload }: { readonly payload: ChangeUnsigned }) => changeUnsigned(payload, ctx.deadline),
  CommentUnsigned: ({ payload }: { readonly payload: CommentUnsigned }) => commentUnsigned(payload, ctx.deadline),
  SubmitSignatures: ({ payload }: { readonly payload: SubmitSignatures }) =>
    Effect.gen(function*() {
      const done = yield* submitSignatures(payload)
      if (done.unsent !== undefined) yield* ctx.later(done.unsent)
      if (done.changed) yield* ctx.afterChange(yield* loadPost(payload.postId), done.action)
      return done.reply
    }).pipe(refuseOrRetry(asRefusal)),
  SignatureDeadline: ({ payload }: { readonly payload: SignatureDeadline }) =>
    Effect.gen(function*() {
      if (yield* expireSignatures(payload)) yield* Effect.flatMap(findPost(payload.postId), Option.match({
        onNone: () => Effect.void,
        onSome: (post) => ctx.afterChange(post, "takedown").pipe(Effect.ignore)
      }))
    }).pipe(Effect.orDie)
})
