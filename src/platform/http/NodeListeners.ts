// Which listeners the running nodes serve, and at which public URL (table node_listeners,
// migration 0042). A node writes a row per listener once it listens, beats it every
// `listenerHeartbeatMs` and deletes it when the listener stops. The CLI attaches to the running
// system by its database, not by a port: it prints the URLs a running node uses (a link token's
// QR, an embed) from here, and its own settings only when no node is running. Service names are
// the listeners' own ("exchange", "desk", "social"); the platform knows none of them.
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Option, Schedule } from "effect"
import { NodeIdentity } from "../NodeIdentity.ts"

/** How often a running node says its listeners are still there, ms. */
export const listenerHeartbeatMs = 10_000
/** A row whose last beat is older than this is a node that died without deleting it, ms. */
export const listenerStaleMs = 3 * listenerHeartbeatMs
/** How long a starting or stopping listener tries to write or delete its row, ms. */
const listenerWriteTimeoutMs = 2_000

/** Announces a listening service with its public URL while the scope lasts (beats, then deletes the row). */
export const announceListener = (service: string, publicUrl: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const node = (yield* NodeIdentity).name
    const write = (restart: boolean) => sql`INSERT INTO node_listeners (service, node, public_url) VALUES (${service}, ${node}, ${publicUrl})
      ON CONFLICT (service, node) DO UPDATE SET public_url = EXCLUDED.public_url, heartbeat_at = now()
        ${restart ? sql`, started_at = now()` : sql``}`
    const beat = write(false)
    // A node is listening whether or not the row could be written; the next beat writes it.
    yield* write(true).pipe(Effect.timeout(Duration.millis(listenerWriteTimeoutMs)),
      Effect.catchAllCause((c) => Effect.logWarning(`${service}: listener row not written`, c)))
    yield* beat.pipe(
      Effect.catchAllCause((c) => Effect.logWarning(`${service}: listener heartbeat failed`, c)),
      Effect.repeat(Schedule.spaced(Duration.millis(listenerHeartbeatMs))),
      Effect.delay(Duration.millis(listenerHeartbeatMs)),
      Effect.forkScoped
    )
    // Bounded: a stop never waits on a database that is gone (the row then ages out, listenerStaleMs).
    yield* Effect.addFinalizer(() => sql`DELETE FROM node_listeners WHERE service = ${service} AND node = ${node}`.pipe(
      Effect.timeout(Duration.millis(listenerWriteTimeoutMs)), Effect.ignore))
  })

/** The public URL a running node serves `service` at (the freshest beat), if one runs. */
export const runningListenerUrl = (service: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ public_url: string }>`SELECT public_url FROM node_listeners
      WHERE service = ${service} AND heartbeat_at > now() - make_interval(secs => ${listenerStaleMs / 1000})
      ORDER BY heartbeat_at DESC, node LIMIT 1`, (rows) => Option.fromNullable(rows[0]?.public_url)))

/** The base URL to print for `service`: a running node's, else `own` (this process's settings). */
export const runningBaseUrl = <E, R>(service: string, own: Effect.Effect<string, E, R>) =>
  Effect.flatMap(runningListenerUrl(service), Option.match({ onNone: () => own, onSome: Effect.succeed }))
