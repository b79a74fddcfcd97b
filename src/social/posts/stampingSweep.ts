// The safety net under the Post entities' FinishStamps timers (docs/social.md, "Stamps that could
// not go out"): a FinishStamps attempt that loses the *database* retries for a while and then
// gives up, and its post would stay pending with no timer to finish it; a Change that ended after
// committing its owed stamp but before making it or arming the timer leaves an owed row that no
// one pays. Every node looks, every SHARDLINE_SOCIAL_STAMP_SWEEP_MS, for such posts (pending with
// no unprocessed FinishStamps, or owing a stamp with no pending row and no unprocessed Change or
// FinishStamps in cluster storage), and sends each one a FinishStamps due now.
// One node sweeps at a time (a transaction-scoped advisory lock); a post whose timer is alive is
// never touched, so the sweep never starts a second retry chain.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
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

/** One sweep: under the lock (or not at all, when another node holds it), re-arm every orphaned post. */
export const sweepOnce = Effect.gen(function*() {
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
    return posts.length
  }).pipe(sql.withTransaction)
})

/** Every node's sweep loop (failures are logged; the next round tries again). */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const everyMs = (yield* SocialConfig).socialStampSweepMs
  yield* sweepOnce.pipe(
    Effect.catchAllCause((cause) => Effect.logWarning("social: the pending-stamps sweep failed; the next round tries again", cause)),
    Effect.repeat(Schedule.spaced(Duration.millis(everyMs))),
    Effect.delay(Duration.millis(everyMs)),
    Effect.forkScoped
  )
}))
