// The edge's kept market-data answers (issue 22.6): depth, ticker/price and bookTicker are kept as
// their UTF-8 bytes per query until the sequence of a market they name moves, so a read between two
// batches is a map hit and a write of bytes encoded once; the bytes are always what the route's pure
// function answers for the copy as it is now.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { prefix } from "../../../schemas/exchange/public.ts"
import { fastMarketData } from "../../../src/exchange/http/MarketDataHandlers.ts"
import * as B from "../../../src/exchange/marketdata/bodies.ts"
import { Feed, type PublicTrade } from "../../../src/exchange/marketdata/feed.ts"
import { quoteUnits } from "../../../src/exchange/market/amounts.ts"
import { checkNewMarket } from "../../../src/exchange/markets/marketSpec.ts"
import { normalizeSymbol } from "../../../src/exchange/markets/symbols.ts"

const shrd = Either.getOrThrow(checkNewMarket({ base: "SHRD", quote: "DUSD", tickSize: "0.0001", stepSize: "0.01", minNotional: "1" }, 1))
const gold = Either.getOrThrow(checkNewMarket({ base: "GOLD", quote: "DUSD", tickSize: "0.0001", stepSize: "0.01", minNotional: "1" }, 2))
const now = Date.UTC(2024, 0, 2)
const trade = (id: number, price: number): PublicTrade => ({ id, price, qty: 100, quote: quoteUnits(shrd.compiled, price, 100), time: now, buyerIsMaker: false, takerOrder: id })

const world = () => {
  const feeds = new Map([[1, Feed.empty(now)], [2, Feed.empty(now)]])
  feeds.get(1)!.apply({ marketId: 1, seq: 1, time: now, bids: [[12_000, 150]], asks: [[12_500, 300]], trades: [trade(1, 12_100)] })
  const markets = [shrd, gold]
  const view = { find: (s: string) => markets.find((m) => m.symbol === normalizeSymbol(s)), all: () => markets, feed: (id: number) => feeds.get(id), now: () => now }
  const routes = new Map(fastMarketData(view))
  return { view, feeds, route: (path: string) => routes.get(`${prefix}${path}`)! }
}

const parsed = (out: unknown) => {
  expect(Buffer.isBuffer(out)).toBe(true)
  return JSON.parse((out as Buffer).toString("utf8")) as unknown
}

describe("kept market-data answers", () => {
  it("keeps depth's bytes until the market's sequence moves, then answers the new book", () => {
    const { view, feeds, route } = world()
    const depth = route("/depth")
    const first = depth("symbol=SHRDDUSD&limit=5")
    expect(parsed(first)).toEqual(Either.getOrThrow(B.depth(view, { symbol: "SHRDDUSD", limit: "5" })))
    // Encoded once: the same bytes while nothing moved.
    expect(depth("symbol=SHRDDUSD&limit=5")).toBe(first)
    feeds.get(1)!.apply({ marketId: 1, seq: 2, time: now, bids: [[12_100, 10]], asks: [], trades: [] })
    const second = depth("symbol=SHRDDUSD&limit=5")
    expect(second).not.toBe(first)
    expect(parsed(second)).toEqual({ lastUpdateId: 2, bids: [["1.21000000", "0.10000000"], ["1.20000000", "1.50000000"]], asks: [["1.25000000", "3.00000000"]] })
  })

  it("keeps ticker/price for one market and for all, each until a market it names moves", () => {
    const { feeds, route } = world()
    const price = route("/ticker/price")
    const one = price("symbol=SHRDDUSD")
    const all = price("")
    expect(parsed(one)).toEqual({ symbol: "SHRDDUSD", price: "1.21000000" })
    expect(parsed(all)).toEqual([{ symbol: "SHRDDUSD", price: "1.21000000" }, { symbol: "GOLDDUSD", price: "0.00000000" }])
    expect(price("symbol=SHRDDUSD")).toBe(one)
    expect(price("")).toBe(all)
    // A trade on the other market: the one-market answer stays, the all-markets answer moves.
    feeds.get(2)!.apply({ marketId: 2, seq: 7, time: now, bids: [], asks: [], trades: [trade(1, 30_000)] })
    expect(price("symbol=SHRDDUSD")).toBe(one)
    expect(parsed(price(""))).toEqual([{ symbol: "SHRDDUSD", price: "1.21000000" }, { symbol: "GOLDDUSD", price: "3.00000000" }])
  })

  it("renders `symbols` each time and keeps no refusal", () => {
    const { route } = world()
    const book = route("/ticker/bookTicker")
    const listed = book(`symbols=["SHRDDUSD"]`)
    expect(typeof listed).toBe("string")
    expect(JSON.parse(listed as string)).toEqual([{ symbol: "SHRDDUSD", bidPrice: "1.20000000", bidQty: "1.50000000", askPrice: "1.25000000", askQty: "3.00000000" }])
    const refused = book("symbol=NOPE")
    expect(refused).toEqual({ status: 400, body: JSON.stringify({ code: -1121, msg: "Invalid symbol." }) })
    expect(book("symbol=NOPE")).toEqual(refused)
  })
})
