// Public market data and the aggregator feeds as Effect handlers: the same pure answers
// (marketdata/bodies.ts, aggregators.ts) the edge's fast lane gives, so either path answers alike.
// The one answer that needs I/O, klines older than this node's memory, reads a page of Postgres.
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Either } from "effect"
import { ExchangeApi } from "../../../schemas/exchange/api.ts"
import { apiError } from "../../../schemas/exchange/errors.ts"
import { Schema } from "effect"
import * as S from "../../../schemas/exchange/marketData.ts"
import { prefix } from "../../../schemas/exchange/public.ts"
import type { FastRender, Reply } from "../../platform/http/ServiceEdge.ts"
import * as A from "../marketdata/aggregators.ts"
import * as B from "../marketdata/bodies.ts"
import { MarketData, type MarketDataShape } from "../marketdata/MarketData.ts"
import { MarketRegistry, type MarketRegistryShape } from "../markets/MarketRegistry.ts"
import { statusOf, type ApiError } from "../../../schemas/exchange/errors.ts"
import { decodeQuery, queryRecord } from "./decodeErrors.ts"

export const marketDataView = (registry: Pick<MarketRegistryShape, "find" | "all">, data: Pick<MarketDataShape, "feed">): B.MarketDataView => ({
  find: registry.find,
  all: registry.all,
  feed: data.feed,
  now: Date.now
})

export const MarketDataHandlers = HttpApiBuilder.group(ExchangeApi, "marketData", (handlers) =>
  Effect.gen(function*() {
    const data = yield* MarketData
    const view = marketDataView(yield* MarketRegistry, data)
    return handlers
      .handle("depth", ({ urlParams }) => B.depth(view, urlParams))
      .handle("trades", ({ urlParams }) => B.trades(view, urlParams))
      .handle("aggTrades", ({ urlParams }) => B.aggTrades(view, urlParams))
      .handle("klines", ({ urlParams }) =>
        Effect.flatMap(B.klines(view, urlParams), (answer) =>
          answer._tag === "Rows"
            ? Effect.succeed(answer.rows)
            : Effect.map(data.klinePage(answer.market.id, answer.interval, answer.start, answer.end), (page) => B.klinesFromPage(answer, page.stored, page.before))))
      .handle("ticker24hr", ({ urlParams }) => B.ticker24hr(view, urlParams))
      .handle("tickerPrice", ({ urlParams }) => B.tickerPrice(view, urlParams))
      .handle("bookTicker", ({ urlParams }) => B.bookTicker(view, urlParams))
      .handle("avgPrice", ({ urlParams }) => B.avgPrice(view, urlParams))
      // The edge serves the stream on every node (marketdata/sse.ts) before any request reaches
      // here; only a method the edge does not stream (HEAD) gets this far.
      .handle("stream", () => Effect.fail(apiError(-1020, "The stream answers GET only.")))
  }))

export const AggregatorHandlers = HttpApiBuilder.group(ExchangeApi, "aggregator", (handlers) =>
  Effect.gen(function*() {
    const view = marketDataView(yield* MarketRegistry, yield* MarketData)
    return handlers
      .handle("cgPairs", () => Effect.sync(() => A.cgPairs(view)))
      .handle("cgTickers", () => Effect.sync(() => A.cgTickers(view)))
      .handle("cgOrderbook", ({ urlParams }) => A.cgOrderbook(view, urlParams))
      .handle("cgHistoricalTrades", ({ urlParams }) => A.cgHistoricalTrades(view, urlParams))
      .handle("cmcSummary", () => Effect.sync(() => A.cmcSummary(view)))
      .handle("cmcTicker", () => Effect.sync(() => A.cmcTicker(view)))
      .handle("cmcOrderbook", ({ path, urlParams }) => A.cmcOrderbook(view, path.market_pair, urlParams))
      .handle("cmcTrades", ({ path }) => A.cmcTrades(view, path.market_pair))
  }))

const refusal = (e: ApiError): Reply => ({ status: statusOf(e.code), body: JSON.stringify({ code: e.code, msg: e.msg }) })

/**
 * A fast-lane route: the query decoded by the endpoint's own schema, answered by the same pure
 * function. The market-data response schemas transform nothing (`Schema<A, A>`: the type says
 * their encoded form is the body itself), so the body is written as it is; encoding a 100-level depth through the schema cost
 * 4× its JSON.stringify (measured). The integration test checks both paths give the same bytes.
 */
