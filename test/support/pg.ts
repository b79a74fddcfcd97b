// A migrated test database and PgClient layers on it, for tests that build services directly
// (each ManagedRuntime over its own client plays one node).
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { migrations } from "../../src/migrations.ts"
import { migrate } from "../../src/platform/database/Database.ts"

export const pgClientLayer = (url: string, applicationName = "shardline:test") =>
  PgClient.layer({ url: Redacted.make(url), applicationName, maxConnections: 4, transformJson: false })

export const migratedTestDatabase = async (label: string): Promise<TestDatabase> => {
  const db = await createTestDatabase(label)
  await Effect.runPromise(Effect.scoped(Effect.provide(migrate(migrations), pgClientLayer(db.url))))
  return db
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Polls `check` every 20 ms until it is true; returns the ms it took, or throws after `timeoutMs`. */
export const within = async (timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<number> => {
  const started = Date.now()
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not true within ${timeoutMs} ms`)
    await sleep(20)
  }
  return Date.now() - started
}

/** Runs `f` while `table` is renamed away: any query on it fails, so what still answers came from memory. */
export const withTableRenamed = async (db: TestDatabase, table: string, f: () => Promise<void>) => {
  await db.query(`ALTER TABLE ${table} RENAME TO ${table}_away`)
  try {
    await f()
  } finally {
    await db.query(`ALTER TABLE ${table}_away RENAME TO ${table}`)
  }
}
