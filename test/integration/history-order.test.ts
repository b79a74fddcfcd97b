// Ids read as text must still sort as numbers. The history reads cast ids to text for the wire
// (`order_id::text`), and Postgres resolves a bare ORDER BY name to that text output column: "9"
// sorted above "10", so allOrders and myTrades paged the wrong rows once ids changed length, and a
// wallet registered to two users signed in as the newer one. (Found by the scan in
// test/unit/platform/orderByTextAlias.test.ts, widened after the chaos checker's attestation read.)
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { userOfAddress } from "../../src/exchange/account/webUsers.ts"
import { allOrders, myTrades, openOrders } from "../../src/exchange/orders/orderQueries.ts"
import { migratedTestDatabase, pgClientLayer } from "../support/pg.ts"

let db: TestDatabase
let userId: number
const run = <A, E>(e: Effect.Effect<A, E, import("@effect/sql").SqlClient.SqlClient>) =>
  Effect.runPromise(Effect.scoped(Effect.provide(e, pgClientLayer(db.url))))

beforeAll(async () => {
  db = await migratedTestDatabase("histord")
  await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('HBASE', 901, 8), ('HQUOTE', 902, 8)`)
  await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
    VALUES (1, 'HBASEHQUOTE', 'HBASE', 'HQUOTE', '0.01', '0.01', '0.01', '1000', '0.01', '1000', '0', '1000000')`)
  userId = Number((await db.query<{ id: string }>("INSERT INTO users DEFAULT VALUES RETURNING id"))[0]!.id)
  const other = Number((await db.query<{ id: string }>("INSERT INTO users DEFAULT VALUES RETURNING id"))[0]!.id)
  // Ids 1..12: one digit, then two.
  for (let id = 1; id <= 12; id++) {
    await db.query(`INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, status, seq, grant_id, reserved, created_ms, updated_ms)
      VALUES ($1, 1, $2, $3, 'BUY', 100, 1, 'NEW', $1, 'g', 0, $4, $4)`, [id, userId, `c${id}`, 1_700_000_000_000 + id])
    await db.query(`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
      VALUES ($1, 1, 100, 1, 100, $1, $1, $2, $3, true, $4)`, [id, id % 2 === 0 ? userId : other, id % 2 === 0 ? other : userId, 1_700_000_000_000 + id])
  }
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

const ids = (rows: ReadonlyArray<{ readonly order_id?: string; readonly trade_id?: string }>) => rows.map((r) => Number(r.order_id ?? r.trade_id))

describe("history reads sort ids as numbers", () => {
  it("allOrders: the most recent `limit`, oldest first; from an id upwards", async () => {
    expect(ids(await run(allOrders(userId, 1, { limit: 5 })))).toEqual([8, 9, 10, 11, 12])
    expect(ids(await run(allOrders(userId, 1, { limit: 3, fromId: 8 })))).toEqual([8, 9, 10])
  })

  it("myTrades (bought and sold, one union): the same paging", async () => {
    expect(ids((await run(myTrades(userId, 1, undefined, { limit: 4 }))).trades)).toEqual([9, 10, 11, 12])
    expect(ids((await run(myTrades(userId, 1, undefined, { limit: 3, fromId: 9 }))).trades)).toEqual([9, 10, 11])
  })

  it("openOrders in id order", async () => {
    expect(ids(await run(openOrders(userId, 1)))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
  })

  it("an address registered to two users signs in as the older one", async () => {
    const made: Array<number> = []
    for (let i = 0; i < 10; i++) made.push(Number((await db.query<{ id: string }>("INSERT INTO users DEFAULT VALUES RETURNING id"))[0]!.id))
    // The users' ids now span one and two digits (userId is 1 or so; the last made is above 9).
    const older = made.find((id) => id < 10)!
    const newer = made.find((id) => id >= 10)!
    await db.query(`INSERT INTO user_addresses (user_id, address) VALUES ($1, 'Lshared'), ($2, 'Lshared')`, [older, newer])
    expect(await run(userOfAddress("Lshared"))).toBe(older)
  })
})
