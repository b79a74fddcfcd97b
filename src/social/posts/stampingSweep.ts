// The safety net under the Post entities' FinishStamps timers (docs/social.md, "Stamps that could
// not go out"): a FinishStamps attempt that loses the *database* retries for a while and then
// gives up, and its post would stay pending with no timer to finish it. Every node looks, every
// SHARDLINE_SOCIAL_STAMP_SWEEP_MS, for pending posts (social_stamping_pending) that have no
// unprocessed FinishStamps message in cluster storage, and sends each one a FinishStamps due now.
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

/** Pending posts whose stamps no timer will finish: their ids and attempt counts. */
export const orphanedPending = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ post_id: string; attempts: number }>`SELECT p.post_id::text AS post_id, p.attempts FROM social_stamping_pending p
    WHERE p.since < now() - make_interval(secs => ${graceSeconds})
      AND NOT EXISTS (SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'Post' AND m.entity_id = p.post_id::text
        AND m.tag = 'FinishStamps' AND NOT m.processed)
    ORDER BY p.since LIMIT ${sweepPostsMax}`)

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
