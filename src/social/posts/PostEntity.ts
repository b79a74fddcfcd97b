// The Post entity, one per post (entity id: its long id). It publishes the post (Composer.ts),
// runs its hosting on its own durable timer (HostingCheck at the end of the paid period, then at
// the end of the grace window: hosted → grace → unpinned), and applies author takedown (T),
// moderator pull (D) and renewal (R), each with its stamp; stamps that could not go out at publish
// are finished on its own FinishStamps timer (StampCompletion.ts). State is in social_posts; `timer_n`
// there names the one live timer, so a stale or redelivered HostingCheck does nothing.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option, Schedule } from "effect"
import { HostingCheck, Post, PostRefused, type PostStateReply, SignatureDeadline } from "../../../schemas/social/post.ts"
import { FinishStamps } from "../../../schemas/social/stamping.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { findAccount } from "../accounts/Accounts.ts"
import { commentAsMember } from "./Comments.ts"
import { claimedCids, ensureStamps, findPost, type PostRow, updateMetadata } from "./Composer.ts"
import { lastOwed, owe, owedBy, payOwed } from "./owedStamps.ts"
import { finishStamps, publishOrPending, type ScheduleRetry, stampLater } from "./StampCompletion.ts"
import { hostingAt, isClosed, renewed } from "./hosting.ts"
import { memberSignedHandlers } from "./memberSigned.ts"
import { underKey } from "./idempotency.ts"
import { memberSigns } from "../accounts/signing.ts"
import { forgetServed } from "../content/served.ts"
import { blockedByPost, blockPost, liftBlock } from "../content/blocked.ts"
import { lookupCache } from "../http/LookupCache.ts"
import { refuseOrRetry } from "../../platform/entity/refuseOrRetry.ts"

/** This node's caches of the post (lookup answers, served CIDs) are dropped after a change. */
const forgetCached = (post: PostRow) => Effect.sync(() => {
  lookupCache.forget(post.id)
  lookupCache.forget(post.short_id)
  forgetServed([post.metadata_cid, ...claimedCids(post)])
})

const metrics = entityMetrics("Post")
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Anything but a refusal (database, ledger, sponsor) is reported as one, with its message. */
const asRefusal = (e: unknown): PostRefused =>
  e instanceof PostRefused ? e : new PostRefused({
    code: (e as { code?: string })?.code ?? "unavailable",
    message: (e as { message?: string })?.message ?? String(e)
  })

