// Public market-data answers, pure: from decoded parameters and this node's copy of each market
// (feed.ts) to Binance's bodies, or a refusal with Binance's code. Both the Effect handlers and the
// edge's fast lane call these, so the two paths give the same bytes. Prices and quantities are
// formatted at the market's precision (amounts.ts); sums are bigint.
import { Either } from "effect"
import { apiError, type ApiError } from "../../../schemas/exchange/errors.ts"
import type * as S from "../../../schemas/exchange/marketData.ts"
import { baseUnits, formatPrice, formatSats } from "../market/amounts.ts"
import type { Market } from "../markets/marketSpec.ts"
import { ASSET_DECIMALS } from "../markets/marketSpec.ts"
import { formatUnits } from "../units.ts"
import { DEPTH_LEVELS, Feed, type PublicTrade, RECENT_TRADES } from "./feed.ts"
import { bucketRange, fillRange, isInterval, type Interval, type Kline, type KlineRow, klinesFromMemory, openTimeOf, windowStats } from "./klines.ts"

/** What the answers read: the registry and this node's copies. */
export interface MarketDataView {
  readonly find: (symbol: string) => Market | undefined
  readonly all: () => ReadonlyArray<Market>
  readonly feed: (marketId: number) => Feed | undefined
  readonly now: () => number
}

type Answer<A> = Either.Either<A, ApiError>

const DAY_MS = 86_400_000
const AVG_PRICE_MINS = 5

const invalidSymbol = () => apiError(-1121, "Invalid symbol.")
const notValid = (name: string) => apiError(-1130, `Data sent for parameter '${name}' is not valid.`)
const SYMBOLS_RANGE = "^\\[(\"[A-Za-z0-9_/-]{1,25}\"(,\"[A-Za-z0-9_/-]{1,25}\"){0,}){0,1}\\]$"

export const feedOf = (view: MarketDataView, m: Market): Feed => view.feed(m.id) ?? Feed.empty(view.now())

export const marketOf = (view: MarketDataView, symbol: string): Answer<Market> => {
  const m = view.find(symbol)
  return m === undefined ? Either.left(invalidSymbol()) : Either.right(m)
}

/** A limit parameter: `fallback` when absent, else an integer in [min, max] (-1130 otherwise). */
export const limitOf = (text: string | undefined, fallback: number, max: number, name = "limit", min = 1): Answer<number> => {
  if (text === undefined) return Either.right(fallback)
  const n = Number(text)
  return Number.isSafeInteger(n) && n >= min && n <= max ? Either.right(n) : Either.left(notValid(name))
}

const timeOf = (text: string | undefined, name: string): Answer<number | undefined> => {
  if (text === undefined) return Either.right(undefined)
  const n = Number(text)
  return Number.isSafeInteger(n) ? Either.right(n) : Either.left(notValid(name))
}

const timeRange = (start: string | undefined, end: string | undefined) =>
  Either.gen(function*() {
    const startTime = yield* timeOf(start, "startTime")
    const endTime = yield* timeOf(end, "endTime")
    if (startTime !== undefined && endTime !== undefined && startTime > endTime) return yield* Either.left(notValid("startTime"))
    return { startTime, endTime }
  })

const zero = formatSats(0n)
const price = (m: Market, ticks: number | undefined) => (ticks === undefined ? zero : formatPrice(m.compiled, ticks))
const qty = (m: Market, lots: number | bigint | undefined) => (lots === undefined ? zero : formatUnits(lots, m.compiled.step, ASSET_DECIMALS))

// --- depth, trades, aggTrades ---

export const depth = (view: MarketDataView, p: typeof S.DepthParams.Type): Answer<typeof S.Depth.Type> =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.symbol)
    const limit = yield* limitOf(p.limit, 100, DEPTH_LEVELS)
    const f = feedOf(view, m)
    const side = (ls: Feed["bids"]) => ls.slice(0, limit).map(([pr, q]) => [price(m, pr), qty(m, q)] as const)
    return { lastUpdateId: f.seq, bids: side(f.bids), asks: side(f.asks) }
  })

const tradeBody = (m: Market, t: PublicTrade): typeof S.PublicTrade.Type => ({
  id: t.id,
  price: price(m, t.price),
  qty: qty(m, t.qty),
  quoteQty: formatSats(t.quote),
  time: t.time,
  isBuyerMaker: t.buyerIsMaker,
  isBestMatch: true
})

export const trades = (view: MarketDataView, p: typeof S.TradesParams.Type): Answer<ReadonlyArray<typeof S.PublicTrade.Type>> =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.symbol)
    const limit = yield* limitOf(p.limit, 500, RECENT_TRADES)
    return feedOf(view, m).trades.slice(-limit).map((t) => tradeBody(m, t))
  })

