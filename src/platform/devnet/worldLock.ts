// The session advisory lock under which a starting node makes or re-issues what lives on its
// ledger devnet (the exchange's demo world, the desk's tokens): nodes starting together take
// turns, so property ids are handed out in one order. Its own keyspace ("DEMO"), apart from
// migrations.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const DEMO_WORLD_LOCK = [0x44454d4f, 1] as const

export const withDevnetWorldLock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const conn = yield* Effect.orDie(sql.reserve)
    const [a, b] = DEMO_WORLD_LOCK
    yield* Effect.acquireRelease(
      Effect.orDie(conn.executeRaw(`select pg_advisory_lock(${a}, ${b})`, [])),
      () => conn.executeRaw(`select pg_advisory_unlock(${a}, ${b})`, []).pipe(Effect.ignore)
    )
    return yield* effect
  }))
