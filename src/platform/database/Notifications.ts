// Postgres LISTEN for node-local caches: a writer `pg_notify`s in its transaction (delivered at
// commit), every node's listener drops what changed. LISTEN is best effort: while its connection
// is down, notifications are lost, so every cache that relies on it also re-validates in the
// background, and is told when LISTEN is back after a gap (`onResubscribed`) so it can drop what
// it may have missed.
//
// Each `listen` keeps its own connection (not @effect/sql-pg's `PgClient.listen`: its connection
// swallows errors, so once the server terminated it, as any restart or failover of Postgres does,
// the stream neither fails nor listens again, and the cache stayed stale until re-validation).
import { PgClient } from "@effect/sql-pg"
import { Deferred, Duration, Effect, Option, Redacted, Schedule, type Scope } from "effect"
import pg from "pg"

/** How long `listen` waits for LISTEN to be in effect before it gives up waiting (ms). */
export const listenReadyTimeoutMs = 5_000
/** Pause between attempts to connect and LISTEN again after the connection was lost (ms). */
export const listenRetryMs = 1_000

/** The options of a plain `pg.Client` to the same server as the PgClient, with TCP keepalive (a
 * silently dead peer is found by the OS instead of never). */
const clientOptions = (config: PgClient.PgClientConfig): pg.ClientConfig => ({
  ...(config.url !== undefined ? { connectionString: Redacted.value(config.url) } : {}),
  ...(config.host !== undefined ? { host: config.host } : {}),
  ...(config.port !== undefined ? { port: config.port } : {}),
  ...(config.database !== undefined ? { database: config.database } : {}),
  ...(config.username !== undefined ? { user: config.username } : {}),
  ...(config.password !== undefined ? { password: Redacted.value(config.password) } : {}),
  ...(config.ssl !== undefined ? { ssl: config.ssl } : {}),
  application_name: config.applicationName ?? "shardline",
  connectionTimeoutMillis: listenReadyTimeoutMs,
  keepAlive: true,
  keepAliveInitialDelayMillis: 10_000
})

/**
 * Runs `onMessage` for every notification on `channel` in a fiber of the current scope, and
 * returns once LISTEN is in effect or after `listenReadyTimeoutMs`. When the connection is lost
 * (an error, the server ended it) it connects and LISTENs again every `listenRetryMs` until it
 * succeeds, then calls `onResubscribed`: notifications sent in between were lost. Returns false,
 * and listens to nothing, when the SqlClient is not a PgClient.
 */
export const listen = (
  channel: string,
  onMessage: (payload: string) => void,
  onResubscribed: () => void = () => {}
): Effect.Effect<boolean, never, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* Effect.serviceOption(PgClient.PgClient)
    if (Option.isNone(client)) {
      yield* Effect.logWarning(`no PgClient: not listening on ${channel}; caches rely on their re-validation alone`)
      return false
    }
    const options = clientOptions(client.value.config)
    const ready = yield* Deferred.make<void>()
    let sessions = 0
    let warned = false // one warning per outage, not one per attempt

    /** One connection: connect, LISTEN, deliver until it is lost; fails with why. Closed on exit. */
    const session = Effect.scoped(Effect.gen(function*() {
      const connection = yield* Effect.acquireRelease(
        Effect.sync(() => new pg.Client(options)),
        (c) => Effect.promise(() => c.end().catch(() => undefined)).pipe(Effect.timeoutOption(1_000))
      )
      const lost = yield* Deferred.make<never, Error>()
      connection.on("error", (e) => Deferred.unsafeDone(lost, Effect.fail(e)))
      connection.on("end", () => Deferred.unsafeDone(lost, Effect.fail(new Error("connection ended"))))
      connection.on("notification", (m) => {
        if (m.channel === channel && m.payload !== undefined) onMessage(m.payload)
      })
      yield* Effect.tryPromise(async () => {
        await connection.connect()
        await connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`)
      })
      warned = false
      if (sessions++ > 0) {
        onResubscribed()
        yield* Effect.logInfo(`LISTEN ${channel} is back`)
      }
      yield* Deferred.succeed(ready, undefined)
      return yield* Deferred.await(lost)
    }))

    yield* session.pipe(
      Effect.catchAllCause((cause) =>
        Effect.suspend(() => {
          if (warned) return Effect.void
          warned = true
          return Effect.logWarning(`LISTEN ${channel} lost its connection; connecting again every ${listenRetryMs} ms`, cause)
        })),
      Effect.repeat(Schedule.spaced(Duration.millis(listenRetryMs))),
      Effect.forkScoped
    )
    const confirmed = yield* Deferred.await(ready).pipe(Effect.timeout(Duration.millis(listenReadyTimeoutMs)), Effect.option)
    if (Option.isNone(confirmed)) yield* Effect.logWarning(`LISTEN ${channel} not in effect within ${listenReadyTimeoutMs} ms`)
    return true
  })
