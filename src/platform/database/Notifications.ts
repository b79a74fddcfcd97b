// Postgres LISTEN for node-local caches: a writer `pg_notify`s in its transaction (delivered at
// commit), every node's listener drops what changed. LISTEN is best effort: while its connection
// is down, notifications are lost, so every cache that relies on it also re-validates in the
// background, and is told when LISTEN is back after a gap (`onResubscribed`) so it can drop what
// it may have missed.
//
// The node keeps one connection of its own for every channel (not @effect/sql-pg's
// `PgClient.listen`: its connection swallows errors, so once the server terminated it, as any
// restart or failover of Postgres does, the stream neither fails nor listens again, and the cache
// stayed stale until re-validation). One, not one per channel: five caches listened on five
// connections, a third of a node's connections, and a three-node test ran Postgres out of them.
import { PgClient } from "@effect/sql-pg"
import { Deferred, Duration, Effect, Fiber, FiberId, Option, Redacted, Schedule, type Scope } from "effect"
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

interface Subscriber {
  readonly channel: string
  readonly onMessage: (payload: string) => void
  readonly onResubscribed: () => void
}

/**
 * One LISTEN connection per PgClient (per node) for every channel: subscribers come and go; the
 * connection LISTENs on each channel subscribed when it connects, and on a channel added later
 * at once. It runs while anyone listens and closes with the last subscriber.
 */
interface Hub {
  readonly subscribers: Set<Subscriber>
  /** Channels LISTENed on the current connection. */
  readonly listening: Set<string>
  connection: pg.Client | undefined
  /** Resolves when the next connection is up with every channel LISTENed. */
  ready: Deferred.Deferred<void>
  fiber: Fiber.RuntimeFiber<unknown> | undefined
}

const hubs = new WeakMap<PgClient.PgClient, Hub>()

const runHub = (hub: Hub, options: pg.ClientConfig) => {
  let sessions = 0
  let warned = false // one warning per outage, not one per attempt
  /** One connection: connect, LISTEN every channel, deliver until it is lost; fails with why. Closed on exit. */
  const session = Effect.scoped(Effect.gen(function*() {
    const connection = yield* Effect.acquireRelease(
      Effect.sync(() => new pg.Client(options)),
      (c) => Effect.sync(() => { hub.connection = undefined; hub.listening.clear() }).pipe(
        Effect.zipRight(Effect.promise(() => c.end().catch(() => undefined)).pipe(Effect.timeoutOption(1_000))))
    )
    const lost = yield* Deferred.make<never, Error>()
    connection.on("error", (e) => Deferred.unsafeDone(lost, Effect.fail(e)))
    connection.on("end", () => Deferred.unsafeDone(lost, Effect.fail(new Error("connection ended"))))
    connection.on("notification", (m) => {
      if (m.payload === undefined) return
      for (const s of hub.subscribers) if (s.channel === m.channel) s.onMessage(m.payload)
    })
    yield* Effect.tryPromise(() => connection.connect())
    // LISTEN on every subscribed channel, including ones subscribed while this ran; the last check
    // and the hand-over below happen in one synchronous step, so a subscriber that comes later
    // sees the connection and LISTENs on its own channel (in `listen`).
    for (;;) {
      const missing = [...new Set([...hub.subscribers].map((s) => s.channel))].filter((c) => !hub.listening.has(c))
      if (missing.length === 0) break
      for (const c of missing) {
        yield* Effect.tryPromise(() => connection.query(`LISTEN ${pg.escapeIdentifier(c)}`))
        hub.listening.add(c)
      }
    }
    const channels = [...hub.listening]
    hub.connection = connection
    warned = false
    if (sessions++ > 0) {
      for (const s of hub.subscribers) s.onResubscribed()
      yield* Effect.logInfo(`LISTEN ${channels.join(", ")} is back`)
    }
    yield* Deferred.succeed(hub.ready, undefined)
    return yield* Deferred.await(lost)
  }))
  return session.pipe(
    Effect.catchAllCause((cause) =>
      Effect.gen(function*() {
        // Waiters from now on wait for the next connection; those already waiting keep theirs.
        if (yield* Deferred.isDone(hub.ready)) hub.ready = yield* Deferred.make<void>()
        if (warned) return
        warned = true
        yield* Effect.logWarning(`LISTEN lost its connection; connecting again every ${listenRetryMs} ms`, cause)
      })),
    Effect.repeat(Schedule.spaced(Duration.millis(listenRetryMs)))
  )
}

/**
 * Runs `onMessage` for every notification on `channel` while the current scope lasts, and
 * returns once LISTEN is in effect or after `listenReadyTimeoutMs`. All channels of one PgClient
 * share one connection. When it is lost (an error, the server ended it) it connects and LISTENs
 * again every `listenRetryMs` until it succeeds, then calls every `onResubscribed`: notifications
 * sent in between were lost. Returns false, and listens to nothing, when the SqlClient is not a
 * PgClient.
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
    let hub = hubs.get(client.value)
    if (hub === undefined) {
      hub = { subscribers: new Set(), listening: new Set(), connection: undefined, ready: yield* Deferred.make<void>(), fiber: undefined }
      hubs.set(client.value, hub)
    }
    const h = hub
    const subscriber: Subscriber = { channel, onMessage, onResubscribed }
    yield* Effect.acquireRelease(
      Effect.sync(() => h.subscribers.add(subscriber)),
      () =>
        Effect.suspend(() => {
          h.subscribers.delete(subscriber)
          if (h.subscribers.size > 0 || h.fiber === undefined) return Effect.void
          const fiber = h.fiber
          h.fiber = undefined
          h.ready = Deferred.unsafeMake(FiberId.none)
          return Fiber.interrupt(fiber)
        })
    )
    if (h.fiber === undefined) {
      h.fiber = yield* Effect.forkDaemon(runHub(h, clientOptions(client.value.config)))
    } else if (h.connection !== undefined && !h.listening.has(channel)) {
      // A channel added to a connection that is up: LISTEN on it now (on failure the connection is
      // being lost anyway, and the next one LISTENs on every channel).
      const connection = h.connection
      yield* Effect.tryPromise(() => connection.query(`LISTEN ${pg.escapeIdentifier(channel)}`)).pipe(
        Effect.tap(() => Effect.sync(() => h.listening.add(channel))),
        Effect.ignore
      )
    }
    const confirmed = yield* Effect.suspend(() => Deferred.await(h.ready)).pipe(Effect.timeout(Duration.millis(listenReadyTimeoutMs)), Effect.option)
    if (Option.isNone(confirmed)) yield* Effect.logWarning(`LISTEN ${channel} not in effect within ${listenReadyTimeoutMs} ms`)
    return true
  })
