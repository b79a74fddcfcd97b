// Public market data (spec: Endpoints; Binance's shapes, which the spec leaves "not shown"): the
// parameters and response bodies of depth, trades, aggTrades, klines, the tickers and avgPrice,
// the SSE stream, and the CoinGecko- and CoinMarketCap-format aggregator feeds. Served from every
// node's memory (src/exchange/marketdata/); the OpenAPI document is generated from these values.
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Weight } from "../common/Weight.ts"
import { Digits, SymbolText } from "./params.ts"
import { prefix } from "./public.ts"

const Dec = Schema.String.annotations({ description: "Decimal string at the market's precision" })
const Limit = (text: string) => Schema.optional(Digits.annotations({ description: text }))
const Ms = (text: string) => Schema.optional(Digits.annotations({ description: `Unix milliseconds; ${text}` }))

export const DepthParams = Schema.Struct({ symbol: SymbolText, limit: Limit("Levels a side: default 100, 1 to 1000") })
export const TradesParams = Schema.Struct({ symbol: SymbolText, limit: Limit("Default 500, 1 to 1000") })
export const AggTradesParams = Schema.Struct({
  symbol: SymbolText,
  fromId: Schema.optional(Digits.annotations({ description: "Aggregate trades from this id (the id of its first trade)" })),
  startTime: Ms("inclusive"),
  endTime: Ms("inclusive"),
  limit: Limit("Default 500, 1 to 1000")
})
export const KlinesParams = Schema.Struct({
  symbol: SymbolText,
  interval: Schema.optional(Schema.String.annotations({ description: "1s 1m 3m 5m 15m 30m 1h 2h 4h 6h 8h 12h 1d 3d 1w 1M; default 1m" })),
  startTime: Ms("candles that open at or after it"),
  endTime: Ms("candles that open at or before it"),
  limit: Limit("Default 500, 1 to 1000")
})
/** One symbol, a JSON array of them, or neither (every market). */
export const TickerParams = Schema.Struct({
  symbol: Schema.optional(SymbolText),
  symbols: Schema.optional(Schema.String.annotations({ description: "A JSON array of symbols, e.g. [\"SHRDDUSD\",\"GOLDDUSD\"]" }))
})
export const AvgPriceParams = Schema.Struct({ symbol: SymbolText })
export const StreamParams = Schema.Struct({
  symbol: SymbolText,
  streams: Schema.optional(Schema.String.annotations({ description: "Comma separated subset of ticker,depth,trade; default all three" }))
})

const PriceQty = Schema.Tuple(Dec, Dec)

export const Depth = Schema.Struct({
  lastUpdateId: Schema.Number.annotations({ description: "The market's data sequence number (the SSE stream's event id)" }),
  bids: Schema.Array(PriceQty),
  asks: Schema.Array(PriceQty)
})

export const PublicTrade = Schema.Struct({
  id: Schema.Number,
  price: Dec,
  qty: Dec,
  quoteQty: Dec,
  time: Schema.Number,
  isBuyerMaker: Schema.Boolean,
  isBestMatch: Schema.Boolean
})

export const AggTrade = Schema.Struct({
  a: Schema.Number.annotations({ description: "Aggregate id: the id of its first trade" }),
  p: Dec,
  q: Dec,
  f: Schema.Number,
  l: Schema.Number,
  T: Schema.Number,
  m: Schema.Boolean,
  M: Schema.Boolean
})

/** The spec's nine columns: openTime, open, high, low, close, volume, closeTime, quoteVolume, trades. */
export const KlineRow = Schema.Tuple(Schema.Number, Dec, Dec, Dec, Dec, Dec, Schema.Number, Dec, Schema.Number)

export const Ticker24hr = Schema.Struct({
  symbol: Schema.String,
  priceChange: Dec,
  priceChangePercent: Schema.String,
  weightedAvgPrice: Dec,
  prevClosePrice: Dec,
  lastPrice: Dec,
  lastQty: Dec,
  bidPrice: Dec,
  bidQty: Dec,
  askPrice: Dec,
  askQty: Dec,
  openPrice: Dec,
  highPrice: Dec,
  lowPrice: Dec,
  volume: Dec,
  quoteVolume: Dec,
  openTime: Schema.Number,
  closeTime: Schema.Number,
  firstId: Schema.Number,
  lastId: Schema.Number,
  count: Schema.Number
})
export const TickerPrice = Schema.Struct({ symbol: Schema.String, price: Dec })
export const BookTicker = Schema.Struct({ symbol: Schema.String, bidPrice: Dec, bidQty: Dec, askPrice: Dec, askQty: Dec })
export const AvgPrice = Schema.Struct({ mins: Schema.Number, price: Dec, closeTime: Schema.Number })

