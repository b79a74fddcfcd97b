// The system of record: one PgClient per process, migrations by the @effect/sql migrator.
// With SHARDLINE_DATABASE_URL unset the embedded Postgres under the data dir is used.
import { ShardingConfig, SqlMessageStorage } from "@effect/cluster"
import { Migrator, SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../Config.ts"
import { embeddedDatabase } from "./EmbeddedDatabase.ts"
import m0001 from "./migrations/0001_accounts.ts"
import m0002 from "./migrations/0002_authorizations.ts"
import m0003 from "./migrations/0003_platform.ts"
import m0004 from "./migrations/0004_devnet.ts"
import m0005 from "./migrations/0005_api_key_revocations.ts"
import m0006 from "./migrations/0006_key_epochs.ts"
import m0007 from "./migrations/0007_desk_social_auth.ts"
import m0008 from "./migrations/0008_exchange_trading.ts"
import m0010 from "./migrations/0010_settlement.ts"
import m0011 from "./migrations/0011_settlement_legs_from_height.ts"
import m0012 from "./migrations/0012_settlement_txid_unique.ts"
import m0013 from "./migrations/0013_social_accounts.ts"
import m0014 from "./migrations/0014_wallet_identity.ts"
import m0015 from "./migrations/0015_social_content.ts"
import m0016 from "./migrations/0016_market_data.ts"
import m0017 from "./migrations/0017_desk_ledger.ts"
import m0018 from "./migrations/0018_desk_orders.ts"
import m0019 from "./migrations/0019_desk_cashout.ts"
import m0021 from "./migrations/0021_desk_refund_legs.ts"
import m0022 from "./migrations/0022_social_stamping_succession.ts"
import m0023 from "./migrations/0023_member_signed_stamps.ts"
import m0024 from "./migrations/0024_social_owed_stamps.ts"
import m0031 from "./migrations/0031_web_sessions.ts"

export const migrations = {
  "0001_accounts": m0001,
  "0002_authorizations": m0002,
  "0003_platform": m0003,
  "0004_devnet": m0004,
  "0005_api_key_revocations": m0005,
  "0006_key_epochs": m0006,
  "0007_desk_social_auth": m0007,
  "0008_exchange_trading": m0008,
  "0010_settlement": m0010,
  "0011_settlement_legs_from_height": m0011,
  "0012_settlement_txid_unique": m0012,
  "0013_social_accounts": m0013,
  "0014_wallet_identity": m0014,
  "0015_social_content": m0015,
  "0016_market_data": m0016,
  "0017_desk_ledger": m0017,
  "0018_desk_orders": m0018,
  "0019_desk_cashout": m0019,
  "0021_desk_refund_legs": m0021,
  "0022_social_stamping_succession": m0022,
  "0023_member_signed_stamps": m0023,
  "0024_social_owed_stamps": m0024,
  "0031_web_sessions": m0031
}

const runMigrator = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: "shardline_migrations"
})

/** The session advisory lock every migrator takes (two-int form: its own keyspace, apart from
 * the cluster's single-bigint shard locks). 0x53484d49 = "SHMI". */
export const MIGRATION_LOCK = [0x53484d49, 1] as const

/**
 * Runs pending migrations under one session advisory lock, so concurrent nodes run them one
 * after another: the migrator alone is not safe there (its CREATE TABLE of shardline_migrations
 * runs outside its table lock, and a node that finds the table locked goes on before the
 * migrations are in). The lock is held by a reserved connection; the migrator uses the pool.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if (sql.onDialectOrElse({ pg: () => false, orElse: () => true })) return yield* runMigrator
  return yield* Effect.scoped(Effect.gen(function*() {
    const conn = yield* sql.reserve
    const [a, b] = MIGRATION_LOCK
    yield* Effect.acquireRelease(
      conn.executeRaw(`select pg_advisory_lock(${a}, ${b})`, []),
      () => conn.executeRaw(`select pg_advisory_unlock(${a}, ${b})`, []).pipe(Effect.ignore)
    )
    const applied = yield* runMigrator
    // The cluster's message storage runs its own migrations when its layer is built, with the same
    // unlocked CREATE TABLE; processes starting together on a fresh database (nodes, CLI calls)
    // raced there ("relation cluster_migrations already exists"). Built once here, under the lock,
    // its tables exist before any process builds the real layer. (Not the runner storage: building
    // and releasing it here broke the embedded default's shard acquisition; not investigated further.)
    yield* Layer.build(SqlMessageStorage.layer.pipe(Layer.provide(ShardingConfig.layerDefaults))).pipe(Effect.scoped)
    return applied
  }))
})

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

/** PgClient plus migrations applied: what every process needs before serving. */
export const databaseLayer = (options: { readonly applicationName: string; readonly url?: Redacted.Redacted }) =>
  Layer.effectDiscard(migrate).pipe(Layer.provideMerge(pgLayer(options)))

export type Sql = SqlClient.SqlClient
