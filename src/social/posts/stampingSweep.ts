// The safety net under the Post entities' FinishStamps timers (docs/social.md, "Stamps that could
// not go out"): a FinishStamps attempt that loses the *database* retries for a while and then
// gives up, and its post would stay pending with no timer to finish it; a Change that ended after
// committing its owed stamp but before making it or arming the timer leaves an owed row that no
// one pays. Every node looks, every SHARDLINE_SOCIAL_STAMP_SWEEP_MS, for such posts (pending with
// no unprocessed FinishStamps, or owing a stamp with no pending row and no unprocessed Change or
// FinishStamps in cluster storage), and sends each one a FinishStamps due now.
// One node sweeps at a time (a transaction-scoped advisory lock); a post whose timer is alive is
// never touched, so the sweep never starts a second retry chain.
//
// It also finds recorded stamps the ledger does not know a minute after they were written (a node
// killed between a stamp's record and its broadcast, a redelivered Change that found its owed rows
// paid and so sent nothing: chaos seed 2, an XM "unknown to the chain" at the end) and re-arms
// their post's FinishStamps, whose resendLost sends the recorded bytes again. Each node walks the
// stamps once, oldest first, from a watermark (a day back when it starts), asking the ledger about
// each stamp once it is a minute old.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { Post } from "../../../schemas/social/post.ts"
import { FinishStamps } from "../../../schemas/social/stamping.ts"
import { SocialConfig } from "../SocialConfig.ts"

/** Posts re-armed per sweep at most (the rest wait for the next one). */
export const sweepPostsMax = 100
/** A post pending for less than this is left to the timer its action is scheduling now. */
const graceSeconds = 60
/** The sweep's advisory lock (two-int keyspace). */
const SWEEP_LOCK = [0x534c5357, 1] as const

/**
 * Posts whose stamps nothing will finish, with their attempt counts: pending posts with no
 * FinishStamps timer, and posts owing a stamp (social_owed_stamps unpaid) that are not pending and
 * whose post has no Change or FinishStamps still to process (the action that owes it ended without
 * making the stamp or scheduling its timer: a Change cut short, chaos seed 1 of issue 25).
 */
export const orphanedPending = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ post_id: string; attempts: number }>`SELECT post_id::text AS post_id, attempts FROM (
      SELECT p.post_id, p.attempts, p.since FROM social_stamping_pending p
      WHERE p.since < now() - make_interval(secs => ${graceSeconds})
        AND NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'Post' AND m.entity_id = p.post_id::text
          AND m.tag = 'FinishStamps' AND NOT m.processed)
      UNION ALL
      SELECT o.post_id, 0 AS attempts, min(o.created_at) AS since FROM social_owed_stamps o
      WHERE o.txid IS NULL AND o.created_at < now() - make_interval(secs => ${graceSeconds})
        AND NOT EXISTS (SELECT 1 FROM social_stamping_pending p WHERE p.post_id = o.post_id)
        AND NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'Post' AND m.entity_id = o.post_id::text
          AND m.tag IN ('FinishStamps', 'Change') AND NOT m.processed)
      GROUP BY o.post_id
    ) orphaned ORDER BY since LIMIT ${sweepPostsMax}`)

/** A recorded stamp is asked of the ledger once it is this old (its broadcast had time to happen). */
const unsentAfterSeconds = 60
/** How far back a node starts walking recorded stamps. */
const unsentLookBackMs = 24 * 3_600_000
/** Stamps asked of the ledger per sweep at most (the rest wait for the next one). */
export const stampChecksMax = 500

/** Where a node's walk of recorded stamps stands: (created_at, txid) of the last one asked. */
export interface StampWatermark {
  at: Date
  txid: string
}

/**
 * The posts of recorded stamps the ledger does not know, walked from `mark` (advanced past every
 * stamp asked, known or not: an unknown one's post gets FinishStamps, which sends it again or
 * leaves the post pending for the sweep above). A ledger that does not answer ends the round.
 */
export const unsentStamps = (mark: StampWatermark) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const rows = yield* sql<{ txid: string; post_id: string; created_at: Date }>`SELECT txid, post_id::text AS post_id, created_at
      FROM social_stamps WHERE post_id IS NOT NULL AND (created_at, txid) > (${mark.at}, ${mark.txid})
        AND created_at < now() - make_interval(secs => ${unsentAfterSeconds})
      ORDER BY social_stamps.created_at, social_stamps.txid LIMIT ${stampChecksMax}`
    const posts = new Set<string>()
    for (const row of rows) {
      const known = yield* ledger.getTx(row.txid).pipe(
        Effect.as(true),
        Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(false)),
        Effect.option
      )
      if (known._tag === "None") break
      if (!known.value) posts.add(row.post_id)
      mark.at = row.created_at
      mark.txid = row.txid
    }
    return [...posts]
  })

/** One sweep: under the lock (or not at all, when another node holds it), re-arm every orphaned post. */
export const sweepOnce = (mark: StampWatermark = { at: new Date(Date.now() - unsentLookBackMs), txid: "" }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const client = yield* Post.client
    return yield* Effect.gen(function*() {
      const [locked] = yield* sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${SWEEP_LOCK[0]}, ${SWEEP_LOCK[1]}) AS ok`
      if (locked?.ok !== true) return 0
      const posts = yield* orphanedPending
      for (const p of posts) {
        yield* Effect.logWarning(`post ${p.post_id}: pending stamps with no timer; the sweep re-arms FinishStamps`)
        yield* client(p.post_id).FinishStamps(new FinishStamps({ postId: p.post_id, attempt: p.attempts, dueAtMs: Date.now() }), { discard: true })
      }
      const armed = new Set(posts.map((p) => p.post_id))
      const unsent = (yield* unsentStamps(mark)).filter((id) => !armed.has(id))
      for (const postId of unsent) {
        const [busy] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_messages
          WHERE entity_type = 'Post' AND entity_id = ${postId} AND tag = 'FinishStamps' AND NOT processed`
        if ((busy?.n ?? 0) > 0) continue
        yield* Effect.logWarning(`post ${postId}: a recorded stamp the ledger does not know; the sweep re-arms FinishStamps to send it again`)
        yield* client(postId).FinishStamps(new FinishStamps({ postId, attempt: 0, dueAtMs: Date.now() }), { discard: true })
      }
      return posts.length + unsent.length
    }).pipe(sql.withTransaction)
  })

/** Every node's sweep loop (failures are logged; the next round tries again). */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const everyMs = (yield* SocialConfig).socialStampSweepMs
  const mark: StampWatermark = { at: new Date(Date.now() - unsentLookBackMs), txid: "" }
  yield* sweepOnce(mark).pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("social: the pending-stamps sweep failed; the next round tries again", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(everyMs))),
    Effect.delay(Duration.millis(everyMs)),
    Effect.forkScoped
  )
}))
