// The system of record: one PgClient per process, migrations by the @effect/sql migrator.
// With SHARDLINE_DATABASE_URL unset the embedded Postgres under the data dir is used.
import { ShardingConfig, SqlMessageStorage } from "@effect/cluster"
import { Migrator, SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { embeddedDatabase } from "./EmbeddedDatabase.ts"
import type { Migrations } from "./Migrations.ts"

const runMigrator = (migrations: Migrations) => Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: "shardline_migrations"
})

/** The session advisory lock every migrator takes (two-int form: its own keyspace, apart from
 * the cluster's single-bigint shard locks). 0x53484d49 = "SHMI". */
export const MIGRATION_LOCK = [0x53484d49, 1] as const

/**
 * Runs the pending ones of `migrations` (every service's and the platform's: src/migrations.ts)
 * under one session advisory lock, so concurrent nodes run them one
 * after another: the migrator alone is not safe there (its CREATE TABLE of shardline_migrations
 * runs outside its table lock, and a node that finds the table locked goes on before the
 * migrations are in). The lock is held by a reserved connection; the migrator uses the pool.
 */
export const migrate = (migrations: Migrations) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (sql.onDialectOrElse({ pg: () => false, orElse: () => true })) return yield* runMigrator(migrations)
  return yield* Effect.scoped(Effect.gen(function*() {
    const conn = yield* sql.reserve
    const [a, b] = MIGRATION_LOCK
    yield* Effect.acquireRelease(
      conn.executeRaw(`select pg_advisory_lock(${a}, ${b})`, []),
      () => conn.executeRaw(`select pg_advisory_unlock(${a}, ${b})`, []).pipe(Effect.ignore)
    )
    const applied = yield* runMigrator(migrations)
    // The cluster's message storage runs its own migrations when its layer is built, with the same
    // unlocked CREATE TABLE; processes starting together on a fresh database (nodes, CLI calls)
    // raced there ("relation cluster_migrations already exists"). Built once here, under the lock,
    // its tables exist before any process builds the real layer. (Not the runner storage: building
    // and releasing it here broke the embedded default's shard acquisition; not investigated further.)
    yield* Layer.build(SqlMessageStorage.layer.pipe(Layer.provide(ShardingConfig.layerDefaults))).pipe(Effect.scoped)
    // The runner storage's table, likewise: a CLI call's storage client and a starting node both
    // ran its CREATE TABLE IF NOT EXISTS and one failed with `type "cluster_runners" already
    // exists`. Its statement as SqlRunnerStorage (@effect/cluster 0.60) writes it for Postgres,
    // run here under the lock, so the layer's own later CREATE finds the table and does nothing.
    yield* conn.executeRaw(clusterRunnersDdl, [])
    return applied
  }))
})

/** SqlRunnerStorage's Postgres DDL for its runners table, verbatim (see `migrate`). */
const clusterRunnersDdl = `CREATE TABLE IF NOT EXISTS cluster_runners (
  machine_id SERIAL PRIMARY KEY,
  address VARCHAR(255) NOT NULL,
  runner TEXT NOT NULL,
  healthy BOOLEAN NOT NULL DEFAULT TRUE,
  last_heartbeat TIMESTAMP NOT NULL DEFAULT NOW(),
  UNIQUE(address)
)`

/** Resolves the database URL: the configured server, or the embedded one under dataDir. */
export const databaseUrl = Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) return config.databaseUrl.value
  const embedded = yield* embeddedDatabase(config.dataDir, config.embeddedEngine)
  return Redacted.make(embedded.url)
})

/** PgClient for this process; applicationName names the node so ops can map pg_locks to runners. */
export const pgLayer = (options: { readonly applicationName: string; readonly url?: Redacted.Redacted }) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const url = options.url ?? (yield* databaseUrl)
    return PgClient.layer({
      url,
      applicationName: options.applicationName,
      maxConnections: config.poolSize,
      // pg returns BIGINT/NUMERIC as strings; keep them exact and convert at the edges.
      transformJson: false
    })
  }))

/** PgClient plus `migrations` applied: what every process needs before serving. */
export const databaseLayer = (
  options: { readonly applicationName: string; readonly url?: Redacted.Redacted; readonly migrations: Migrations }
) => Layer.effectDiscard(migrate(options.migrations)).pipe(Layer.provideMerge(pgLayer(options)))

export type Sql = SqlClient.SqlClient
