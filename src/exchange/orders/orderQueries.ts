// Reads of a user's orders and trades for the signed history endpoints, straight from the tables
// the Market entities write (every query is filtered by the caller's user id: no one reads
// another key's orders). Paging follows Binance: orderId / fromId from an id upwards, else a time
// window, else the most recent `limit`; results oldest first.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { shownConfirmations } from "../settlement/legState.ts"
import { clientKey } from "./clientKey.ts"

export const limitDefault = 500
export const limitMax = 1000
/** openOrders answers at most this many (Binance has no limit; an account with more is unusual). */
export const openOrdersMax = 5000

export interface OrderRow {
  readonly order_id: string
  readonly market_id: number
  readonly client_order_id: string
  readonly side: "BUY" | "SELL"
  readonly price_ticks: string
  readonly qty_lots: string
  readonly executed_lots: string
  readonly quote_executed: string
  readonly status: string
  readonly created_ms: string
  readonly updated_ms: string
}

const orderCols = (sql: SqlClient.SqlClient) => sql`order_id::text, market_id, client_order_id, side, price_ticks::text, qty_lots::text,
  executed_lots::text, quote_executed::text, status, created_ms::text, updated_ms::text`

export const orderById = (userId: number, orderId: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<OrderRow>`SELECT ${orderCols(sql)} FROM orders WHERE order_id = ${orderId} AND user_id = ${userId}`.pipe(Effect.map((r) => r[0])))

export const orderByClientId = (userId: number, marketId: number, clientOrderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<OrderRow>`SELECT ${orderCols(sql)} FROM orders WHERE client_key = ${clientKey(marketId, userId, clientOrderId)}`.pipe(
      Effect.map((r) => r[0])
    ))

export const openOrders = (userId: number, marketId: number | undefined) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<OrderRow>`SELECT ${orderCols(sql)} FROM orders WHERE user_id = ${userId} AND status IN ('NEW', 'PARTIALLY_FILLED')
      ${marketId === undefined ? sql`` : sql`AND market_id = ${marketId}`} ORDER BY orders.order_id LIMIT ${openOrdersMax}`)

export interface Window {
  readonly fromId?: number | undefined
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  readonly limit: number
}

export const allOrders = (userId: number, marketId: number | undefined, w: Window) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const market = marketId === undefined ? sql`` : sql`AND market_id = ${marketId}`
    const from = w.fromId === undefined ? sql`` : sql`AND order_id >= ${w.fromId}`
    const start = w.startTime === undefined ? sql`` : sql`AND created_ms >= ${w.startTime}`
    const end = w.endTime === undefined ? sql`` : sql`AND created_ms <= ${w.endTime}`
    const oldestFirst = w.fromId !== undefined || w.startTime !== undefined
    return sql<OrderRow>`SELECT * FROM (SELECT ${orderCols(sql)} FROM orders WHERE user_id = ${userId} ${market} ${from} ${start} ${end}
      ORDER BY orders.order_id ${oldestFirst ? sql`ASC` : sql`DESC`} LIMIT ${w.limit}) o ORDER BY o.order_id::bigint`
  })

export interface TradeRow {
  readonly trade_id: string
  readonly market_id: number
  readonly price_ticks: string
  readonly qty_lots: string
  readonly quote_qty: string
  readonly maker_order_id: string
  readonly taker_order_id: string
  readonly buyer_user: string
  readonly buyer_is_maker: boolean
  readonly time_ms: string
}

export interface LegRow {
  readonly trade_id: string
  readonly leg: "base" | "quote"
  readonly asset: string
  readonly amount: string
  readonly from_address: string
  readonly to_address: string
  readonly txid: string | null
  /** As readers see it: a confirmed leg's counted from its market's tip (`shownConfirmations`). */
  readonly confirmations: number
  readonly status: string
}

/** A leg's row with what its count is read from: its block and its market's recorded tip. */
interface StoredLegRow extends LegRow {
  readonly block_height: number | null
  readonly tip_height: number | null
}

const legShown = ({ block_height, tip_height, ...leg }: StoredLegRow): LegRow => ({
  ...leg,
  confirmations: shownConfirmations({ status: leg.status, confirmations: leg.confirmations, blockHeight: block_height }, tip_height)
})

export const myTrades = (userId: number, marketId: number | undefined, orderId: number | undefined, w: Window) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const market = marketId === undefined ? sql`` : sql`AND market_id = ${marketId}`
    const order = orderId === undefined ? sql`` : sql`AND (maker_order_id = ${orderId} OR taker_order_id = ${orderId})`
    const from = w.fromId === undefined ? sql`` : sql`AND trade_id >= ${w.fromId}`
    // Binance ignores the time window when fromId is given.
    const start = w.startTime === undefined || w.fromId !== undefined ? sql`` : sql`AND time_ms >= ${w.startTime}`
    const end = w.endTime === undefined || w.fromId !== undefined ? sql`` : sql`AND time_ms <= ${w.endTime}`
    const oldestFirst = w.fromId !== undefined || w.startTime !== undefined
    const cols = sql`trade_id::text, market_id, price_ticks::text, qty_lots::text, quote_qty::text, maker_order_id::text,
      taker_order_id::text, buyer_user::text, buyer_is_maker, time_ms::text`
    // The ids are text here (`trade_id::text`): every ORDER BY casts back, or "9" sorts above "10".
    const trades = yield* sql<TradeRow>`SELECT * FROM (SELECT * FROM (
        SELECT ${cols} FROM trades WHERE buyer_user = ${userId} ${market} ${order} ${from} ${start} ${end}
        UNION ALL
        SELECT ${cols} FROM trades WHERE seller_user = ${userId} ${market} ${order} ${from} ${start} ${end}
        ) u ORDER BY u.trade_id::bigint ${oldestFirst ? sql`ASC` : sql`DESC`} LIMIT ${w.limit}) t ORDER BY t.trade_id::bigint`
    const legs = trades.length === 0 ? [] : yield* sql<StoredLegRow>`SELECT l.trade_id::text, l.leg, l.asset, l.amount::text, l.from_address,
        l.to_address, l.txid, l.confirmations, l.status, l.block_height, tip.tip_height
      FROM settlement_legs l JOIN trades t ON t.trade_id = l.trade_id LEFT JOIN exchange_market_tips tip ON tip.market_id = t.market_id
      WHERE l.trade_id = ANY(${trades.map((t) => t.trade_id)}::bigint[]) ORDER BY l.trade_id, l.leg`
    return { trades, legs: legs.map(legShown) }
  })
