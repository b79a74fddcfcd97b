// Issue 21, point 2: the migrations moved from one platform folder to their services
// (src/<service>/migrations/), with the same ids and names. A database migrated by the old list
// (today's main before the move: the 22 keys below, frozen, run in id order by the same migrator)
// and one migrated by the new composition (src/migrations.ts) end identical: the same tables,
// columns, types, defaults, indexes, constraints, triggers and functions, and the same rows in the
// migrator's own table. A database already migrated by the old list has nothing left to do, and
// one migrated by an older main (up to 0016) gets exactly the rest.
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import m0013 from "../../src/social/migrations/0013_social_accounts.ts"
import m0015 from "../../src/social/migrations/0015_social_content.ts"
import m0022 from "../../src/social/migrations/0022_social_stamping_succession.ts"
import m0023 from "../../src/social/migrations/0023_member_signed_stamps.ts"
import m0024 from "../../src/social/migrations/0024_social_owed_stamps.ts"
import m0017 from "../../src/desk/migrations/0017_desk_ledger.ts"
import m0018 from "../../src/desk/migrations/0018_desk_orders.ts"
import m0019 from "../../src/desk/migrations/0019_desk_cashout.ts"
import m0021 from "../../src/desk/migrations/0021_desk_refund_legs.ts"
import m0001 from "../../src/exchange/migrations/0001_accounts.ts"
import m0002 from "../../src/exchange/migrations/0002_authorizations.ts"
import m0005 from "../../src/exchange/migrations/0005_api_key_revocations.ts"
import m0008 from "../../src/exchange/migrations/0008_exchange_trading.ts"
import m0010 from "../../src/exchange/migrations/0010_settlement.ts"
import m0011 from "../../src/exchange/migrations/0011_settlement_legs_from_height.ts"
import m0012 from "../../src/exchange/migrations/0012_settlement_txid_unique.ts"
import m0016 from "../../src/exchange/migrations/0016_market_data.ts"
import { migrations } from "../../src/migrations.ts"
import { migrate } from "../../src/platform/database/Database.ts"
import type { Migrations } from "../../src/platform/database/Migrations.ts"
import m0003 from "../../src/platform/database/migrations/0003_platform.ts"
import m0004 from "../../src/platform/database/migrations/0004_devnet.ts"
import m0006 from "../../src/platform/database/migrations/0006_key_epochs.ts"
import m0007 from "../../src/platform/database/migrations/0007_desk_social_auth.ts"
import m0014 from "../../src/platform/database/migrations/0014_wallet_identity.ts"

/** The record src/platform/database/Database.ts handed the migrator before the move, key for key. */
const oldList: Migrations = {
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
  "0024_social_owed_stamps": m0024
}

const idOf = (key: string) => Number(key.split("_")[0])

const migrateWith = (db: TestDatabase, list: Migrations) =>
  Effect.runPromise(Effect.scoped(migrate(list).pipe(
    Effect.provide(PgClient.layer({ url: Redacted.make(db.url), maxConnections: 3, transformJson: false }))
  )))