const oneOrMany = <A, I>(s: Schema.Schema<A, I>) => Schema.Union(s, Schema.Array(s))

// --- CoinGecko exchange integration (pairs, tickers, orderbook, historical_trades) ---
export const CgPair = Schema.Struct({ ticker_id: Schema.String, base: Schema.String, target: Schema.String })
export const CgTicker = Schema.Struct({
  ticker_id: Schema.String,
  base_currency: Schema.String,
  target_currency: Schema.String,
  last_price: Dec,
  base_volume: Dec,
  target_volume: Dec,
  bid: Dec,
  ask: Dec,
  high: Dec,
  low: Dec
})
export const CgOrderbookParams = Schema.Struct({
  ticker_id: SymbolText,
  depth: Schema.optional(Digits.annotations({ description: "Levels in all, half a side (0: the whole top 1000 a side); default 100" }))
})
export const CgOrderbook = Schema.Struct({ ticker_id: Schema.String, timestamp: Schema.String, bids: Schema.Array(PriceQty), asks: Schema.Array(PriceQty) })
export const CgTradesParams = Schema.Struct({
  ticker_id: SymbolText,
  type: Schema.optional(Schema.Literal("buy", "sell")),
  limit: Limit("Default 500, 0 (all in memory) to 1000"),
  start_time: Ms("inclusive"),
  end_time: Ms("inclusive")
})
export const CgTrade = Schema.Struct({
  trade_id: Schema.Number,
  price: Dec,
  base_volume: Dec,
  target_volume: Dec,
  trade_timestamp: Schema.Number,
  type: Schema.Literal("buy", "sell")
})
export const CgTrades = Schema.Struct({ buy: Schema.Array(CgTrade), sell: Schema.Array(CgTrade) })

// --- CoinMarketCap exchange API (summary, ticker, orderbook, trades) ---
export const CmcSummary = Schema.Struct({
  trading_pairs: Schema.String,
  base_currency: Schema.String,
  quote_currency: Schema.String,
  last_price: Dec,
  lowest_ask: Dec,
  highest_bid: Dec,
  base_volume: Dec,
  quote_volume: Dec,
  price_change_percent_24h: Schema.String,
  highest_price_24h: Dec,
  lowest_price_24h: Dec
})
export const CmcTicker = Schema.Record({
  key: Schema.String,
  value: Schema.Struct({ base_id: Schema.String, quote_id: Schema.String, last_price: Dec, base_volume: Dec, quote_volume: Dec, isFrozen: Schema.Literal(0, 1) })
})
export const CmcOrderbookParams = Schema.Struct({
  depth: Schema.optional(Digits.annotations({ description: "Levels in all, half a side (0: the whole top 1000 a side); default 100" })),
  level: Schema.optional(Schema.Literal("1", "2", "3").annotations({ description: "1: best bid and ask; 2 and 3: the aggregated book (no per-order book is published)" }))
})
export const CmcOrderbook = Schema.Struct({ timestamp: Schema.Number, bids: Schema.Array(PriceQty), asks: Schema.Array(PriceQty) })
export const CmcTrade = Schema.Struct({
  trade_id: Schema.Number,
  price: Dec,
  base_volume: Dec,
  quote_volume: Dec,
  timestamp: Schema.Number,
  type: Schema.Literal("buy", "sell")
})

/** The stream's body is text/event-stream, documented here as text. */
const EventStream = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })).annotations({
  description: "Server-Sent Events: open, ticker, depth, trade, close, error; every event has id: <sequence>"
})

const get = <const Name extends string, const Path extends `/${string}`>(name: Name, path: Path, weight: number, summary: string) =>
  HttpApiEndpoint.get(name, path).annotate(Weight, weight).annotate(OpenApi.Summary, `${summary} (weight ${weight})`)