interface Agg {
  first: PublicTrade
  last: PublicTrade
  qty: number
}

/** Consecutive trades of one taker order at one price are one aggregate trade (Binance's rule). */
export const aggregate = (list: ReadonlyArray<PublicTrade>): Array<Agg> => {
  const out: Array<Agg> = []
  for (const t of list) {
    const cur = out[out.length - 1]
    if (cur !== undefined && cur.last.takerOrder === t.takerOrder && cur.last.price === t.price && cur.last.time === t.time && cur.last.id + 1 === t.id) {
      cur.last = t
      cur.qty += t.qty
    } else {
      out.push({ first: t, last: t, qty: t.qty })
    }
  }
  return out
}

export const aggTrades = (view: MarketDataView, p: typeof S.AggTradesParams.Type): Answer<ReadonlyArray<typeof S.AggTrade.Type>> =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.symbol)
    const limit = yield* limitOf(p.limit, 500, RECENT_TRADES)
    const { startTime, endTime } = yield* timeRange(p.startTime, p.endTime)
    const fromId = yield* timeOf(p.fromId, "fromId")
    let aggs = aggregate(feedOf(view, m).trades)
    if (fromId !== undefined) aggs = aggs.filter((a) => a.first.id >= fromId)
    if (startTime !== undefined) aggs = aggs.filter((a) => a.first.time >= startTime)
    if (endTime !== undefined) aggs = aggs.filter((a) => a.first.time <= endTime)
    const page = fromId !== undefined || startTime !== undefined ? aggs.slice(0, limit) : aggs.slice(-limit)
    return page.map((a) => ({
      a: a.first.id,
      p: price(m, a.first.price),
      q: qty(m, a.qty),
      f: a.first.id,
      l: a.last.id,
      T: a.first.time,
      m: a.first.buyerIsMaker,
      M: true
    }))
  })

// --- klines ---

export const klineTuple = (m: Market, k: KlineRow): typeof S.KlineRow.Type =>
  [k.openTime, price(m, k.open), price(m, k.high), price(m, k.low), price(m, k.close), qty(m, k.volume), k.closeTime, formatSats(k.quote), k.trades]

export type KlinesAnswer =
  | { readonly _tag: "Rows"; readonly rows: ReadonlyArray<typeof S.KlineRow.Type> }
  /** Memory does not reach back far enough: read [start, end] from Postgres and call `klinesFromPage`. */
  | { readonly _tag: "History"; readonly market: Market; readonly interval: Interval; readonly start: number; readonly end: number }

export const klines = (view: MarketDataView, p: typeof S.KlinesParams.Type): Answer<KlinesAnswer> =>
  Either.gen(function*() {
    const m = yield* marketOf(view, p.symbol)
    const iv = p.interval ?? "1m"
    if (!isInterval(iv)) return yield* Either.left(apiError(-1120, "Invalid interval."))
    const limit = yield* limitOf(p.limit, 500, 1000)
    const range = yield* timeRange(p.startTime, p.endTime)
    const q = { ...range, limit }
    const now = view.now()
    const rows = klinesFromMemory(feedOf(view, m).klines.get(iv)!, iv, q, now)
    if (rows !== undefined) return { _tag: "Rows" as const, rows: rows.map((k) => klineTuple(m, k)) }
    const r = bucketRange(iv, q, now)!
    return { _tag: "History" as const, market: m, interval: iv, start: r.start, end: r.end }
  })

/** The rows of a History answer from the page Postgres gave. */
export const klinesFromPage = (a: Extract<KlinesAnswer, { _tag: "History" }>, stored: ReadonlyArray<Kline>, before: Kline | undefined) =>
  fillRange(a.interval, a.start, a.end, stored, before).map((k) => klineTuple(a.market, k))

// --- tickers ---

/** symbol, symbols (a JSON array), or neither (every market); both is -1128. */
export const marketsOf = (view: MarketDataView, p: typeof S.TickerParams.Type): Answer<{ readonly one: boolean; readonly markets: ReadonlyArray<Market> }> =>
  Either.gen(function*() {
    if (p.symbol !== undefined && p.symbols !== undefined) return yield* Either.left(apiError(-1128, "Combination of optional parameters invalid."))
    if (p.symbol !== undefined) return { one: true, markets: [yield* marketOf(view, p.symbol)] }
    if (p.symbols === undefined) return { one: false, markets: view.all() }
    let list: unknown
    try {
      list = JSON.parse(p.symbols)
    } catch {
      list = undefined
    }
    if (!Array.isArray(list) || !list.every((s) => typeof s === "string" && /^[A-Za-z0-9_/-]{1,25}$/.test(s))) {
      return yield* Either.left(apiError(-1100, `Illegal characters found in parameter 'symbols'; legal range is '${SYMBOLS_RANGE}'.`))
    }
    const markets: Array<Market> = []
    for (const s of list as Array<string>) markets.push(yield* marketOf(view, s))
    return { one: false, markets }
  })

