// Market data's statements: kline history (written by the owner, read in pages), the snapshot a
// lagging node catches up from, and what a new owner loads (recent trades, trades its candles
// have not counted yet). None of these runs on a public read served from memory.
import { SqlClient } from "@effect/sql"
import { Effect, Either, Schema } from "effect"
import type { FeedSnapshot, PublicTrade } from "./feed.ts"
import { INTERVALS, type Interval, type Kline, KLINES_IN_MEMORY, newSeries, type Series } from "./klines.ts"
import { Level, TradeTuple, tradeOfTuple, tradeTuple } from "./wire.ts"
import { RECENT_TRADES } from "./feed.ts"
import { localId } from "../markets/ids.ts"

interface KlineRowDb {
  readonly interval: Interval
  readonly open_time: string
  readonly open_ticks: string
  readonly high_ticks: string
  readonly low_ticks: string
  readonly close_ticks: string
  readonly volume_lots: string
  readonly quote_sats: string
  readonly trades: number
  readonly first_trade_id: string
  readonly last_trade_id: string
}

const klineOf = (r: KlineRowDb): Kline => ({
  openTime: Number(r.open_time),
  open: Number(r.open_ticks),
  high: Number(r.high_ticks),
  low: Number(r.low_ticks),
  close: Number(r.close_ticks),
  volume: BigInt(r.volume_lots),
  quote: BigInt(r.quote_sats),
  trades: Number(r.trades),
  firstId: Number(r.first_trade_id),
  lastId: Number(r.last_trade_id)
})

const klineColumns = (sql: SqlClient.SqlClient) => sql`interval, open_time::text, open_ticks::text, high_ticks::text, low_ticks::text,
  close_ticks::text, volume_lots::text, quote_sats::text, trades, first_trade_id::text, last_trade_id::text`

/** Writes candles (the newest state of each); an older state never overwrites a newer one. */
/** The upsert of candles as a statement of its own or, named, as one CTE of another (the market's batch write). */
export const klinesUpsert = (sql: SqlClient.SqlClient, marketId: number, rows: ReadonlyArray<readonly [Interval, Kline]>) => {
  const col = <A>(f: (k: Kline) => A) => rows.map(([, k]) => String(f(k)))
  return sql`INSERT INTO market_klines (market_id, interval, open_time, open_ticks, high_ticks, low_ticks, close_ticks, volume_lots, quote_sats, trades, first_trade_id, last_trade_id)
      SELECT ${marketId}, * FROM unnest(${rows.map(([iv]) => iv)}::text[], ${col((k) => k.openTime)}::bigint[], ${col((k) => k.open)}::bigint[],
        ${col((k) => k.high)}::bigint[], ${col((k) => k.low)}::bigint[], ${col((k) => k.close)}::bigint[], ${col((k) => k.volume)}::numeric[],
        ${col((k) => k.quote)}::numeric[], ${col((k) => k.trades)}::int[], ${col((k) => k.firstId)}::bigint[], ${col((k) => k.lastId)}::bigint[])
      ON CONFLICT (market_id, interval, open_time) DO UPDATE SET open_ticks = excluded.open_ticks, high_ticks = excluded.high_ticks,
        low_ticks = excluded.low_ticks, close_ticks = excluded.close_ticks, volume_lots = excluded.volume_lots, quote_sats = excluded.quote_sats,
        trades = excluded.trades, first_trade_id = excluded.first_trade_id, last_trade_id = excluded.last_trade_id
      WHERE market_klines.last_trade_id <= excluded.last_trade_id`
}

export const upsertKlines = (marketId: number, rows: ReadonlyArray<readonly [Interval, Kline]>) =>
  Effect.gen(function*() {
    if (rows.length === 0) return
    const sql = yield* SqlClient.SqlClient
    yield* klinesUpsert(sql, marketId, rows)
  })

/** The newest KLINES_IN_MEMORY candles of every interval, as in-memory series. */
export const loadSeries = (marketId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One index range per interval (the primary key), however long the history.
    const rows = yield* sql<KlineRowDb>`SELECT ${klineColumns(sql)} FROM unnest(${[...INTERVALS]}::text[]) AS iv(name)
      CROSS JOIN LATERAL (SELECT * FROM market_klines WHERE market_id = ${marketId} AND interval = iv.name
        ORDER BY market_klines.open_time DESC LIMIT ${KLINES_IN_MEMORY}) k
      ORDER BY k.interval, k.open_time`
    const series = new Map<Interval, Series>(INTERVALS.map((iv) => [iv, newSeries()]))
    for (const r of rows) series.get(r.interval)!.klines.push(klineOf(r))
    // A full window may have older candles in Postgres: reads that reach past it go there.
    for (const s of series.values()) s.complete = s.klines.length < KLINES_IN_MEMORY
    return series
  })

