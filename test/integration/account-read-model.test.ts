// The account read model: served from memory once loaded, dropped on every node by the writers'
// notification (a grant through the Authorization entity included), healed by background
// revalidation when a notification is missed, and never showing a grant past its expiry.
import { Effect, Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { createKey } from "../../harness/keys.ts"
import {
  type AccountData, AccountReadModel, type AccountReadModelShape, accountChannel, make, notifyAccountChanged, type RevalidationOptions
} from "../../src/exchange/account/AccountReadModel.ts"
import { cli } from "../support/cli.ts"
import { startNode, testMasterKey, type RunningNode } from "../support/node.ts"
import { migratedTestDatabase, pgClientLayer, sleep, withTableRenamed, within } from "../support/pg.ts"

let db: TestDatabase
const runtimes: Array<{ dispose: () => Promise<void> }> = []

const startModel = async (name: string, options: RevalidationOptions = {}): Promise<AccountReadModelShape> => {
  const runtime = ManagedRuntime.make(Layer.scoped(AccountReadModel, make(options)).pipe(
    Layer.provide(pgClientLayer(db.url, `shardline:accounts-${name}`))
  ))
  runtimes.push(runtime)
  return runtime.runPromise(AccountReadModel)
}

const read = (model: AccountReadModelShape, userId: number) => Effect.runPromise(model.read(userId))
const assets = (data: AccountData) => data.grants.map((g) => g.asset)

const newUser = async () => Number((await db.query<{ id: string }>("INSERT INTO users DEFAULT VALUES RETURNING id"))[0]!.id)

/** A grant written the way the entity writes it, in one transaction, optionally with the notification. */
const writeGrant = async (userId: number, asset: string, expiresAt: Date, notify: boolean) => {
  await db.query(`
    WITH g AS (
      INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address)
      VALUES ($1, $2, gen_random_uuid()::text, 1.5, $3, 'Taddr') RETURNING user_id
    ) SELECT CASE WHEN $4 THEN pg_notify($5, user_id::text) END FROM g`, [userId, asset, expiresAt, notify, accountChannel])
}

const withoutAuthorizationsTable = (f: () => Promise<void>) => withTableRenamed(db, "authorizations", f)

let a: AccountReadModelShape
let b: AccountReadModelShape

beforeAll(async () => {
  db = await migratedTestDatabase("acct")
  a = await startModel("a")
  b = await startModel("b")
}, 60_000)
afterAll(async () => {
  for (const r of runtimes) await r.dispose()
  await db?.drop()
})

describe("account read model", () => {
  it("serves a loaded account from memory and shows a notified change on every node at once", async () => {
    const userId = await newUser()
    await db.query("INSERT INTO user_addresses (user_id, address) VALUES ($1, 'Taddress1')", [userId])
    expect(await read(a, userId)).toEqual({ addresses: ["Taddress1"], grants: [] })
    expect(await read(b, userId)).toEqual({ addresses: ["Taddress1"], grants: [] })
    await withoutAuthorizationsTable(async () => {
      expect((await read(a, userId)).addresses).toEqual(["Taddress1"])
      expect((await Effect.runPromiseExit(a.read(userId + 1000)))._tag).toBe("Failure") // a miss does query
    })

    const expiresAt = Date.now() + 3_600_000
    await writeGrant(userId, "BTC", new Date(expiresAt), true)
    const tookMs = await within(1000, async () => assets(await read(a, userId)).length === 1 && assets(await read(b, userId)).length === 1)
    console.log(`a notified grant showed on both nodes after ${tookMs} ms`)
    expect((await read(b, userId)).grants).toEqual([{ asset: "BTC", cap: "1.5", usedSats: "0", reservedSats: "0", pendingOutSats: "0", expiresAt, delegatedAddress: "Taddr" }])
  })

  it("notifyAccountChanged makes every listening node drop the user", async () => {
    const userId = await newUser()
    expect(await read(a, userId)).toEqual({ addresses: [], grants: [] })
    await db.query("INSERT INTO user_addresses (user_id, address) VALUES ($1, 'Tlater')", [userId])
    await sleep(300)
    expect((await read(a, userId)).addresses).toEqual([]) // no notification: memory still answers
    await Effect.runPromise(notifyAccountChanged(userId).pipe(Effect.provide(pgClientLayer(db.url))))
    await within(1000, async () => (await read(a, userId)).addresses.length === 1)
  })

  it("never shows a grant past its expiry, even with the row still there and nothing notified", async () => {
    const userId = await newUser()
    await writeGrant(userId, "ETH", new Date(Date.now() + 1200), false)
    await writeGrant(userId, "LTC", new Date(Date.now() + 3_600_000), false)
    expect(assets(await read(a, userId))).toEqual(["ETH", "LTC"])
    await sleep(1300)
    await withoutAuthorizationsTable(async () => {
      expect(assets(await read(a, userId))).toEqual(["LTC"]) // filtered at read time, from memory
    })
    await writeGrant(userId, "DOGE", new Date(Date.now() - 1000), true) // already expired when written
    await sleep(300)
    expect(assets(await read(a, userId))).toEqual(["LTC"])
  })

  it("heals a missed notification by background revalidation", async () => {
    const quick = await startModel("quick", { revalidateAfterMs: 500, revalidateEveryMs: 200 })
    const userId = await newUser()
    expect(assets(await read(quick, userId))).toEqual([])
    await writeGrant(userId, "XRP", new Date(Date.now() + 3_600_000), false)
    await within(2000, async () => assets(await read(quick, userId)).length === 1)
    expect(assets(await read(a, userId))).toEqual(["XRP"]) // a loads it now (first read there)
  })
})

describe("account read model fed by the Authorization entity", () => {
  let node: RunningNode

  afterAll(async () => {
    await node?.stop()
  })

  it("shows an entity grant, then its replacement, within a second of the CLI's answer", async () => {
    node = await startNode(db.url)
    const key = await createKey(db.url, { scopes: ["read", "trade"] })
    const env = { SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey }
    expect(await read(a, key.userId)).toEqual({ addresses: [], grants: [] })
    const grant = async (cap: string) => {
      const res = await cli(["authorizations", "grant", "--key", key.apiKey, "--asset", "BTC", "--cap", cap, "--expires-in", "1h", "--json"], env)
      expect(res.code).toBe(0)
      return JSON.parse(res.stdout) as { delegatedAddress: string }
    }
    const first = await grant("0.5")
    await within(1000, async () => (await read(a, key.userId)).grants[0]?.delegatedAddress === first.delegatedAddress)
    const second = await grant("0.75")
    await within(1000, async () => (await read(a, key.userId)).grants[0]?.delegatedAddress === second.delegatedAddress)
    expect((await read(a, key.userId)).grants.map((g) => g.cap)).toEqual(["0.75"])
  }, 120_000)
})
