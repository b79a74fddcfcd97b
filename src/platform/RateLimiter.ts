// Request weight per bucket (an API key, or an IP for keyless calls) per one-minute window.
//
// The request path never waits for Postgres: `consume` charges a plain Map and answers at once.
// A background fiber reconciles the nodes every `syncIntervalMs` (ticks aligned to the wall
// clock): ONE statement adds each bucket's delta since the last sync to `rate_limit_windows` and
// reads back the cluster total of every bucket this node touched recently, so a node sees what
// the others spent. A node's view of a bucket is therefore the cluster total at its last sync plus
// its own unsynced weight: never more than the truth, and less by what the other nodes spent that
// it has not read yet.
//
// Overshoot bound. Say a bucket's limit is L and each node admits at most `rate` weight per
// second for it. Take the last call admitted anywhere, on node i: i's view was <= L, and the truth
// exceeded i's view only by what the other nodes charged since the syncs that i's last read-back
// included. Each other node j syncs every interval I; i's read at its tick k certainly includes
// j's write at tick k-1 (j's tick-k write only if j's statement ran first), and i decides on that
// read until its tick k+1 completes. So j's unseen weight spans at most 2 intervals plus one sync
// round trip (S), and the weight admitted in a window is at most
//     L + (nodes - 1) * rate * (2 * I + S)
// When j's write at a tick lands before i's read (the common case: the ticks are aligned and the
// statements short), the span is one interval: L + (nodes - 1) * rate * I. The node's own weight
// never adds to the overshoot (it is always in its own view). Refused calls are charged too, which
// only makes the views reach L sooner. test/integration/rate-limiter-sync.test.ts holds two nodes
// to the worst-case bound.
//
// Failure: a sync that fails (Postgres down) puts its deltas back, keeps the local counts and
// retries at the next tick; meanwhile each node limits on its own view (at worst `nodes * L`).
// Memory: at most `trackedBucketsMax` (bucket, window) slots; past it the oldest slot is dropped
// (its unsynced weight with it). Slots of windows that ended are dropped after their last flush.
import { SqlClient } from "@effect/sql"
import { Context, Duration, Effect, Layer } from "effect"

export const windowMs = 60_000
/** How often each node writes its deltas and reads back the cluster totals (ms). */
export const syncIntervalMs = 250
/** A bucket untouched for longer than this is not read back at a sync (ms). */
export const readBackRecentMs = 5_000
/** (bucket, window) slots one node tracks at most. */
export const trackedBucketsMax = 100_000

export interface Usage {
  readonly used: number
  readonly limit: number
  readonly allowed: boolean
  /** Seconds until the window resets (for Retry-After). */
  readonly retryAfterSec: number
}

export interface RateLimiterShape {
  /** Synchronous, no I/O: charges `weight` to `bucket` in the current one-minute window; `used` = this node's
   *  unsynced local count + the cluster total last read back. allowed = used <= limit (a refused call is still charged). */
  readonly consume: (bucket: string, weight: number, limit: number) => Usage
  /** Current usage of a bucket without charging (for headers). */
  readonly peek: (bucket: string, limit: number) => Usage
  /** Deletes windows that can no longer be current. */
  readonly prune: Effect.Effect<number>
}

export class RateLimiter extends Context.Tag("shardline/RateLimiter")<RateLimiter, RateLimiterShape>() {}

// ---- Bookkeeping: no I/O, time passed in, so it is tested without a database or a clock. ----

/** One bucket in one window, as this node knows it. */
export interface Slot {
  readonly bucket: string
  readonly window: number
  /** Charged here since the last sync took the delta. */
  unsynced: number
  /** Taken by the sync that is running; put back if it fails. */
  inFlight: number
  /** The cluster total at the last read-back (this node's synced weight included). */
  cluster: number
  lastChargedAt: number
}

export type Tally = Map<string, Slot>

/** One row of a sync statement. */
export interface SyncRow {
  readonly bucket: string
  readonly window: number
  readonly delta: number
}

