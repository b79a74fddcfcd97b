// Postgres LISTEN for node-local caches: a writer `pg_notify`s in its transaction (delivered at
// commit), every node's listener drops what changed. LISTEN is best effort: the connection can
// drop and take messages with it (pg's listen stream does not even fail then), so every cache
// that relies on it also re-validates in the background.
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Deferred, Duration, Effect, Option, Schedule, type Scope, Stream } from "effect"

/** How long `listen` waits for LISTEN to be in effect before it gives up waiting (ms). */
export const listenReadyTimeoutMs = 5_000
const readyPrefix = "listen-ready:"

/**
 * Runs `onMessage` for every notification on `channel` in a fiber of the current scope, and
 * returns once LISTEN is in effect (a notification it sent itself came back) or after
 * `listenReadyTimeoutMs`. A failed LISTEN is retried every second. Returns false, and listens to
 * nothing, when the SqlClient is not a PgClient.
 */
export const listen = (channel: string, onMessage: (payload: string) => void): Effect.Effect<boolean, never, Scope.Scope | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const client = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(client)) {
      yield* Effect.logWarning(`no PgClient: not listening on ${channel}; caches rely on their re-validation alone`)
      return false
    }
    const pg = client.value
    const ready = yield* Deferred.make<void>()
    const probe = `${readyPrefix}${Math.random().toString(36).slice(2)}`
    yield* pg.listen(channel).pipe(
      Stream.runForEach((payload) =>
        payload.startsWith(readyPrefix)
          ? payload === probe ? Deferred.succeed(ready, undefined) : Effect.void
          : Effect.sync(() => onMessage(payload))),
      Effect.tapErrorCause((cause) => Effect.logWarning(`LISTEN ${channel} failed; retrying`, cause)),
      Effect.retry(Schedule.spaced(Duration.seconds(1))),
      Effect.forkScoped
    )
    // LISTEN runs when the stream starts; notify until our own probe comes back. (PgClient.notify
    // sends `NOTIFY channel, $1`, which Postgres refuses: NOTIFY takes no parameters.)
    const confirmed = yield* sql`SELECT pg_notify(${channel}, ${probe})`.pipe(
      Effect.ignore,
      Effect.zipRight(Deferred.await(ready).pipe(Effect.timeout(Duration.millis(100)))),
      Effect.retry({ while: () => true }),
      Effect.timeout(Duration.millis(listenReadyTimeoutMs)),
      Effect.option
    )
    if (Option.isNone(confirmed)) yield* Effect.logWarning(`LISTEN ${channel} not confirmed within ${listenReadyTimeoutMs} ms`)
    return true
  })
