// A place's idempotency probe reads one index entry per key, whatever the statistics say
// (migration 0046, orders.client_key). Before it, the probe joined on (market, user, client
// order id); on a table analyzed while empty and then filled (a fresh database's first minute,
// before autovacuum's first analyze) the planner costed the unique index and orders_user (user,
// market, order id) alike and took orders_user, reading every order of the user in the market per
// probe: 157 rows filtered a probe here (docs/operations.md, "Orders benchmark", session 20).
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestDatabase } from "../../harness/db.ts"
import { clientIdsProbe, readForPlaces } from "../../src/exchange/market/marketSql.ts"
import { migratedTestDatabase, pgClientLayer } from "../support/pg.ts"

let db: TestDatabase
let users: Array<number> = []
const run = <A, E>(e: Effect.Effect<A, E, SqlClient.SqlClient>) => Effect.runPromise(Effect.scoped(Effect.provide(e, pgClientLayer(db.url))))

beforeAll(async () => {
  db = await migratedTestDatabase("clientkey")
  await db.query(`INSERT INTO exchange_assets (code, property_id, decimals) VALUES ('KBASE', 911, 8), ('KQUOTE', 912, 8)`)
  for (const id of [1, 2]) {
    await db.query(`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
      VALUES ($1, $2, 'KBASE', 'KQUOTE', '0.01', '0.01', '0.01', '1000', '0.01', '1000', '0', '1000000')`, [id, `KBASEKQUOTE${id}`])
  }
  users = (await db.query<{ id: string }>("INSERT INTO users SELECT FROM generate_series(1, 64) RETURNING id")).map((r) => Number(r.id))
  // Statistics taken while the table is empty, then 20,000 orders of 64 users over two markets.
  await db.query("ANALYZE orders")
  await db.query(`INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, status, seq, grant_id, reserved, created_ms, updated_ms)
    SELECT g, 1 + g % 2, ($1::bigint[])[1 + g % 64], 'c' || g, 'BUY', 100, 1, 'CANCELED', g, 'g', 0, 0, 0 FROM generate_series(1, 20000) g`, [users])
}, 60_000)
afterAll(async () => {
  await db?.drop()
})

/** Eight keys taken in market 1 (odd ids are market 2's) and eight free ones. */
const probePairs = (): Array<readonly [number, string]> => {
  const taken = [2, 4, 100, 2000, 5002, 9998, 15000, 19998].map((g) => [users[g % 64]!, `c${g}`] as const)
  const free = [1, 3, 20001, 20002, 20003, 20004, 20005, 20006].map((g) => [users[g % 64]!, `c${g}`] as const)
  return [...taken, ...free]
}

interface PlanNode {
  readonly "Node Type": string
  readonly "Index Name"?: string
  readonly "Actual Rows"?: number
  readonly "Rows Removed by Filter"?: number
  readonly "Rows Removed by Index Recheck"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}
const nodesOf = (n: PlanNode): Array<PlanNode> => [n, ...(n.Plans ?? []).flatMap(nodesOf)]

describe("the client order id probe", () => {
  it("answers which keys are taken in the market, and only those", async () => {
    // The batch's read (the probe beside the grants it locks, one statement); no grants asked here.
    const { seen, grants } = await run(readForPlaces(1, probePairs(), [], 0, () => Effect.succeed(0n)))
    expect(grants.size).toBe(0)
    expect([...seen].sort()).toEqual(probePairs().slice(0, 8).map(([u, c]) => `${u}\u0000${c}`).sort())
  })

  it("reads the client key index, one entry per key, on statistics taken while the table was empty", async () => {
    const [text, params] = await run(Effect.map(SqlClient.SqlClient, (sql) => clientIdsProbe(sql, 1, probePairs()).compile()))
    const [row] = await db.query<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params as Array<unknown>)
    const nodes = nodesOf(row!["QUERY PLAN"][0]!.Plan)
    expect(nodes.map((n) => n["Index Name"]).filter((n) => n !== undefined)).toEqual(["orders_client_key"])
    expect(nodes.some((n) => n["Node Type"] === "Seq Scan")).toBe(false)
    const removed = nodes.reduce((s, n) => s + (n["Rows Removed by Filter"] ?? 0) + (n["Rows Removed by Index Recheck"] ?? 0), 0)
    expect(removed).toBe(0)
  })

  it("keeps one order per (market, user, client order id): a second is refused by the key's unique index", async () => {
    await expect(db.query(`INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, status, seq, grant_id, reserved, created_ms, updated_ms)
      VALUES (30000, 1, $1, 'c2', 'BUY', 100, 1, 'NEW', 30000, 'g', 0, 0, 0)`, [users[2]])).rejects.toThrow(/orders_client_key/)
    // The same client order id in the other market, or for another user, is another key.
    await db.query(`INSERT INTO orders (order_id, market_id, user_id, client_order_id, side, price_ticks, qty_lots, status, seq, grant_id, reserved, created_ms, updated_ms)
      VALUES (30001, 2, $1, 'c2', 'BUY', 100, 1, 'NEW', 30001, 'g', 0, 0, 0), (30002, 1, $2, 'c2', 'BUY', 100, 1, 'NEW', 30002, 'g', 0, 0, 0)`, [users[2], users[3]])
  })
})
