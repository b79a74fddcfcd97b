// Request weight per bucket (an API key, or an IP for keyless calls) per one-minute window,
// counted in Postgres so the limit holds exactly across every node.
//
// Group commit: requests queue their weight; one fiber writes everything queued since its last
// write in a single upsert, and each request learns its exact position in the window's running
// total. At low load a request waits for one round trip, as before; under load one statement
// serves many requests instead of one each.
import { SqlClient } from "@effect/sql"
import { Cause, Chunk, Context, Deferred, Effect, Layer, Queue } from "effect"

export const windowMs = 60_000
/** Requests written per statement at most; the rest wait for the next one. */
export const batchMax = 512
/** Requests waiting for a write at most; past it callers wait for room (backpressure). */
export const queueMax = 10_000

export interface Usage {
  readonly used: number
  readonly limit: number
  readonly allowed: boolean
  /** Seconds until the window resets (for Retry-After). */
  readonly retryAfterSec: number
}

export interface RateLimiterShape {
  readonly consume: (bucket: string, weight: number, limit: number) => Effect.Effect<Usage>
  /** Deletes windows that can no longer be current. */
  readonly prune: Effect.Effect<number>
}

export class RateLimiter extends Context.Tag("shardline/RateLimiter")<RateLimiter, RateLimiterShape>() {}

interface Pending {
  readonly bucket: string
  readonly window: number
  readonly weight: number
  readonly limit: number
  readonly at: number
  readonly done: Deferred.Deferred<Usage>
}

/** Pure: each request's running total, given the total each (bucket, window) reached. */
export const positions = (batch: ReadonlyArray<{ bucket: string; window: number; weight: number }>, totals: ReadonlyMap<string, number>) => {
  const sums = new Map<string, number>()
  for (const p of batch) sums.set(`${p.window}|${p.bucket}`, (sums.get(`${p.window}|${p.bucket}`) ?? 0) + p.weight)
  const running = new Map<string, number>()
  for (const [k, sum] of sums) running.set(k, (totals.get(k) ?? sum) - sum)
  return batch.map((p) => {
    const k = `${p.window}|${p.bucket}`
    const used = running.get(k)! + p.weight
    running.set(k, used)
    return used
  })
}

export const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const queue = yield* Queue.bounded<Pending>(queueMax)

  const write = (batch: ReadonlyArray<Pending>) =>
    Effect.gen(function*() {
      const sums = new Map<string, { bucket: string; window: number; weight: number }>()
      for (const p of batch) {
        const k = `${p.window}|${p.bucket}`
        const s = sums.get(k)
        if (s) s.weight += p.weight
        else sums.set(k, { bucket: p.bucket, window: p.window, weight: p.weight })
      }
      const rows = [...sums.values()]
      const result = yield* sql<{ bucket: string; window_start: string; used: number }>`
        INSERT INTO rate_limit_windows (bucket, window_start, used)
        SELECT * FROM unnest(${rows.map((r) => r.bucket)}::text[], ${rows.map((r) => r.window)}::bigint[],
                             ${rows.map((r) => r.weight)}::int[])
        ON CONFLICT (bucket, window_start) DO UPDATE SET used = rate_limit_windows.used + EXCLUDED.used
        RETURNING bucket, window_start::text, used`
      const totals = new Map(result.map((r) => [`${r.window_start}|${r.bucket}`, Number(r.used)]))
      const used = positions(batch, totals)
      yield* Effect.forEach(batch, (p, i) =>
        Deferred.succeed(p.done, {
          used: used[i]!,
          limit: p.limit,
          allowed: used[i]! <= p.limit,
          retryAfterSec: Math.max(1, Math.ceil(((p.window + 1) * windowMs - p.at) / 1000))
        }), { discard: true })
    }).pipe(
      // A failed write must not hang its callers: they see it as a defect (503 at the edge).
      Effect.catchAllCause((cause) => Effect.forEach(batch, (p) => Deferred.die(p.done, Cause.squash(cause)), { discard: true }))
    )

  yield* Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    const rest = yield* Queue.takeUpTo(queue, batchMax - 1)
    yield* write([first, ...Chunk.toReadonlyArray(rest)])
  }).pipe(Effect.forever, Effect.forkScoped)

  const consume: RateLimiterShape["consume"] = (bucket, weight, limit) =>
    Effect.gen(function*() {
      const at = Date.now()
      const done = yield* Deferred.make<Usage>()
      yield* Queue.offer(queue, { bucket, window: Math.floor(at / windowMs), weight, limit, at, done })
      return yield* Deferred.await(done)
    })

  const prune = sql<{ n: number }>`WITH d AS (DELETE FROM rate_limit_windows WHERE window_start < ${Math.floor(Date.now() / windowMs) - 1} RETURNING 1)
    SELECT count(*)::int AS n FROM d`.pipe(Effect.map((r) => Number(r[0]?.n ?? 0)), Effect.orDie)
  return RateLimiter.of({ consume, prune })
})

export const layer = Layer.scoped(RateLimiter, make)