/** Satoshis of quote per whole base, from quote satoshis and lots: the volume-weighted price. */
const weighted = (m: Market, quote: bigint, lots: bigint): string => {
  const base = baseUnits(m.compiled, 1) * lots
  return base === 0n ? zero : formatSats((quote * 10n ** BigInt(ASSET_DECIMALS)) / base)
}

/** Percent with 3 decimals, as Binance prints priceChangePercent. */
const percent = (from: number, to: number): string =>
  from === 0 ? "0.000" : formatUnits((BigInt(to - from) * 100_000n) / BigInt(from), { digits: 1n, scale: 3 })

export const ticker24hrOf = (m: Market, f: Feed, now: number): typeof S.Ticker24hr.Type => {
  const from = openTimeOf("1m", now - DAY_MS)
  const st = windowStats(f.klines.get("1m")!.klines, from)
  const last = f.lastTrade()
  const lastPrice = last?.price ?? 0
  const open = st.open ?? lastPrice
  const bid = f.bids[0], ask = f.asks[0]
  return {
    symbol: m.symbol,
    priceChange: formatUnits(lastPrice - open, m.compiled.tick, ASSET_DECIMALS),
    priceChangePercent: percent(open, lastPrice),
    weightedAvgPrice: st.volume > 0n ? weighted(m, st.quote, st.volume) : price(m, lastPrice),
    prevClosePrice: price(m, st.prevClose ?? (st.open === undefined ? lastPrice : undefined)),
    lastPrice: price(m, lastPrice),
    lastQty: qty(m, last?.qty ?? 0),
    bidPrice: price(m, bid?.[0]),
    bidQty: qty(m, bid?.[1]),
    askPrice: price(m, ask?.[0]),
    askQty: qty(m, ask?.[1]),
    openPrice: price(m, open),
    highPrice: price(m, st.high ?? lastPrice),
    lowPrice: price(m, st.low ?? lastPrice),
    volume: qty(m, st.volume),
    quoteVolume: formatSats(st.quote),
    openTime: now - DAY_MS,
    closeTime: now,
    firstId: st.firstId,
    lastId: st.lastId,
    count: st.trades
  }
}

const perMarket = <A>(view: MarketDataView, p: typeof S.TickerParams.Type, body: (m: Market, f: Feed) => A): Answer<A | ReadonlyArray<A>> =>
  Either.map(marketsOf(view, p), ({ one, markets }) => {
    const list = markets.map((m) => body(m, feedOf(view, m)))
    return one ? list[0]! : list
  })

export const ticker24hr = (view: MarketDataView, p: typeof S.TickerParams.Type) => perMarket(view, p, (m, f) => ticker24hrOf(m, f, view.now()))

export const tickerPrice = (view: MarketDataView, p: typeof S.TickerParams.Type) =>
  perMarket(view, p, (m, f): typeof S.TickerPrice.Type => ({ symbol: m.symbol, price: price(m, f.lastTrade()?.price ?? 0) }))

export const bookTickerOf = (m: Market, f: Feed): typeof S.BookTicker.Type => ({
  symbol: m.symbol,
  bidPrice: price(m, f.bids[0]?.[0]),
  bidQty: qty(m, f.bids[0]?.[1]),
  askPrice: price(m, f.asks[0]?.[0]),
  askQty: qty(m, f.asks[0]?.[1])
})

export const bookTicker = (view: MarketDataView, p: typeof S.TickerParams.Type) => perMarket(view, p, bookTickerOf)

export const avgPrice = (view: MarketDataView, p: typeof S.AvgPriceParams.Type): Answer<typeof S.AvgPrice.Type> =>
  Either.map(marketOf(view, p.symbol), (m) => {
    const f = feedOf(view, m)
    const now = view.now()
    const st = windowStats(f.klines.get("1m")!.klines, openTimeOf("1m", now - AVG_PRICE_MINS * 60_000))
    const last = f.lastTrade()
    return {
      mins: AVG_PRICE_MINS,
      price: st.volume > 0n ? weighted(m, st.quote, st.volume) : price(m, last?.price ?? 0),
      closeTime: last?.time ?? now
    }
  })
