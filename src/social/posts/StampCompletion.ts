// A post whose stamps could not all go out is finished by its own Post entity, never by the client
// publishing again (docs/social.md, "Stamps that could not go out"). Publish writes and charges the
// post in one transaction and then stamps it; if the ledger or the fee sponsor fails in between,
// the post stays written and charged, the answer says `stamping: "pending"`, and a durable
// FinishStamps timer of the entity sends the missing stamps again with backoff
// (SHARDLINE_SOCIAL_STAMP_RETRY_MS doubling up to SHARDLINE_SOCIAL_STAMP_RETRY_MAX_MS) until
// every required stamp is on the ledger.
//
// "On the ledger" is asked of the ledger itself: a stamp row is written before its broadcast, so a
// node killed between the two (or a broadcast whose answer was lost) leaves a row the ledger may
// not know; those rows are sent again with their recorded bytes, oldest first, never re-made.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import type { PostReceipt, Publish } from "../../../schemas/social/post.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { type AccountRow, findAccount } from "../accounts/Accounts.ts"
import { lookupCache } from "../http/LookupCache.ts"
import { ensureStamps, findPost, type PostRow, publish, receiptOf, type StampRow, stampsOf } from "./Composer.ts"
import { payAllOwed } from "./owedStamps.ts"

/** Wait before retry `attempt` (0 is the first): base · 2^attempt, at most `maxMs`. Pure. */
export const stampRetryDelayMs = (attempt: number, baseMs: number, maxMs: number): number =>
  Math.min(maxMs, baseMs * 2 ** Math.min(Math.max(attempt, 0), 40))

/** Whether the ledger knows the transaction (mempool or chain). */
const known = (txid: string) =>
  Effect.flatMap(UtxoLedger, (ledger) =>
    ledger.getTx(txid).pipe(Effect.as(true), Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(false))))

/**
 * Sends again, with their recorded bytes, every recorded stamp of the post the ledger does not
 * know: its own address's, its comments' (each from its commenter's comment address), its
 * member-signed ones and a moderation D; per address oldest first. When a parent is missing, the
 * sponsor's lost fundings, a member-signed action's funding transaction and the address's earlier
 * stamps go first.
 */
export const resendLost = (post: Pick<PostRow, "id" | "address">) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const rows = yield* sql<{ txid: string; tx_hex: string; address: string; seq: number }>`SELECT txid, tx_hex, address, seq FROM social_stamps
      WHERE post_id = ${post.id} ORDER BY address, seq`
    const parents = (row: { txid: string; address: string; seq: number }) =>
      Effect.gen(function*() {
        yield* sponsor.repair
        const funding = yield* sql<{ funding_hex: string }>`SELECT r.funding_hex FROM social_unsigned_stamps u
          JOIN social_signature_requests r ON r.id = u.request_id WHERE u.txid = ${row.txid}`
        for (const f of funding) yield* ledger.broadcast(f.funding_hex).pipe(Effect.ignore)
        const earlier = yield* sql<{ tx_hex: string }>`SELECT tx_hex FROM social_stamps WHERE address = ${row.address} AND seq < ${row.seq} ORDER BY seq`
        for (const e of earlier) yield* ledger.broadcast(e.tx_hex).pipe(Effect.ignore)
      })
    let resent = 0
    for (const row of rows) {
      if (yield* known(row.txid)) continue
      yield* ledger.broadcast(row.tx_hex).pipe(
        Effect.catchTag("LedgerTxRejected", (e) =>
          e.code === "missing-inputs" ? Effect.zipRight(parents(row), ledger.broadcast(row.tx_hex)) : Effect.fail(e)),
        Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed(row.txid) : Effect.fail(e)))
      )
      resent += 1
    }
    return resent
  })

/** Every stamp the post is owed recorded and on the ledger: the lost ones sent again, the missing ones made. */
export const completeStamps = (post: PostRow, account: AccountRow) =>
  Effect.gen(function*() {
    yield* resendLost(post)
    yield* ensureStamps(post, account)
    // T, D, R, M and X owed by actions that took effect (owedStamps.ts).
    yield* payAllOwed(post.id)
  })

const pendingReceipt = (post: PostRow, stamps: ReadonlyArray<StampRow>): PostReceipt => ({ ...receiptOf(post, stamps), stamping: "pending" })

/** The receipt of a post now: "pending" while its stamps are being retried or not all recorded. */
export const currentReceipt = (post: PostRow) =>
  Effect.gen(function*() {
    const stamps = yield* stampsOf(post.id)
    const receipt = receiptOf(post, stamps)
    return (yield* isPending(post.id)) ? { ...receipt, stamping: "pending" as const } : receipt
  })