export const MarketDataGroup = HttpApiGroup.make("marketData")
  .add(get("depth", `${prefix}/depth`, 5, "Aggregated order book: ?symbol=SHRDDUSD&limit=100").setUrlParams(DepthParams).addSuccess(Depth))
  .add(get("trades", `${prefix}/trades`, 5, "Recent public trades: ?symbol=SHRDDUSD&limit=500").setUrlParams(TradesParams).addSuccess(Schema.Array(PublicTrade)))
  .add(get("aggTrades", `${prefix}/aggTrades`, 4, "Trades of one taker order at one price, aggregated: ?symbol=SHRDDUSD&limit=500").setUrlParams(AggTradesParams).addSuccess(Schema.Array(AggTrade)))
  .add(get("klines", `${prefix}/klines`, 5, "Candles, nine columns: ?symbol=SHRDDUSD&interval=1m&limit=500").setUrlParams(KlinesParams).addSuccess(Schema.Array(KlineRow)))
  .add(get("ticker24hr", `${prefix}/ticker/24hr`, 5, "24-hour statistics: ?symbol=SHRDDUSD, ?symbols=[\"SHRDDUSD\"], or all").setUrlParams(TickerParams).addSuccess(oneOrMany(Ticker24hr)))
  .add(get("tickerPrice", `${prefix}/ticker/price`, 2, "Last price: ?symbol=SHRDDUSD, ?symbols=[…], or all").setUrlParams(TickerParams).addSuccess(oneOrMany(TickerPrice)))
  .add(get("bookTicker", `${prefix}/ticker/bookTicker`, 2, "Best bid and ask: ?symbol=SHRDDUSD, ?symbols=[…], or all").setUrlParams(TickerParams).addSuccess(oneOrMany(BookTicker)))
  .add(get("avgPrice", `${prefix}/avgPrice`, 2, "Average price of the last 5 minutes: ?symbol=SHRDDUSD").setUrlParams(AvgPriceParams).addSuccess(AvgPrice))
  .add(get("stream", `${prefix}/stream`, 2, "SSE stream: ?symbol=SHRDDUSD&streams=ticker,depth,trade").setUrlParams(StreamParams).addSuccess(EventStream))
  .annotate(OpenApi.Title, "Market data")

export const coingeckoPrefix = "/api/public/coingecko" as const
export const cmcPrefix = "/api/public/cmc" as const

export const AggregatorGroup = HttpApiGroup.make("aggregator")
  .add(get("cgPairs", `${coingeckoPrefix}/pairs`, 1, "CoinGecko: every pair").addSuccess(Schema.Array(CgPair)))
  .add(get("cgTickers", `${coingeckoPrefix}/tickers`, 5, "CoinGecko: 24-hour figures of every pair").addSuccess(Schema.Array(CgTicker)))
  .add(get("cgOrderbook", `${coingeckoPrefix}/orderbook`, 5, "CoinGecko: order book: ?ticker_id=SHRD_DUSD&depth=100").setUrlParams(CgOrderbookParams).addSuccess(CgOrderbook))
  .add(get("cgHistoricalTrades", `${coingeckoPrefix}/historical_trades`, 5, "CoinGecko: recent trades: ?ticker_id=SHRD_DUSD&limit=500").setUrlParams(CgTradesParams).addSuccess(CgTrades))
  .add(get("cmcSummary", `${cmcPrefix}/summary`, 5, "CoinMarketCap: summary of every pair").addSuccess(Schema.Array(CmcSummary)))
  .add(get("cmcTicker", `${cmcPrefix}/ticker`, 5, "CoinMarketCap: ticker of every pair").addSuccess(CmcTicker))
  .add(get("cmcOrderbook", `${cmcPrefix}/orderbook/:market_pair`, 5, "CoinMarketCap: order book: /orderbook/SHRD_DUSD?depth=100&level=2").setPath(Schema.Struct({ market_pair: SymbolText })).setUrlParams(CmcOrderbookParams).addSuccess(CmcOrderbook))
  .add(get("cmcTrades", `${cmcPrefix}/trades/:market_pair`, 5, "CoinMarketCap: recent trades: /trades/SHRD_DUSD").setPath(Schema.Struct({ market_pair: SymbolText })).addSuccess(Schema.Array(CmcTrade)))
  .annotate(OpenApi.Title, "Aggregator feeds")