export const windowOf = (nowMs: number) => Math.floor(nowMs / windowMs)
export const retryAfterSec = (nowMs: number) => Math.max(1, Math.ceil(((windowOf(nowMs) + 1) * windowMs - nowMs) / 1000))
export const slotKey = (bucket: string, window: number) => `${window}|${bucket}`

export const usageOf = (slot: Slot | undefined, limit: number, nowMs: number): Usage => {
  const used = slot === undefined ? 0 : slot.cluster + slot.inFlight + slot.unsynced
  return { used, limit, allowed: used <= limit, retryAfterSec: retryAfterSec(nowMs) }
}

/** Charges `weight` to the bucket's current slot, making it (and evicting the oldest slot past `max`) if needed. */
export const charge = (tally: Tally, bucket: string, weight: number, limit: number, nowMs: number, max = trackedBucketsMax): Usage => {
  const window = windowOf(nowMs)
  const key = slotKey(bucket, window)
  let slot = tally.get(key)
  if (slot === undefined) {
    // Map order is insertion order, and windows only grow, so the first slot is the oldest.
    while (tally.size >= max) tally.delete(tally.keys().next().value!)
    slot = { bucket, window, unsynced: 0, inFlight: 0, cluster: 0, lastChargedAt: nowMs }
    tally.set(key, slot)
  }
  slot.unsynced += weight
  slot.lastChargedAt = nowMs
  return usageOf(slot, limit, nowMs)
}

export const peekUsage = (tally: Tally, bucket: string, limit: number, nowMs: number): Usage =>
  usageOf(tally.get(slotKey(bucket, windowOf(nowMs))), limit, nowMs)

/**
 * Drops slots of windows that ended. With `keepUnflushed`, a slot of the previous window that
 * still has weight to write is kept for one more sync (older ones are dropped regardless).
 */
export const dropEnded = (tally: Tally, nowMs: number, keepUnflushed = true): number => {
  const current = windowOf(nowMs)
  let dropped = 0
  for (const [key, slot] of tally) {
    if (slot.window >= current) continue
    if (!keepUnflushed || slot.window < current - 1 || (slot.unsynced === 0 && slot.inFlight === 0)) {
      tally.delete(key)
      dropped++
    }
  }
  return dropped
}

/**
 * Starts a sync: moves each slot's unsynced weight to in-flight and returns the rows to write:
 * every slot with a delta, and every slot of the current window charged within `recentMs`
 * (delta 0: only its cluster total is read back).
 */
export const takeDeltas = (tally: Tally, nowMs: number, recentMs = readBackRecentMs): Array<SyncRow> => {
  dropEnded(tally, nowMs)
  const current = windowOf(nowMs)
  const rows: Array<SyncRow> = []
  for (const slot of tally.values()) {
    const delta = slot.unsynced
    if (delta === 0 && !(slot.window === current && nowMs - slot.lastChargedAt <= recentMs)) continue
    slot.unsynced = 0
    slot.inFlight += delta
    rows.push({ bucket: slot.bucket, window: slot.window, delta })
  }
  return rows
}

/**
 * A sync committed: its deltas are now in the cluster totals read back. A row that came back with
 * no total has no row in Postgres at all, so its total is 0. Weight charged while the statement
 * ran stays unsynced for the next one.
 */
export const settle = (tally: Tally, rows: ReadonlyArray<SyncRow>, totals: ReadonlyMap<string, number>) => {
  for (const row of rows) {
    const slot = tally.get(slotKey(row.bucket, row.window))
    if (slot === undefined) continue // evicted meanwhile
    // max(0): the slot may have been evicted and made again while the statement ran.
    slot.inFlight = Math.max(0, slot.inFlight - row.delta)
    slot.cluster = totals.get(slotKey(row.bucket, row.window)) ?? 0
  }
}

/** A sync failed: its deltas go back to unsynced, to be written by the next one. Nothing is lost. */
export const restore = (tally: Tally, rows: ReadonlyArray<SyncRow>) => {
  for (const row of rows) {
    const slot = tally.get(slotKey(row.bucket, row.window))
    if (slot === undefined) continue
    slot.inFlight = Math.max(0, slot.inFlight - row.delta)
    slot.unsynced += row.delta
  }
}

