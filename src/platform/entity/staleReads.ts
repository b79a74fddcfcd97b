// A short read lease for the cluster's persisted messages. @effect/cluster 0.60's SqlMessageStorage
// marks every message it reads (`last_read`) and reads it again only when that mark is 10 minutes
// old. The storage read loop then drops some of what it read without delivering it: a message of a
// shard this runner is letting go, or of an entity that is closing (Sharding.ts, the read loop's
// `send`). Only the next acquisition of the shard clears the mark (`resetShards`, run with a 1 s
// timeout whose failure is ignored), so a dropped message can wait 10 minutes: a durable timer that
// is an order's only clock stops for that long (chaos seed 7, sessions 19 and 20: a desk order's
// Tick chain quiet for 22 minutes, then 522 s; docs/desk-orders.md, "Tick chains").
//
// Every runner, every STALE_READ_EVERY, clears the mark of each due, unprocessed message read more
// than STALE_READ_MS ago. That is what `resetShards` does for a whole shard, done for the messages
// that need it: the shard's owner reads them on its next poll and delivers them, or skips one it is
// still processing (the entity manager knows its requests in flight: `isProcessingFor`), so a
// handler running long is not started twice on its node. A shard moving between runners is
// delivered again exactly as the library's own reset already does.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"

/** A read mark older than this, on a message still unprocessed, is taken as dropped. */
export const STALE_READ_MS = 15_000
/** How often each runner looks. */
export const STALE_READ_EVERY = Duration.seconds(5)

/** Clears the read mark of due, unprocessed messages read more than `staleMs` ago; how many. */
export const clearStaleReads = (staleMs: number = STALE_READ_MS) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`WITH cleared AS (
        UPDATE cluster_messages SET last_read = NULL
        WHERE processed = false AND last_reply_id IS NULL AND last_read < now() - make_interval(secs => ${staleMs / 1000}::float8)
          AND (deliver_at IS NULL OR deliver_at <= ${Date.now()})
        RETURNING 1)
      SELECT count(*)::int AS n FROM cleared`.pipe(Effect.map((rows) => rows[0]?.n ?? 0)))

/** Every runner clears (the update is idempotent; two runners at once only find less to do). */
export const layer = Layer.scopedDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* clearStaleReads().pipe(
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.tap((n) => (n > 0 ? Effect.logWarning(`cluster: ${n} message(s) read over ${STALE_READ_MS / 1000} s ago and not delivered; their read mark cleared`) : Effect.void)),
    Effect.catchAllCause((c) => Effect.logWarning("cluster: clearing stale read marks failed; the next look tries again", c)),
    Effect.repeat(Schedule.spaced(STALE_READ_EVERY)),
    Effect.delay(STALE_READ_EVERY),
    Effect.forkScoped
  )
}))