/** The schema as the catalog sees it, every part sorted so creation order does not matter. */
const schemaOf = async (db: TestDatabase) => {
  const q = (text: string) => db.query(text)
  return {
    relations: await q(`SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' ORDER BY 1, 2`),
    columns: await q(`SELECT table_name, column_name, ordinal_position, data_type, udt_name, character_maximum_length,
      numeric_precision, numeric_scale, is_nullable, column_default, is_identity, is_generated
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2`),
    indexes: await q(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2`),
    constraints: await q(`SELECT conrelid::regclass::text AS rel, conname, contype::text, pg_get_constraintdef(oid) AS def
      FROM pg_constraint WHERE connamespace = 'public'::regnamespace ORDER BY 1, 2`),
    triggers: await q(`SELECT tgrelid::regclass::text AS rel, tgname, pg_get_triggerdef(oid) AS def
      FROM pg_trigger WHERE NOT tgisinternal ORDER BY 1, 2`),
    functions: await q(`SELECT proname, pg_get_functiondef(oid) AS def FROM pg_proc
      WHERE pronamespace = 'public'::regnamespace ORDER BY 1, 2`),
    sequences: await q(`SELECT sequence_name, data_type, start_value, increment FROM information_schema.sequences
      WHERE sequence_schema = 'public' ORDER BY 1`)
  }
}

const bookkeeping = (db: TestDatabase) =>
  db.query<{ migration_id: number; name: string }>("SELECT migration_id, name FROM shardline_migrations ORDER BY migration_id")

const dbs: Array<TestDatabase> = []
const fresh = async (label: string) => {
  const db = await createTestDatabase(label)
  dbs.push(db)
  return db
}
afterAll(async () => {
  for (const db of dbs) await db.drop()
})

/** The last id of the release before the move; everything the composition has above it was added since. */
const lastOldId = 24
const upTo = (list: Migrations, id: number): Migrations => Object.fromEntries(Object.entries(list).filter(([key]) => idOf(key) <= id))
const keysAbove = (list: Migrations, id: number) => Object.keys(list).filter((key) => idOf(key) > id)

describe("migrations per service", () => {
  let byOld: TestDatabase
  let byNew: TestDatabase
  let byFull: TestDatabase
  beforeAll(async () => {
    ;[byOld, byNew, byFull] = await Promise.all([fresh("migold"), fresh("mignew"), fresh("migfull")])
    await migrateWith(byOld, oldList)
    await migrateWith(byNew, upTo(migrations, lastOldId))
    await migrateWith(byFull, migrations)
  }, 120_000)

  it("the composition holds the old ids and names, and adds only ids above them", () => {
    const sorted = (keys: Array<string>) => [...keys].sort((a, b) => idOf(a) - idOf(b))
    expect(sorted(Object.keys(upTo(migrations, lastOldId)))).toEqual(Object.keys(oldList))
    expect(Object.keys(migrations)).toEqual([...Object.keys(oldList), ...keysAbove(migrations, lastOldId)])
  })

  it("a database migrated by the old list and one migrated by the new composition's same ids end identical", async () => {
    const [a, b] = await Promise.all([schemaOf(byOld), schemaOf(byNew)])
    // Not two empty dumps: every service's tables are there.
    expect(a.relations.map((r) => r.relname)).toEqual(expect.arrayContaining(["markets", "desk_orders", "social_posts", "link_tokens"]))
    expect(a.columns.length).toBeGreaterThan(300)
    expect(b).toEqual(a)
    expect(await bookkeeping(byNew)).toEqual(await bookkeeping(byOld))
    expect((await bookkeeping(byOld)).map((r) => `${String(r.migration_id).padStart(4, "0")}_${r.name}`)).toEqual(Object.keys(oldList))
  })

  it("a database already migrated by the old list gets exactly what was added since, and ends as a new one", async () => {
    const applied = await migrateWith(byOld, migrations)
    expect(applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)).toEqual(keysAbove(migrations, lastOldId))
    expect(await schemaOf(byOld)).toEqual(await schemaOf(byFull))
    expect(await migrateWith(byOld, migrations)).toEqual([])
  })

  it("a database migrated by an older main (up to 0016) gets exactly the rest, and ends identical", async () => {
    const older = await fresh("migolder")
    const upTo16 = Object.fromEntries(Object.entries(oldList).filter(([key]) => idOf(key) <= 16))
    await migrateWith(older, upTo16)
    const applied = await migrateWith(older, migrations)
    expect(applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)).toEqual(keysAbove(migrations, 16))
    expect(await schemaOf(older)).toEqual(await schemaOf(byFull))
    expect(await bookkeeping(older)).toEqual(await bookkeeping(byFull))
  })
})