// ---- Layers ----

const local = (tally: Tally, prune: Effect.Effect<number>): RateLimiterShape => ({
  consume: (bucket, weight, limit) => charge(tally, bucket, weight, limit, Date.now()),
  peek: (bucket, limit) => peekUsage(tally, bucket, limit, Date.now()),
  prune
})

/** Node-local accounting only: single-process tests and benchmarks. */
export const layerLocal: Layer.Layer<RateLimiter> = Layer.sync(RateLimiter, () => {
  const tally: Tally = new Map()
  return RateLimiter.of(local(tally, Effect.sync(() => dropEnded(tally, Date.now(), false))))
})

/** The one statement of a sync: add the deltas, read back every listed bucket's total. */
const syncStatement = (sql: SqlClient.SqlClient, rows: ReadonlyArray<SyncRow>) =>
  sql<{ bucket: string; window_start: string; used: number }>`
    WITH input AS (
      SELECT * FROM unnest(${rows.map((r) => r.bucket)}::text[], ${rows.map((r) => r.window)}::bigint[],
                           ${rows.map((r) => r.delta)}::int[]) AS t(bucket, window_start, delta)
    ), added AS (
      INSERT INTO rate_limit_windows (bucket, window_start, used)
      SELECT bucket, window_start, delta FROM input WHERE delta > 0
      ON CONFLICT (bucket, window_start) DO UPDATE SET used = rate_limit_windows.used + EXCLUDED.used
      RETURNING bucket, window_start, used
    )
    SELECT bucket, window_start::text, used FROM added
    UNION ALL
    SELECT w.bucket, w.window_start::text, w.used FROM rate_limit_windows w
      JOIN input i ON i.bucket = w.bucket AND i.window_start = w.window_start AND i.delta = 0`

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const tally: Tally = new Map()
  let failing = false

  const sync = Effect.gen(function*() {
    const rows = takeDeltas(tally, Date.now())
    if (rows.length === 0) return
    // Soft counters: losing the last few hundred ms of weight in a crash is fine, a WAL flush per tick is not.
    yield* Effect.zipRight(sql`SET LOCAL synchronous_commit = off`, syncStatement(sql, rows)).pipe(
      sql.withTransaction,
      Effect.matchCauseEffect({
        onFailure: (cause) =>
          Effect.suspend(() => {
            restore(tally, rows)
            if (failing) return Effect.void
            failing = true
            return Effect.logWarning("rate-limit sync failed; limiting on local counts until it recovers", cause)
          }),
        onSuccess: (result) =>
          Effect.suspend(() => {
            settle(tally, rows, new Map(result.map((r) => [slotKey(r.bucket, Number(r.window_start)), Number(r.used)])))
            if (!failing) return Effect.void
            failing = false
            return Effect.logInfo("rate-limit sync recovered")
          })
      })
    )
  })

  // Ticks on wall-clock multiples of the interval, so the nodes' syncs line up (see the bound above).
  const untilTick = Effect.suspend(() => Effect.sleep(Duration.millis(syncIntervalMs - (Date.now() % syncIntervalMs))))
  yield* Effect.zipRight(untilTick, sync).pipe(Effect.forever, Effect.forkScoped)
  // A graceful stop writes what is left.
  yield* Effect.addFinalizer(() => sync.pipe(Effect.timeout(Duration.seconds(2)), Effect.ignore))

  // Suspended so the cut-off is computed per run, not once when the layer is built.
  const prune = Effect.suspend(() =>
    sql<{ n: number }>`WITH d AS (DELETE FROM rate_limit_windows WHERE window_start < ${windowOf(Date.now()) - 1} RETURNING 1)
      SELECT count(*)::int AS n FROM d`
  ).pipe(Effect.map((r) => Number(r[0]?.n ?? 0)), Effect.orDie)
  return RateLimiter.of(local(tally, prune))
})

/** Local accounting reconciled through Postgres by a background fiber. */
export const layer: Layer.Layer<RateLimiter, never, SqlClient.SqlClient> = Layer.scoped(RateLimiter, make)
