// A safety net for the desk orders' Tick chains: every node, every REARM_EVERY, asks for the
// orders whose chain has not ended and has gone quiet (no tick recorded in desk_timer_firings for longer than their
// tick allows) and sends each one Advance. Advance moves the order and schedules its next tick
// (DeskOrderEntity), so a chain that was lost starts again.
//
// Why: chaos seed 7 (session 19) had a cash-out whose chain went quiet for 22 minutes, through
// shard-lock episodes, node kills and database restarts; only a poll from its customer moved it
// again. Each tick schedules the next one, and a redelivered tick does too, but one path lost it
// and is not found yet (docs/desk-orders.md, "Tick chains"). The chain is the order's only clock,
// so it gets a check that does not depend on it. Sending Advance to an order that is fine costs one
// look; the entity is the only writer of its rows, so the sweep only sends.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Layer, Schedule } from "effect"
import { AdvanceOrder, DeskOrderEntity } from "../../../schemas/desk/orders.ts"
import { EXPIRED_TICK_MS, ORDER_TICK_MS } from "./DeskOrderEntity.ts"

/** How often each node looks for quiet chains. */
export const REARM_EVERY = Duration.seconds(10)
/** An open order whose last tick is older than this is quiet (its tick, and room for a slow look). */
export const OPEN_QUIET_MS = 5 * ORDER_TICK_MS
/** An expired order's (it ticks every EXPIRED_TICK_MS). */
export const EXPIRED_QUIET_MS = 2 * EXPIRED_TICK_MS + ORDER_TICK_MS
/** Orders one sweep sends Advance to at most (oldest first); the next sweep takes the rest. */
export const REARM_BATCH_MAX = 100

/**
 * The orders whose Tick chain has not ended on purpose (ticks_done_at, set by the entity when a
 * settled order's ledger legs are final or an expired order's watch is over) and is quiet, oldest
 * first: unchanged for longer than their quiet span and with no tick recorded within it. Settled
 * orders count: they tick while they follow their ledger legs (chaos seed 7, session 20: a released
 * wrap's chain quiet for 522 s, unseen by a sweep of open and expired orders only).
 */
export const quietOrders = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ id: string }>`SELECT o.id::text FROM desk_orders o
    CROSS JOIN LATERAL (SELECT make_interval(secs => CASE WHEN o.status = 'expired'
      THEN ${EXPIRED_QUIET_MS / 1000}::float8 ELSE ${OPEN_QUIET_MS / 1000}::float8 END) AS span) q
    WHERE o.ticks_done_at IS NULL AND o.updated_at < now() - q.span
      AND NOT EXISTS (SELECT 1 FROM desk_timer_firings f WHERE f.timer = 'order_tick' AND f.entity_id = o.id::text
        AND f.fired_at > now() - q.span)
    ORDER BY o.updated_at LIMIT ${REARM_BATCH_MAX}`.pipe(Effect.map((rows) => rows.map((r) => r.id))))

/** One sweep: Advance to every quiet order; how many. A send that fails is left to the next sweep. */
export const rearmQuietOrders = Effect.gen(function*() {
  const ids = yield* quietOrders
  if (ids.length === 0) return 0
  const client = yield* DeskOrderEntity.client
  yield* Effect.forEach(ids, (id) => client(id).Advance(new AdvanceOrder()).pipe(
    Effect.timeout("30 seconds"),
    Effect.catchAllCause(() => Effect.void)
  ), { concurrency: 8, discard: true })
  yield* Effect.logWarning(`desk: ${ids.length} order(s) had a quiet Tick chain; sent Advance to start it again`)
  return ids.length
})

/** Every node sweeps (a second node finds the same orders and sends Advance twice: one look more). */
export const rearmLayer = Layer.scopedDiscard(Effect.gen(function*() {
  const context = yield* Effect.context<SqlClient.SqlClient | Effect.Effect.Context<typeof DeskOrderEntity.client>>()
  yield* rearmQuietOrders.pipe(
    Effect.provide(context),
    Effect.catchAllCause((c) => Effect.logWarning("desk: the tick re-arm sweep failed; the next one tries again", c)),
    Effect.repeat(Schedule.spaced(REARM_EVERY)),
    Effect.delay(REARM_EVERY),
    Effect.forkScoped
  )
}))