const fast = <P, PI, A>(params: Schema.Schema<P, PI>, _success: Schema.Schema<A, A>, answer: (p: P) => Either.Either<A, ApiError> | undefined): FastRender => {
  const decode = decodeQuery(params)
  return (query) => {
    const p = decode(queryRecord(query))
    if (!p.ok) return refusal(p.error)
    const a = answer(p.value)
    return a === undefined ? undefined : Either.isLeft(a) ? refusal(a.left) : JSON.stringify(a.right)
  }
}

/**
 * Reads that change only with a market's delta (depth, last price, best bid and ask): each query's
 * text is kept until the sequence of a market it names moves. A query without `symbol` answers for
 * every market and is kept against all their sequences; one with `symbols` is rendered each time.
 * ticker/price went through decode and encode on every call, 0.42× bare node:http against 0.6× for
 * the kept depth (issue 22, point 6). What is kept is the answer's UTF-8 bytes: a 100-level depth
 * is 6 KB, which as text was measured and encoded again on every request.
 */
const cachedBySeq = (view: B.MarketDataView, render: FastRender): FastRender => {
  const kept = new Map<string, { readonly version: string; readonly bytes: Buffer }>()
  const versionOf = (query: string): string | undefined => {
    const params = new URLSearchParams(query)
    if (params.has("symbols")) return undefined
    const symbol = params.get("symbol")
    const markets = symbol === null ? view.all() : [view.find(symbol)]
    let version = ""
    for (const m of markets) {
      const feed = m === undefined ? undefined : view.feed(m.id)
      if (m === undefined || feed === undefined) return undefined
      version += `${m.id}:${feed.seq},`
    }
    return version
  }
  return (query) => {
    const version = versionOf(query)
    const hit = kept.get(query)
    if (hit !== undefined && version !== undefined && hit.version === version) return hit.bytes
    const out = render(query)
    if (typeof out !== "string" || version === undefined) return out
    if (kept.size >= 256) kept.clear()
    const bytes = Buffer.from(out)
    kept.set(query, { version, bytes })
    return bytes
  }
}

const NoParams = Schema.Struct({})

/** The market-data reads the edge answers before Effect (all but klines older than memory and the CMC pair routes). */
export const fastMarketData = (view: B.MarketDataView): ReadonlyArray<readonly [string, FastRender]> => [
  [`${prefix}/depth`, cachedBySeq(view, fast(S.DepthParams, S.Depth, (p) => B.depth(view, p)))],
  [`${prefix}/trades`, fast(S.TradesParams, Schema.Array(S.PublicTrade), (p) => B.trades(view, p))],
  [`${prefix}/aggTrades`, fast(S.AggTradesParams, Schema.Array(S.AggTrade), (p) => B.aggTrades(view, p))],
  [`${prefix}/klines`, fast(S.KlinesParams, Schema.Array(S.KlineRow), (p) => {
    const a = B.klines(view, p)
    return Either.isLeft(a) ? Either.left(a.left) : a.right._tag === "Rows" ? Either.right(a.right.rows) : undefined
  })],
  [`${prefix}/ticker/24hr`, fast(S.TickerParams, Schema.Union(S.Ticker24hr, Schema.Array(S.Ticker24hr)), (p) => B.ticker24hr(view, p))],
  [`${prefix}/ticker/price`, cachedBySeq(view, fast(S.TickerParams, Schema.Union(S.TickerPrice, Schema.Array(S.TickerPrice)), (p) => B.tickerPrice(view, p)))],
  [`${prefix}/ticker/bookTicker`, cachedBySeq(view, fast(S.TickerParams, Schema.Union(S.BookTicker, Schema.Array(S.BookTicker)), (p) => B.bookTicker(view, p)))],
  [`${prefix}/avgPrice`, fast(S.AvgPriceParams, S.AvgPrice, (p) => B.avgPrice(view, p))],
  [`${S.coingeckoPrefix}/pairs`, fast(NoParams, Schema.Array(S.CgPair), () => Either.right(A.cgPairs(view)))],
  [`${S.coingeckoPrefix}/tickers`, fast(NoParams, Schema.Array(S.CgTicker), () => Either.right(A.cgTickers(view)))],
  [`${S.coingeckoPrefix}/orderbook`, fast(S.CgOrderbookParams, S.CgOrderbook, (p) => A.cgOrderbook(view, p))],
  [`${S.coingeckoPrefix}/historical_trades`, fast(S.CgTradesParams, S.CgTrades, (p) => A.cgHistoricalTrades(view, p))],
  [`${S.cmcPrefix}/summary`, fast(NoParams, Schema.Array(S.CmcSummary), () => Either.right(A.cmcSummary(view)))],
  [`${S.cmcPrefix}/ticker`, fast(NoParams, S.CmcTicker, () => Either.right(A.cmcTicker(view)))]
]
