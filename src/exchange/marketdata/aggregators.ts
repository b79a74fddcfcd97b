// The aggregator feeds, pure: CoinGecko's exchange integration (pairs, tickers, orderbook,
// historical_trades) and CoinMarketCap's exchange API (summary, ticker, orderbook, trades), from
// the same copies and the same 24-hour figures as ticker/24hr. A pair is BASE_QUOTE, as both
// aggregators write it; every symbol form the exchange accepts is taken as input.
import { Either } from "effect"
import type * as S from "../../../schemas/exchange/marketData.ts"
import { formatPrice, formatSats } from "../market/amounts.ts"
import type { Market } from "../markets/marketSpec.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"
import { formatUnits } from "../units.ts"
import { feedOf, limitOf, marketOf, type MarketDataView, ticker24hrOf } from "./bodies.ts"
import { DEPTH_LEVELS, type Feed, type PublicTrade, RECENT_TRADES } from "./feed.ts"

const pairOf = (m: Market) => `${m.base}_${m.quote}`
const qty = (m: Market, lots: number) => formatUnits(lots, m.compiled.step, ASSET_DECIMALS)
/** "depth" is levels in all (half a side), 0 for everything we hold, as both aggregators define it. */
const sides = (view: MarketDataView, m: Market, depthText: string | undefined) =>
  Either.map(limitOf(depthText, 100, 2 * DEPTH_LEVELS, "depth", 0), (depth) => {
    const f = feedOf(view, m)
    const n = depth === 0 ? DEPTH_LEVELS : Math.max(1, Math.ceil(depth / 2))
    const side = (ls: Feed["bids"]) => ls.slice(0, n).map(([p, q]) => [formatPrice(m.compiled, p), qty(m, q)] as const)
    return { bids: side(f.bids), asks: side(f.asks) }
  })
/** The taker's side: a trade whose buyer made the book was a sell. */
const takerType = (t: PublicTrade) => (t.buyerIsMaker ? "sell" as const : "buy" as const)

export const cgPairs = (view: MarketDataView): ReadonlyArray<typeof S.CgPair.Type> =>
  view.all().map((m) => ({ ticker_id: pairOf(m), base: m.base, target: m.quote }))

export const cgTickers = (view: MarketDataView): ReadonlyArray<typeof S.CgTicker.Type> =>
  view.all().map((m) => {
    const t = ticker24hrOf(m, feedOf(view, m), view.now())
    return {
      ticker_id: pairOf(m), base_currency: m.base, target_currency: m.quote, last_price: t.lastPrice, base_volume: t.volume,
      target_volume: t.quoteVolume, bid: t.bidPrice, ask: t.askPrice, high: t.highPrice, low: t.lowPrice
    }
  })

export const cgOrderbook = (view: MarketDataView, p: typeof S.CgOrderbookParams.Type) =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.ticker_id)
    const book = yield* sides(view, m, p.depth)
    return { ticker_id: pairOf(m), timestamp: String(view.now()), ...book }
  })

const cgTrade = (m: Market, t: PublicTrade): typeof S.CgTrade.Type => ({
  trade_id: t.id, price: formatPrice(m.compiled, t.price), base_volume: qty(m, t.qty), target_volume: formatSats(t.quote), trade_timestamp: t.time, type: takerType(t)
})

export const cgHistoricalTrades = (view: MarketDataView, p: typeof S.CgTradesParams.Type) =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.ticker_id)
    const limit = yield* limitOf(p.limit, 500, RECENT_TRADES, "limit", 0)
    const start = p.start_time === undefined ? -Infinity : Number(p.start_time)
    const end = p.end_time === undefined ? Infinity : Number(p.end_time)
    const list = feedOf(view, m).trades.filter((t) => t.time >= start && t.time <= end).reverse()
    const of = (type: "buy" | "sell") => p.type !== undefined && p.type !== type ? [] : list.filter((t) => takerType(t) === type).slice(0, limit === 0 ? RECENT_TRADES : limit).map((t) => cgTrade(m, t))
    return { buy: of("buy"), sell: of("sell") }
  })

export const cmcSummary = (view: MarketDataView): ReadonlyArray<typeof S.CmcSummary.Type> =>
  view.all().map((m) => {
    const t = ticker24hrOf(m, feedOf(view, m), view.now())
    return {
      trading_pairs: pairOf(m), base_currency: m.base, quote_currency: m.quote, last_price: t.lastPrice, lowest_ask: t.askPrice,
      highest_bid: t.bidPrice, base_volume: t.volume, quote_volume: t.quoteVolume, price_change_percent_24h: t.priceChangePercent,
      highest_price_24h: t.highPrice, lowest_price_24h: t.lowPrice
    }
  })

export const cmcTicker = (view: MarketDataView): typeof S.CmcTicker.Type =>
  Object.fromEntries(view.all().map((m) => {
    const t = ticker24hrOf(m, feedOf(view, m), view.now())
    return [pairOf(m), { base_id: m.base, quote_id: m.quote, last_price: t.lastPrice, base_volume: t.volume, quote_volume: t.quoteVolume, isFrozen: m.status === "TRADING" ? 0 as const : 1 as const }]
  }))

export const cmcOrderbook = (view: MarketDataView, pair: string, p: typeof S.CmcOrderbookParams.Type) =>
  Either.gen(function*() {
    const m = yield* marketOf(view, pair)
    const book = yield* sides(view, m, p.level === "1" ? "2" : p.depth)
    return { timestamp: view.now(), ...book }
  })

export const cmcTrades = (view: MarketDataView, pair: string) =>
  Either.map(marketOf(view, pair), (m) =>
    [...feedOf(view, m).trades].reverse().map((t): typeof S.CmcTrade.Type => ({
      trade_id: t.id, price: formatPrice(m.compiled, t.price), base_volume: qty(m, t.qty), quote_volume: formatSats(t.quote), timestamp: t.time, type: takerType(t)
    })))
