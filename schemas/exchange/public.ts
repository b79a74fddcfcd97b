// Public exchange endpoints (spec: Endpoints): no credentials, weights per client IP. Every route is
// also answered under /api/v3 so unchanged Binance clients work (src/exchange/http/ExchangeEdge.ts).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"

export const prefix = "/api/public/v1" as const

export const Empty = Schema.Struct({})

export const ServerTime = Schema.Struct({
  serverTime: Schema.Number.annotations({ description: "Unix milliseconds" })
})

export const IndexDocument = Schema.Struct({
  exchange: Schema.String,
  version: Schema.String,
  custody: Schema.Literal("non-custodial"),
  docs: Schema.String,
  openapi: Schema.String,
  public: Schema.Record({ key: Schema.String, value: Schema.String }),
  signed: Schema.Record({ key: Schema.String, value: Schema.String }),
  /** `aggregator` is the spec's feed path; `coingecko` and `coinmarketcap` list each format's endpoints. */
  compat: Schema.Struct({
    aggregator: Schema.String,
    coingecko: Schema.Record({ key: Schema.String, value: Schema.String }),
    coinmarketcap: Schema.Record({ key: Schema.String, value: Schema.String })
  })
})

/** One of Binance's rate-limit rows; both the per-key and the per-IP budget are listed. */
export const RateLimit = Schema.Struct({
  rateLimitType: Schema.Literal("REQUEST_WEIGHT"),
  interval: Schema.Literal("MINUTE"),
  intervalNum: Schema.Number,
  limit: Schema.Number,
  /** Not Binance's: which budget this row is. Binance clients ignore unknown fields. */
  scope: Schema.Literal("KEY", "IP")
})

/** A filter row (PRICE_FILTER, LOT_SIZE, MIN_NOTIONAL, NOTIONAL): its type and decimal-string fields. */
export const Filter = Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) })

export const SymbolInfo = Schema.Struct({
  symbol: Schema.String,
  status: Schema.String,
  baseAsset: Schema.String,
  baseAssetPrecision: Schema.Number,
  quoteAsset: Schema.String,
  quotePrecision: Schema.Number,
  quoteAssetPrecision: Schema.Number,
  baseCommissionPrecision: Schema.Number,
  quoteCommissionPrecision: Schema.Number,
  orderTypes: Schema.Array(Schema.String),
  icebergAllowed: Schema.Boolean,
  ocoAllowed: Schema.Boolean,
  otoAllowed: Schema.Boolean,
  quoteOrderQtyMarketAllowed: Schema.Boolean,
  allowTrailingStop: Schema.Boolean,
  cancelReplaceAllowed: Schema.Boolean,
  isSpotTradingAllowed: Schema.Boolean,
  isMarginTradingAllowed: Schema.Boolean,
  filters: Schema.Array(Filter),
  permissions: Schema.Array(Schema.String),
  permissionSets: Schema.Array(Schema.Array(Schema.String)),
  defaultSelfTradePreventionMode: Schema.String,
  allowedSelfTradePreventionModes: Schema.Array(Schema.String)
})

export const ExchangeInfo = Schema.Struct({
  timezone: Schema.Literal("UTC"),
  serverTime: Schema.Number,
  rateLimits: Schema.Array(RateLimit),
  exchangeFilters: Schema.Array(Filter),
  /** Every listed market (the node's in-memory registry). */
  symbols: Schema.Array(SymbolInfo)
})
export type ExchangeInfo = typeof ExchangeInfo.Type

export const PublicGroup = HttpApiGroup.make("public")
  .add(HttpApiEndpoint.get("index", prefix).addSuccess(IndexDocument)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Index document: endpoints, docs and feeds (weight 1)"))
  .add(HttpApiEndpoint.get("ping", `${prefix}/ping`).addSuccess(Empty)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Connectivity check (weight 1)"))
  .add(HttpApiEndpoint.get("time", `${prefix}/time`).addSuccess(ServerTime)
    .annotate(Weight, 1)
    .annotate(OpenApi.Summary, "Server time in unix milliseconds (weight 1)"))
  .add(HttpApiEndpoint.get("exchangeInfo", `${prefix}/exchangeInfo`).addSuccess(ExchangeInfo)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Symbols, filters, precision and rate limits (weight 10)"))
  .annotate(OpenApi.Title, "Public")
