// Issue 8, item 4: nodes starting together on a fresh database all migrate it. Without the
// advisory lock around the migrator, one of them failed with "relation shardline_migrations
// already exists" (1 start in 4), or went on before the migrations were in. Then the cluster's
// runner storage is built by all of them at once, as nodes and CLI calls do right after migrating:
// its own CREATE TABLE IF NOT EXISTS raced (`type "cluster_runners" already exists`, a CI failure)
// until migrate created that table under the lock.
import { ShardingConfig, SqlRunnerStorage } from "@effect/cluster"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { migrations } from "../../src/migrations.ts"
import { migrate } from "../../src/platform/database/Database.ts"

const RUNS = 4
const ROUNDS = 5
const dbs: Array<TestDatabase> = []
afterAll(async () => {
  for (const db of dbs) await db.drop()
})

const ownPool = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 3, transformJson: false })
/** "ok", or what failed, as text. */
const outcome = <E>(effect: Effect.Effect<unknown, E>) =>
  effect.pipe(
    Effect.either,
    Effect.map((r) => (r._tag === "Right" ? "ok" : String(r.left))),
    Effect.catchAllDefect((d) => Effect.succeed(`defect: ${String(d)}`))
  )
/** One process's migrate: its own pool, as a node or the CLI has. */
const migrateWithOwnPool = (url: string) => outcome(migrate(migrations).pipe(Effect.provide(ownPool(url))))

describe("migrate", () => {
  it(`${RUNS} concurrent runs on a fresh database all succeed, ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const db = await createTestDatabase("mig")
      dbs.push(db)
      const outcomes = await Effect.runPromise(
        Effect.all(Array.from({ length: RUNS }, () => migrateWithOwnPool(db.url)), { concurrency: "unbounded" })
      )
      expect(outcomes).toEqual(Array(RUNS).fill("ok"))
      const storages = await Effect.runPromise(Effect.all(Array.from({ length: RUNS }, () =>
        outcome(Layer.build(SqlRunnerStorage.layer.pipe(Layer.provide(ShardingConfig.layerDefaults))).pipe(Effect.scoped, Effect.provide(ownPool(db.url))))
      ), { concurrency: "unbounded" }))
      expect(storages).toEqual(Array(RUNS).fill("ok"))
      // Every migration applied exactly once, and every table of the last one is there.
      const applied = await db.query<{ name: string }>("SELECT name FROM shardline_migrations ORDER BY migration_id")
      expect(applied.map((r) => r.name)).toEqual(Object.keys(migrations).map((k) => k.replace(/^\d+_/, "")))
    }
  }, 110_000)
})
