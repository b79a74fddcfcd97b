// When each of the desk's durable timers was due and when it fired (desk_timer_firings): an
// order's Tick and a link token's Expire. The entity that owns the timer records it, first thing
// when it fires: one statement per firing. A redelivery of the same timer (a node died before the
// cluster stored the reply) adds to `deliveries` and moves `last_fired_at`, so "fired once" is
// `deliveries = 1`. What reads it: the chaos checker (lateness inside and outside fault windows).
// Rows are kept a day (`firingsKeptMs`); each node prunes older ones every 10 minutes, in batches.
// Volume: an open order ticks every 3 s, 1,200 rows an hour; an expired one ticks every 30 s for a
// day (EXPIRED_TICK_MS, LATE_DEPOSIT_WATCH_MS), 2,880 rows.
import { SqlClient, type SqlError } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"

export type DeskTimer = "order_tick" | "link_expire"

/** How long a firing is kept, ms: long enough to look into a day's lateness after the fact (the metric keeps the rest). */
export const firingsKeptMs = 24 * 3600_000
/** How often a node prunes, and how many rows one statement deletes at most. */
export const pruneEvery = Duration.minutes(10)
export const pruneBatchMax = 5000

/**
 * Records that `timer` of `entityId`, due at `dueAtMs`, fires now. A failure is logged, never the
 * timer's: its work goes on (the database it needs is the same, so a failure here is rare and
 * shows as a missing firing).
 */
export const recordFiring = (timer: DeskTimer, entityId: string, dueAtMs: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const now = new Date()
    return sql<{ deliveries: number }>`INSERT INTO desk_timer_firings (timer, entity_id, due_at, fired_at, last_fired_at)
      VALUES (${timer}, ${entityId}, ${new Date(dueAtMs)}, ${now}, ${now})
      ON CONFLICT (timer, entity_id, due_at) DO UPDATE SET deliveries = desk_timer_firings.deliveries + 1, last_fired_at = EXCLUDED.last_fired_at
      RETURNING deliveries`
  }).pipe(
    // A redelivery is named where it happens (which node, when), for whoever reads a chaos run's logs.
    Effect.flatMap(([row]) => row !== undefined && row.deliveries > 1
      ? Effect.logWarning(`${timer} of ${entityId} due ${new Date(dueAtMs).toISOString()}: delivered again (${row.deliveries} times)`)
      : Effect.void),
    Effect.catchAll((e) => Effect.logWarning(`${timer} of ${entityId}: its firing was not recorded: ${e.message}`))
  )

/** Deletes firings older than `keptMs`, batch by batch; the number deleted. */
export const pruneFirings = (keptMs: number = firingsKeptMs) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const cutoff = new Date(Date.now() - keptMs)
    const batch = sql<{ n: number }>`WITH gone AS (DELETE FROM desk_timer_firings WHERE ctid IN (
        SELECT ctid FROM desk_timer_firings WHERE fired_at < ${cutoff} LIMIT ${pruneBatchMax}) RETURNING 1)
      SELECT count(*)::int AS n FROM gone`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))
    const loop = (total: number): Effect.Effect<number, SqlError.SqlError> =>
      Effect.flatMap(batch, (n) => (n < pruneBatchMax ? Effect.succeed(total + n) : loop(total + n)))
    return loop(0)
  })

/** Every node prunes (the deletes are idempotent; several nodes at once only find less to do). */
export const pruneLayer = Layer.scopedDiscard(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* pruneFirings().pipe(
    Effect.provideService(SqlClient.SqlClient, sql),
    Effect.tap((n) => (n > 0 ? Effect.logInfo(`pruned ${n} desk timer firings older than ${firingsKeptMs / 3600_000} hours`) : Effect.void)),
    Effect.catchAllCause((c) => Effect.logWarning("desk timer firings: prune failed", c)),
    Effect.repeat(Schedule.spaced(pruneEvery)),
    Effect.forkScoped
  )
}))
