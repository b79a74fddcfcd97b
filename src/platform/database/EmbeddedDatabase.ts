// The embedded default: when no database URL is configured, use (or start) the Postgres that
// lives under the data dir. A second process on the same data dir (the CLI) attaches to the
// running one instead of starting another. Loaded lazily: a node given a URL never needs it.
import { Effect } from "effect"

export const embeddedDatabase = (dataDir: string, engine: "auto" | "postgres" | "pglite" = "auto") =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => (await import("./embedded/EmbeddedPostgres.ts")).connectOrStartEmbedded({ dataDir, engine }),
      catch: (cause) => new Error(`embedded Postgres failed to start under ${dataDir}: ${String(cause)}`)
    }).pipe(Effect.orDie),
    (db) => Effect.promise(() => db.stop())
  )
