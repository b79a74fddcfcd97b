// The shard-lock connection never goes back to the pool. @effect/cluster 0.60's SqlRunnerStorage
// holds every shard of the runner as a session advisory lock on one reserved connection. When a
// lock operation misses its deadline (1 s with our defaults: an event-loop or database stall) it
// rebuilds that connection: the old one's finalizer runs `pg_advisory_unlock_all()` under the same
// 1 s deadline, and an interrupted statement is cancelled with `pg_cancel_backend` (sql-pg's
// cancel). When the unlock misses its deadline too, or the cancel lands on it, the session still
// holds the locks, and sql-pg's `reserve` releases it into the pool as a healthy connection. From
// then on an ordinary pooled session owns those shards: no runner can take them, its own runner
// included, until the pool happens to close that connection (idle for 10 s, which a busy node's
// LIFO pool may never allow). A likely cause of chaos seed 1's failure in CI (session 21's stop: a
// desk order's Tick, the attestor and two posts stalled for 220 s after a partition), not seen
// directly; seed 5 stalled the same way with this in (docs/operations.md, session 22).
//
// So the runner storage gets the node's own client with one change: `reserve` draws from a pool of
// its own whose connections are used once (`maxUses: 1`). A released lock connection is closed,
// never reused, and Postgres drops a closed session's advisory locks with it. Everything else the
// runner storage runs (its runners table, shard-less statements) still uses the node's pool.
//
// Session 23: the pool's two connections could still be lost for good. sql-pg's `reserve` kept no
// canceller, so a lock connection the storage gave up waiting for (its rebuild runs under a 3 s
// deadline) was handed to no one when it came, and never released; after two, every lock
// operation waited for a slot that never came, and the runner held no shard for the rest of the
// run (chaos seed 5). patches/@effect+sql-pg+0.53.0.patch gives `reserve` its canceller.
//
// Session 24: every statement of a lock session goes through one queue that sends a run of shard
// releases as one statement (unlockBatches.ts).
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Layer, Redacted } from "effect"
import * as Reactivity from "@effect/experimental/Reactivity"
import pg from "pg"
import * as UnlockBatches from "./unlockBatches.ts"

/** Connections the lock pool may hold at once: the lock connection and one being replaced. */
export const lockPoolMax = 2
/** How long a lock session's connect may take (pg's default is forever). */
export const lockConnectTimeoutMs = 5_000

/** The node's client, with `reserve` taken from the lock pool (whose connections close on release). */
export const withLockSessions = (main: SqlClient.SqlClient, reserve: SqlClient.SqlClient["reserve"]): SqlClient.SqlClient =>
  new Proxy(main, {
    get: (target, property, receiver) => (property === "reserve" ? reserve : Reflect.get(target, property, receiver))
  })

/** A pg pool for lock sessions only: same server and application name as the node's, every connection closed when released. */
const lockPool = (config: PgClient.PgClient["config"]) =>
  Effect.acquireRelease(
    Effect.sync(() =>
      new pg.Pool({
        connectionString: config.url === undefined ? undefined : Redacted.value(config.url),
        host: config.host,
        port: config.port,
        database: config.database,
        user: config.username,
        password: config.password === undefined ? undefined : Redacted.value(config.password),
        ssl: config.ssl,
        application_name: config.applicationName ?? "@effect/sql-pg",
        max: lockPoolMax,
        maxUses: 1,
        // A connect that hangs gives its slot back: the pool has only two.
        connectionTimeoutMillis: lockConnectTimeoutMs
      })
    ),
    (pool) => Effect.promise(() => pool.end().catch(() => undefined))
  )

/**
 * SqlClient for SqlRunnerStorage: the node's PgClient, its `reserve` from the lock pool. Provide
 * it to SqlRunnerStorage.layer only; the rest of the node keeps the plain client.
 */
export const layer: Layer.Layer<SqlClient.SqlClient, never, PgClient.PgClient> = Layer.scoped(
  SqlClient.SqlClient,
  Effect.gen(function*() {
    const main = yield* PgClient.PgClient
    // Ended with this layer's scope (fromPool only takes the pool it is given).
    const pool = yield* lockPool(main.config)
    const lock = yield* PgClient.fromPool({ acquire: Effect.succeed(pool), applicationName: main.config.applicationName, transformJson: false }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.orDie
    )
    const scope = yield* Effect.scope
    const reserve = Effect.map(logged(lock.reserve, pool), (conn) => UnlockBatches.coalescing(conn, scope))
    return withLockSessions(main, reserve)
  })
)

/** A lock session slower than this to open, or one that failed or was given up, is logged with the pool's state. */
export const slowOpenMs = 1_000

/** What a reader of a lock episode needs: did the lock session open, how long it took, and whether the pool was full. */
const logged = <A, E, R>(reserve: Effect.Effect<A, E, R>, pool: pg.Pool): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const startedMs = Date.now()
    return Effect.onExit(reserve, (exit) => {
      const tookMs = Date.now() - startedMs
      if (Exit.isSuccess(exit) && tookMs <= slowOpenMs) return Effect.void
      const state = `; lock pool: ${pool.totalCount} open, ${pool.idleCount} idle, ${pool.waitingCount} waiting`
      const outcome = Exit.isSuccess(exit) ? "opened" : Exit.isInterrupted(exit) ? "given up" : "failed"
      return Effect.logWarning(`shard locks: a lock session ${outcome} after ${tookMs} ms${state}`)
    })
  })
