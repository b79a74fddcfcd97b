// The batch's grant read (marketSql.lockGrants) takes what a grant's cap has used from its running
// totals, one row per market (migration 0043), not from a sum over every leg it paid (issue 22):
// legs a batch writes add to its market's row in the same statement, a leg marked failed later
// comes off, two markets keep their own rows, and 0043 sums the legs recorded before it ran. At
// every step the read agrees with the sum over the legs it replaced.
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { configFrom, testMasterKey } from "../../harness/config.ts"
import { createTestDatabase, type TestDatabase } from "../../harness/db.ts"
import { configLayer } from "../../src/config.ts"
import migration0043 from "../../src/exchange/migrations/0043_grant_leg_totals.ts"
import { lockGrants, readForPlaces, writeChanges } from "../../src/exchange/market/marketSql.ts"
import { newChanges } from "../../src/exchange/market/MarketState.ts"
import { databaseLayer } from "../../src/platform/database/Database.ts"
import { migrations } from "../../src/migrations.ts"

const COIN = 100_000_000n
let db: TestDatabase
beforeAll(async () => { db = await createTestDatabase("granttotals") })
afterAll(async () => { await db?.drop() })

describe("per-grant running totals", () => {
  it("the grant read's used amount follows the legs: recorded before 0043, written by two markets, failed later", async () => {
    const scenario = Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('AAA', 3, 8), ('BBB', 4, 8), ('DUSD', 2, 8) ON CONFLICT (code) DO NOTHING`
      for (const [id, base] of [[1, "AAA"], [2, "BBB"]] as const) {
        yield* sql`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
          VALUES (${id}, ${`${base}DUSD`}, ${base}, 'DUSD', '0.01', '0.01', '0.01', '100000', '0.01', '1000000', '0', '0')`
      }
      const [user] = yield* sql<{ id: string }>`INSERT INTO users DEFAULT VALUES RETURNING id::text AS id`
      const userId = Number(user!.id)
      yield* sql`INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address)
        VALUES (${userId}, 'DUSD', 'g1', 10, now() + interval '1 hour', 'Tdelegated')`
      const key = { userId, asset: "DUSD", propertyId: 2 }
      const capFree = Effect.map(lockGrants([key], 0, () => Effect.succeed(0n)).pipe(sql.withTransaction), (v) => v.get(`${userId}:DUSD`)!.capFree)
      /** The batch's own read (readForPlaces: the grants beside the client id probe, one statement, through JSON) sees the same grant. */
      const sameInBatchRead = Effect.gen(function*() {
        const alone = yield* lockGrants([key], 0, () => Effect.succeed(0n))
        const read = yield* readForPlaces(1, [[userId, "no-such-client-id"]], [key], 0, () => Effect.succeed(0n))
        expect(read.seen.size).toBe(0)
        expect(read.grants).toEqual(alone)
        expect(alone.size).toBe(1)
      }).pipe(sql.withTransaction)
      /** The formula 0043 replaced: cap − every leg of the grant that did not fail. */
      const bySum = Effect.map(sql<{ free: string }>`SELECT (10 * ${COIN.toString()}::numeric - COALESCE(sum(amount), 0))::text AS free
        FROM settlement_legs WHERE grant_id = 'g1' AND status <> 'failed'`, (r) => BigInt(r[0]!.free))
      const trade = (tradeId: number, marketId: number) =>
        sql`INSERT INTO trades (trade_id, market_id, price_ticks, qty_lots, quote_qty, maker_order_id, taker_order_id, buyer_user, seller_user, buyer_is_maker, time_ms)
          VALUES (${tradeId}, ${marketId}, 1, 1, 1, 1, 2, ${userId}, ${userId}, false, 0)`

      // Legs recorded before 0043 (one failed since): the migration sums them into market 1's row.
      for (const [tradeId, amount, status] of [[1, 1n, "final"], [2, 2n, "broadcast"], [3, 3n, "failed"]] as const) {
        yield* trade(tradeId, 1)
        yield* sql`INSERT INTO settlement_legs (trade_id, leg, asset, property_id, amount, grant_id, from_address, to_address, status)
          VALUES (${tradeId}, 'quote', 'DUSD', 2, ${(amount * COIN).toString()}, 'g1', 'Tdelegated', 'Tto', ${status})`
      }
      yield* sql`DROP TABLE exchange_grant_leg_totals`
      yield* sql`DROP INDEX settlement_legs_failed_grant`
      yield* migration0043
      expect(yield* sql`SELECT grant_id, market_id, recorded::text AS recorded FROM exchange_grant_leg_totals`)
        .toEqual([{ grant_id: "g1", market_id: 1, recorded: (6n * COIN).toString() }])
      expect(yield* capFree).toBe(7n * COIN)
      expect(yield* capFree).toBe(yield* bySum)
      yield* sameInBatchRead

      // A batch on each market: each adds to its own row, in the statement that records the legs.
      const batch = (marketId: number, tradeId: number, amount: bigint) => {
        const c = newChanges()
        c.trades.push({ tradeId, priceTicks: 1, qtyLots: 1, quoteSats: amount, makerOrderId: 1, takerOrderId: 2, buyerUser: userId, sellerUser: userId, buyerIsMaker: false, timeMs: 0 })
        c.legs.push({ tradeId, leg: "quote", asset: "DUSD", propertyId: 2, amount, grantId: "g1", userId, from: "Tdelegated", to: "Tto" })
        return writeChanges(marketId, c).pipe(sql.withTransaction)
      }
      yield* batch(2, 4, 3n * COIN / 2n)
      yield* batch(1, 5, COIN / 2n)
      expect(yield* sql`SELECT market_id, recorded::text AS recorded FROM exchange_grant_leg_totals ORDER BY market_id`)
        .toEqual([{ market_id: 1, recorded: (13n * COIN / 2n).toString() }, { market_id: 2, recorded: (3n * COIN / 2n).toString() }])
      expect(yield* capFree).toBe(5n * COIN)
      expect(yield* capFree).toBe(yield* bySum)
      yield* sameInBatchRead

      // A leg that fails later (the sweep, the wallet, the expiry mark it) no longer counts.
      yield* sql`UPDATE settlement_legs SET status = 'failed' WHERE trade_id = 2`
      expect(yield* capFree).toBe(7n * COIN)
      expect(yield* capFree).toBe(yield* bySum)
      yield* sameInBatchRead
    })
    const config = configFrom({ SHARDLINE_DATABASE_URL: db.url, SHARDLINE_MASTER_KEY: testMasterKey })
    const layer = databaseLayer({ applicationName: "test:granttotals", migrations }).pipe(Layer.provide(configLayer(config)))
    await Effect.runPromise(Effect.scoped(Effect.provide(scenario, layer)))
  }, 60_000)
})