export const layer = Post.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const config = yield* SocialConfig
  const self = (yield* Post.client)(address.entityId)
  const postId = address.entityId
  yield* metrics.activated

  const load = Effect.flatMap(findPost(postId), Option.match({
    onNone: () => Effect.fail(new PostRefused({ code: "not_found", message: `no post ${postId}` })),
    onSome: Effect.succeed
  }))

  /** Moves hosting to where it stands now and schedules the next look (a new timer_n). */
  const schedule = (post: PostRow) =>
    Effect.gen(function*() {
      const now = hostingAt({ state: post.state, paidUntilMs: Number(post.paid_until_ms) }, config.socialGraceMs, Date.now())
      const n = Number(post.timer_n) + 1
      // The timer before the row that names it: a node killed in between leaves timer_n as it was
      // (the stray timer is ignored when it fires) and a redelivered Publish schedules again.
      if (now.dueAtMs !== undefined) yield* self.HostingCheck(new HostingCheck({ postId, n, dueAtMs: now.dueAtMs }), { discard: true })
      yield* sql`UPDATE social_posts SET state = ${now.state}, timer_n = ${n} WHERE id = ${postId}`
      if (now.state !== post.state) yield* forgetCached(post)
      if (now.state !== post.state) yield* Effect.logInfo(`post ${postId}: ${post.state} → ${now.state}`)
    })

  const retryStamps: ScheduleRetry = (attempt, dueAtMs) =>
    self.FinishStamps(new FinishStamps({ postId, attempt, dueAtMs }), { discard: true })

  const replyOf = (post: PostRow, stamp: { readonly txid: string; readonly opReturn: string } | undefined): PostStateReply => ({
    postId, state: post.state, paidUntil: new Date(Number(post.paid_until_ms)).toISOString(), txid: stamp?.txid ?? null, opReturn: stamp?.opReturn ?? null
  })
  /** The answer to a Change; a pulled post's also names the CIDs its pull blocks now. */
  const reply = (post: PostRow, stamp: { readonly txid: string; readonly opReturn: string } | undefined) =>
    post.state === "moderated"
      ? Effect.map(blockedByPost(postId), (blockedCids): PostStateReply => ({ ...replyOf(post, stamp), blockedCids }))
      : Effect.succeed(replyOf(post, stamp))

  return Post.of({
    // Accounts linked by xpub only: stamps built for the member to sign (memberSigned.ts).
    ...memberSignedHandlers({
      deadline: (requestId, dueAtMs) => self.SignatureDeadline(new SignatureDeadline({ postId, requestId, dueAtMs }), { discard: true }).pipe(Effect.orDie),
      later: (error) => stampLater(postId, error, retryStamps).pipe(Effect.provideService(SocialConfig, config), Effect.provideService(SqlClient.SqlClient, sql)),
      afterChange: (post, action) => Effect.zipRight(forgetCached(post), action === "publish" || action === "renew" ? schedule(post) : Effect.void)
    }),
    Publish: ({ payload }) =>
      Effect.gen(function*() {
        if (!UUID.test(postId) || payload.postId !== postId) return yield* new PostRefused({ code: "invalid_parameter", message: "a post id is a lowercase uuid" })
        return yield* underKey(payload, Effect.gen(function*() {
          // Stamping that fails after the post is written answers "pending" and retries on FinishStamps.
          const done = yield* publishOrPending(payload, retryStamps)
          // timer_n 0: hosting never scheduled (a first run, or one that stopped before it).
          if (Number(done.post.timer_n) === 0) yield* schedule(done.post)
          return done.receipt
        }))
      }).pipe(refuseOrRetry(asRefusal), metrics.guard),

    Change: ({ payload }) =>
      Effect.gen(function*() {
        const post = yield* load
        const account = Option.getOrThrow(yield* findAccount(post.author))
        if (memberSigns(account) && (payload.action === "takedown" || payload.action === "renew" || payload.action === "metadata")) {
          return yield* new PostRefused({ code: "no_service_key", message: `the member signs this post's stamps: POST /api/social/posts/${postId}/${payload.action} answers them unsigned` })
        }
        // Every action below takes effect with the stamp it owes recorded in the same transaction
        // (owedStamps.ts); the stamp is made now, or, if the ledger or the sponsor fails, on the
        // entity's FinishStamps timer (the answer's txid is then null).
        const ready = yield* Effect.either(ensureStamps(post, account))
        const payNow = (owedId: string) =>
          Either.isLeft(ready)
            // The post's own stamps first (their sequence on its address): all of them on the timer.
            ? Effect.as(stampLater(postId, ready.left, retryStamps), undefined)
            : payOwed(owedId).pipe(Effect.catchAll((e) => Effect.as(stampLater(postId, e, retryStamps), undefined)))
        const tag = payload.action === "takedown" ? "T" as const : "D" as const
        // The same Change redelivered (its node died after the effect committed): its stamp only.
        const already = yield* owedBy(postId, payload.requestId)
        if (already !== undefined) return yield* reply(Option.getOrThrow(yield* findPost(postId)), yield* payNow(already))
        if (isClosed(post.state)) {
          if ((payload.action === "takedown" && post.state === "taken_down") || (payload.action === "moderate" && post.state === "moderated")) {
            // The same request again: its stamp, made now if it is still owed.
            const owed = yield* lastOwed(postId, tag)
            if (Option.isSome(owed)) return yield* reply(post, yield* payNow(owed.value))
            const [done] = yield* sql<{ txid: string; op_return: string }>`SELECT txid, op_return FROM social_stamps
              WHERE post_id = ${postId} AND tag = ${tag} ORDER BY seq DESC LIMIT 1`
            return yield* reply(post, done === undefined ? undefined : { txid: done.txid, opReturn: done.op_return })
          }
          return yield* new PostRefused({ code: "post_closed", message: `the post is ${post.state.replace("_", " ")}; it cannot change any more` })
        }
        if (payload.action === "metadata" || payload.action === "comment") {
          const owedId = yield* (payload.action === "metadata" ? updateMetadata(post, account, payload) : commentAsMember(post, payload))
          yield* forgetCached(post)
          const s = yield* payNow(owedId)
          return yield* reply(Option.getOrThrow(yield* findPost(postId)), s)
        }
        if (payload.action === "renew") {
          const price = config.socialPostPriceBase
          const next = renewed({ state: post.state, paidUntilMs: Number(post.paid_until_ms) }, config.socialHostingPeriodMs, Date.now())
          // The charge, the new period and the R it owes commit together.
          const owedId = yield* Effect.gen(function*() {
            const charged = yield* sql`UPDATE social_accounts SET balance_base = balance_base - ${price.toString()}
              WHERE address = ${post.author} AND balance_base >= ${price.toString()} RETURNING 1`
            if (charged.length === 0) return yield* new PostRefused({ code: "insufficient_balance", message: `a renewal costs ${price} base units` })
            yield* sql`INSERT INTO social_charges (account, amount_base, reason, post_id) VALUES (${post.author}, ${price.toString()}, 'renewal', ${postId})`
            yield* sql`UPDATE social_posts SET state = 'hosted', paid_until_ms = ${next.paidUntilMs} WHERE id = ${postId}`
            return yield* owe(postId, "R", post.metadata_cid, payload.requestId)
          }).pipe(sql.withTransaction)
          yield* forgetCached(post)
          yield* schedule(Option.getOrThrow(yield* findPost(postId)))
          const s = yield* payNow(owedId)
          return yield* reply(Option.getOrThrow(yield* findPost(postId)), s)
        }
        // Takedown and moderation unpin at once; the chain record stays. A pull also blocks the
        // post's content (its CIDs), so no other post can bring the bytes back (blocked.ts).
        const state = payload.action === "takedown" ? "taken_down" : "moderated"
        const owedId = yield* Effect.gen(function*() {
          yield* sql`UPDATE social_posts SET state = ${state}, moderation_reason = ${payload.reason ?? null}, timer_n = timer_n + 1 WHERE id = ${postId}`
          if (payload.action === "moderate") yield* blockPost(postId, payload.reason ?? null)
          return yield* owe(postId, tag, post.metadata_cid, payload.requestId)
        }).pipe(sql.withTransaction)
        yield* forgetCached(post)
        const s = yield* payNow(owedId)
        return yield* reply(Option.getOrThrow(yield* findPost(postId)), s)
      }).pipe(refuseOrRetry(asRefusal), metrics.guard),

    // An operator lifts this post's block of one CID (`social moderate --lift`): the bytes may be
    // served and posted again; the post itself stays pulled. Again after it ended: its time, none new.
    LiftBlock: ({ payload }) =>
      Effect.gen(function*() {
        if (payload.postId !== postId) return yield* new PostRefused({ code: "invalid_parameter", message: "the message names another post" })
        const lifted = yield* liftBlock(postId, payload.cid, payload.reason ?? null)
        yield* Effect.sync(() => forgetServed([payload.cid]))
        if (lifted !== undefined) {
          yield* Effect.logInfo(`post ${postId}: moderation block of ${payload.cid} lifted`)
          return { postId, cid: payload.cid, liftedAt: lifted.toISOString() }
        }
        const [was] = yield* sql<{ lifted_at: Date | null }>`SELECT lifted_at FROM social_blocked_cids WHERE post_id = ${postId} AND cid = ${payload.cid}`
        return { postId, cid: payload.cid, liftedAt: was?.lifted_at?.toISOString() ?? null }
      }).pipe(refuseOrRetry(asRefusal), metrics.guard),

    FinishStamps: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        // Ledger failures are handled inside (the next attempt is scheduled); what fails here is the
        // database itself, retried a while before the attempt gives up (the row stays pending).
        yield* finishStamps(postId, payload.attempt, retryStamps).pipe(Effect.retry({ schedule: Schedule.exponential("500 millis"), times: 8 }))
      }).pipe(Effect.orDie, metrics.guard),

    HostingCheck: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        const post = yield* findPost(postId)
        if (Option.isNone(post) || payload.n !== Number(post.value.timer_n)) return
        yield* schedule(post.value)
      }).pipe(Effect.orDie, metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
