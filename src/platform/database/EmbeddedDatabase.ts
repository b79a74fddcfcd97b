// The embedded default: when no database URL is configured, use (or start) the Postgres that
// lives under the data dir. A second process on the same data dir (the CLI) attaches to the
// running one instead of starting another. Loaded lazily: a node given a URL never needs it.
// The owner supervises its engine: a dead server is restarted on the same port (the pools
// reconnect by themselves); when that fails, `databaseLost` fails and the node exits non-zero.
import { Data, Deferred, Effect } from "effect"

export class DatabaseLost extends Data.TaggedError("DatabaseLost")<{ readonly message: string }> {}

/**
 * Fails when the embedded database died and could not be restarted. One per process (a process
 * owns at most one embedded database); `cluster/main.ts` races the node against it.
 */
const lost = Deferred.unsafeMake<never, DatabaseLost>(undefined as never)
export const databaseLost: Effect.Effect<never, DatabaseLost> = Deferred.await(lost)

/** After giving up, the node stops gracefully, but exits 1 after this long whatever is left. */
const GIVE_UP_EXIT_MS = 15_000

const log = (line: string) => process.stderr.write(`${new Date().toISOString()} shardline: ${line}\n`)

export const embeddedDatabase = (dataDir: string, engine: "auto" | "postgres" | "pglite" = "auto") =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () =>
        (await import("./embedded/EmbeddedPostgres.ts")).connectOrStartEmbedded({
          dataDir,
          engine,
          supervision: {
            onDown: ({ serverPid }) => log(`embedded Postgres (pid ${serverPid}) died; restarting it`),
            onUp: ({ serverPid, downMs, attempts }) =>
              log(`embedded Postgres is back (pid ${serverPid}) after ${downMs} ms, attempt ${attempts}; pools reconnect`),
            onGiveUp: ({ attempts, lastError }) => {
              const message = `embedded Postgres under ${dataDir} died and ${attempts} restarts failed (last: ${lastError}); exiting with code 1`
              log(message)
              Deferred.unsafeDone(lost, Effect.fail(new DatabaseLost({ message })))
              // The node's finalizers talk to the dead database; do not let them hold the exit.
              setTimeout(() => process.exit(1), GIVE_UP_EXIT_MS).unref()
            }
          }
        }),
      catch: (cause) => new Error(`embedded Postgres failed to start under ${dataDir}: ${String(cause)}`)
    }).pipe(Effect.orDie),
    (db) => Effect.promise(() => db.stop())
  )