const errorText = (e: unknown) => String((e as { message?: unknown })?.message ?? e).slice(0, 500)

/** The post is pending (lookups say so) until finishStamps clears it. */
const markPending = (postId: string, attempts: number, error: unknown) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO social_stamping_pending (post_id, attempts, last_error) VALUES (${postId}, ${attempts}, ${errorText(error)})
      ON CONFLICT (post_id) DO UPDATE SET attempts = EXCLUDED.attempts, last_error = EXCLUDED.last_error`)

/**
 * A stamp owed after an action took effect could not be made or sent now: the post is pending and
 * its first FinishStamps retry is scheduled (the action answers with its stamp still to come).
 */
export const stampLater = (postId: string, error: unknown, retry: ScheduleRetry) =>
  Effect.gen(function*() {
    const config = yield* SocialConfig
    yield* Effect.logWarning(`post ${postId}: a stamp it is owed did not go out; retrying on the entity's timer`, error)
    yield* markPending(postId, 0, error)
    yield* retry(0, Date.now() + stampRetryDelayMs(0, config.socialStampRetryMs, config.socialStampRetryMaxMs))
  })

/** Whether the post's stamps are being retried (lookups). */
export const isPending = (postId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql`SELECT 1 FROM social_stamping_pending WHERE post_id = ${postId}`, (rows) => rows.length > 0))

/** Schedules FinishStamps `attempt` of this post at `dueAtMs` (the entity's own client). */
export type ScheduleRetry = (attempt: number, dueAtMs: number) => Effect.Effect<void, unknown>

/**
 * Publish as the entity runs it: the composer's publish; when it fails after the post was written
 * (stamping), the post answers pending and the first retry is scheduled. A redelivered or retried
 * publish (the post already there) also sends again whatever recorded stamp the ledger lost.
 */
export const publishOrPending = (payload: Publish, retry: ScheduleRetry) =>
  Effect.gen(function*() {
    const config = yield* SocialConfig
    const firstRetry = retry(0, Date.now() + stampRetryDelayMs(0, config.socialStampRetryMs, config.socialStampRetryMaxMs))
    const done = yield* Effect.either(publish(payload))
    if (Either.isRight(done)) {
      if (done.right.created) return done.right
      const again = yield* Effect.either(resendLost(done.right.post))
      if (Either.isRight(again)) return done.right
      yield* Effect.logWarning(`post ${payload.postId}: recorded stamps not on the ledger yet; retrying on the entity's timer`, again.left)
      yield* markPending(payload.postId, 0, again.left)
      yield* firstRetry
      return { ...done.right, receipt: pendingReceipt(done.right.post, yield* stampsOf(payload.postId)) }
    }
    const written = yield* findPost(payload.postId)
    if (Option.isNone(written)) return yield* Effect.fail(done.left)
    // Charged and written; the stamps go out on the entity's own timer.
    yield* Effect.logWarning(`post ${payload.postId}: written and charged, stamping failed; retrying on the entity's timer`, done.left)
    yield* markPending(payload.postId, 0, done.left)
    yield* firstRetry
    return { post: written.value, receipt: pendingReceipt(written.value, yield* stampsOf(payload.postId)), created: true }
  })

/**
 * One FinishStamps attempt: send what is missing; on failure schedule the next attempt later.
 * An account the service holds no key for is not retried (nothing could ever stamp it here).
 */
export const finishStamps = (postId: string, attempt: number, retry: ScheduleRetry) =>
  Effect.gen(function*() {
    const config = yield* SocialConfig
    const post = yield* findPost(postId)
    if (Option.isNone(post)) return
    const account = yield* findAccount(post.value.author)
    if (Option.isNone(account)) return
    const result = yield* Effect.either(completeStamps(post.value, account.value))
    if (Either.isRight(result)) {
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM social_stamping_pending WHERE post_id = ${postId}`)
      lookupCache.forget(post.value.id)
      lookupCache.forget(post.value.short_id)
      return yield* Effect.logInfo(`post ${postId}: every stamp is on the ledger (retry ${attempt})`)
    }
    if ((result.left as { code?: string }).code === "no_service_key") {
      return yield* Effect.logWarning(`post ${postId}: the service holds no key for its account; its stamps are not retried`)
    }
    const next = attempt + 1
    const delay = stampRetryDelayMs(next, config.socialStampRetryMs, config.socialStampRetryMaxMs)
    yield* Effect.logWarning(`post ${postId}: stamps not out yet (retry ${attempt}); next in ${delay} ms`, result.left)
    yield* markPending(postId, next, result.left)
    yield* retry(next, Date.now() + delay)
  })
