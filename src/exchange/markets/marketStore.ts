// The market registry in Postgres: assets (Omni properties on the ledger) and markets. Writers
// notify `marketsChannel` in their transaction, so every node's registry reloads at commit.
import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Either } from "effect"
import type { RegisteredList } from "../../platform/ledger/LedgerRegistry.ts"
import { checkNewMarket, compileRow, type Market, MarketInvalid, type NewMarket } from "./marketSpec.ts"

export const marketsChannel = "shardline_markets"

interface Row {
  readonly id: number
  readonly symbol: string
  readonly base: string
  readonly quote: string
  readonly base_property: string
  readonly quote_property: string
  readonly tick_size: string
  readonly step_size: string
  readonly min_price: string
  readonly max_price: string
  readonly min_qty: string
  readonly max_qty: string
  readonly min_notional: string
  readonly max_notional: string
  readonly status: "TRADING" | "HALT" | "BREAK"
}

const toMarket = (r: Row): Market =>
  compileRow({
    id: Number(r.id),
    symbol: r.symbol,
    base: r.base,
    quote: r.quote,
    baseProperty: Number(r.base_property),
    quoteProperty: Number(r.quote_property),
    status: r.status,
    filters: {
      tickSize: r.tick_size,
      stepSize: r.step_size,
      minPrice: r.min_price,
      maxPrice: r.max_price,
      minQty: r.min_qty,
      maxQty: r.max_qty,
      minNotional: r.min_notional,
      maxNotional: r.max_notional
    }
  })

/** Every listed market, by id. */
export const listMarkets: Effect.Effect<ReadonlyArray<Market>, SqlError.SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<Row>`SELECT m.id, m.symbol, m.base, m.quote, b.property_id::text AS base_property, q.property_id::text AS quote_property,
        m.tick_size, m.step_size, m.min_price, m.max_price, m.min_qty, m.max_qty, m.min_notional, m.max_notional, m.status
      FROM markets m JOIN exchange_assets b ON b.code = m.base JOIN exchange_assets q ON q.code = m.quote
      ORDER BY m.id`.pipe(Effect.map((rows) => rows.map(toMarket)))
)

export interface ExchangeAsset {
  readonly code: string
  readonly propertyId: number
  readonly decimals: number
}

export const listAssets: Effect.Effect<ReadonlyArray<ExchangeAsset>, SqlError.SqlError, SqlClient.SqlClient> = Effect.flatMap(
  SqlClient.SqlClient,
  (sql) =>
    sql<{ code: string; property_id: string; decimals: number }>`SELECT code, property_id::text AS property_id, decimals FROM exchange_assets ORDER BY code`.pipe(
      Effect.map((rows) => rows.map((r) => ({ code: r.code, propertyId: Number(r.property_id), decimals: r.decimals })))
    )
)

/** Whether `code` is a registered market asset (exactly that code). */
export const isAsset = (code: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(sql`SELECT 1 FROM exchange_assets WHERE code = ${code}`, (rows) => rows.length > 0))

/** The market assets as the platform's LedgerRegistry lists them (issued by the asset issuer). */
export const registeredProperties: RegisteredList = Effect.map(listAssets, (assets) => assets.map((a) => ({ code: a.code, propertyId: a.propertyId })))

/** Registers a market asset (an Omni property on the ledger); the same code and property again is a no-op. */
export const addAsset = (asset: ExchangeAsset) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ property_id: string }>`INSERT INTO exchange_assets (code, property_id, decimals)
      VALUES (${asset.code}, ${asset.propertyId}, ${asset.decimals})
      ON CONFLICT (code) DO UPDATE SET code = EXCLUDED.code RETURNING property_id::text AS property_id`
    if (Number(rows[0]!.property_id) !== asset.propertyId) {
      return yield* new MarketInvalid({ message: `asset ${asset.code} is already property ${rows[0]!.property_id}, not ${asset.propertyId}` })
    }
    yield* sql`SELECT pg_notify(${marketsChannel}, ${asset.code})`
  })

/**
 * Lists a new market in one transaction: the next free id, both assets registered, then notify.
 * An existing symbol is refused (markets are not edited in place: their ids are in every order).
 */
export const addMarket = (spec: NewMarket) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* Effect.gen(function*() {
      // One lister at a time: the id is max + 1.
      yield* sql`LOCK TABLE markets IN SHARE ROW EXCLUSIVE MODE`
      const next = yield* sql<{ id: number }>`SELECT COALESCE(MAX(id), 0) + 1 AS id FROM markets`
      const checked = checkNewMarket(spec, Number(next[0]!.id))
      if (Either.isLeft(checked)) return yield* checked.left
      const m = checked.right
      const assets = yield* sql<{ code: string }>`SELECT code FROM exchange_assets WHERE code IN (${m.base}, ${m.quote})`
      for (const code of [m.base, m.quote]) {
        if (!assets.some((a) => a.code === code)) {
          return yield* new MarketInvalid({ message: `asset ${code} is not registered (an Omni property on the ledger); known: see markets list` })
        }
      }
      const exists = yield* sql`SELECT 1 FROM markets WHERE symbol = ${m.symbol}`
      if (exists.length > 0) return yield* new MarketInvalid({ message: `market ${m.symbol} already exists` })
      const f = m.filters
      yield* sql`INSERT INTO markets (id, symbol, base, quote, tick_size, step_size, min_price, max_price, min_qty, max_qty, min_notional, max_notional)
        VALUES (${m.id}, ${m.symbol}, ${m.base}, ${m.quote}, ${f.tickSize}, ${f.stepSize}, ${f.minPrice}, ${f.maxPrice},
          ${f.minQty}, ${f.maxQty}, ${f.minNotional}, ${f.maxNotional})`
      yield* sql`SELECT pg_notify(${marketsChannel}, ${m.symbol})`
      const listed = (yield* listMarkets).find((x) => x.symbol === m.symbol)
      return listed!
    }).pipe(sql.withTransaction)
  })