/** One page of history: the candles with trades in [start, end] and the last one before start. */
export const klinePage = (marketId: number, iv: Interval, start: number, end: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<KlineRowDb>`SELECT ${klineColumns(sql)} FROM market_klines
      WHERE market_id = ${marketId} AND interval = ${iv} AND open_time BETWEEN ${start} AND ${end} ORDER BY market_klines.open_time LIMIT 1000`
    const before = yield* sql<KlineRowDb>`SELECT ${klineColumns(sql)} FROM market_klines
      WHERE market_id = ${marketId} AND interval = ${iv} AND open_time < ${start} ORDER BY market_klines.open_time DESC LIMIT 1`
    return { stored: rows.map(klineOf), before: before[0] === undefined ? undefined : klineOf(before[0]) }
  })

interface TradeRowDb {
  readonly trade_id: string
  readonly price_ticks: string
  readonly qty_lots: string
  readonly quote_qty: string
  readonly time_ms: string
  readonly buyer_is_maker: boolean
  readonly taker_order_id: string
}

const tradeOf = (r: TradeRowDb): PublicTrade => ({
  id: Number(r.trade_id),
  price: Number(r.price_ticks),
  qty: Number(r.qty_lots),
  quote: BigInt(r.quote_qty),
  time: Number(r.time_ms),
  buyerIsMaker: r.buyer_is_maker,
  takerOrder: localId(Number(r.taker_order_id))
})

const tradeColumns = (sql: SqlClient.SqlClient) =>
  sql`trade_id::text, price_ticks::text, qty_lots::text, quote_qty::text, time_ms::text, buyer_is_maker, taker_order_id::text`

/** The market's newest RECENT_TRADES trades, oldest first. */
export const recentTrades = (marketId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<TradeRowDb>`SELECT ${tradeColumns(sql)} FROM trades WHERE market_id = ${marketId} ORDER BY trades.trade_id DESC LIMIT ${RECENT_TRADES}`
    return [...rows].reverse().map(tradeOf)
  })

/** Trades after `afterId` (the candles' newest), oldest first, at most `max`: what a new owner's candles lack. */
export const tradesAfter = (marketId: number, afterId: number, max: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<TradeRowDb>`SELECT ${tradeColumns(sql)} FROM (
        SELECT * FROM trades WHERE market_id = ${marketId} AND trade_id > ${afterId} ORDER BY trades.trade_id DESC LIMIT ${max}) t ORDER BY t.trade_id`
    return rows.map(tradeOf)
  })

const SnapshotBody = Schema.parseJson(Schema.Struct({ b: Schema.Array(Level), a: Schema.Array(Level), x: Schema.Array(TradeTuple) }))
const decodeBody = Schema.decodeUnknownEither(SnapshotBody)

export const writeSnapshot = (marketId: number, s: FeedSnapshot) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const body = JSON.stringify({ b: s.bids, a: s.asks, x: s.trades.map(tradeTuple) })
    yield* sql`INSERT INTO market_data_snapshots (market_id, seq, body) VALUES (${marketId}, ${s.seq}, ${body})
      ON CONFLICT (market_id) DO UPDATE SET seq = excluded.seq, body = excluded.body, updated_at = now()
      WHERE market_data_snapshots.seq <= excluded.seq`
  })

/** The stored snapshot of a market, or undefined (none yet, or a body that does not decode). */
export const readSnapshot = (marketId: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ seq: string; body: string }>`SELECT seq::text, body FROM market_data_snapshots WHERE market_id = ${marketId}`
    const row = rows[0]
    if (row === undefined) return undefined
    const body = decodeBody(row.body)
    if (Either.isLeft(body)) return undefined
    const snapshot: FeedSnapshot = {
      seq: Number(row.seq),
      bids: body.right.b.map((l) => [l[0], l[1]] as const),
      asks: body.right.a.map((l) => [l[0], l[1]] as const),
      trades: body.right.x.map(tradeOfTuple)
    }
    return snapshot
  })
