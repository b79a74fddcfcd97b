// The pure parts of market data: candle buckets and the klines request rules, the feed's levels
// and deltas, the channel's chunking under Postgres' 8000-byte limit, and Binance's bodies.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { aggregate, depth, klines, ticker24hrOf, tickerPrice } from "../../../src/exchange/marketdata/bodies.ts"
import { diffLevels, Feed, setLevels, type Levels, type PublicTrade } from "../../../src/exchange/marketdata/feed.ts"
import { addTrade, bucketRange, klinesFromMemory, newSeries, openTimeOf } from "../../../src/exchange/marketdata/klines.ts"
import { chunk, decode, decodeParsed, marketIdOf, PAYLOAD_MAX, parsePayload } from "../../../src/exchange/marketdata/wire.ts"
import { quoteUnits } from "../../../src/exchange/market/amounts.ts"
import { checkNewMarket } from "../../../src/exchange/markets/marketSpec.ts"
import { normalizeSymbol } from "../../../src/exchange/markets/symbols.ts"

const market = Either.getOrThrow(checkNewMarket({ base: "SHRD", quote: "DUSD", tickSize: "0.0001", stepSize: "0.01", minNotional: "1" }, 1))
const trade = (id: number, price: number, qty: number, time: number, takerOrder = id): PublicTrade =>
  ({ id, price, qty, quote: quoteUnits(market.compiled, price, qty), time, buyerIsMaker: false, takerOrder })

describe("candles", () => {
  it("puts weeks on Monday and months on the 1st, UTC", () => {
    const t = Date.UTC(2024, 4, 15, 13, 7, 9) // a Wednesday
    expect(openTimeOf("1w", t)).toBe(Date.UTC(2024, 4, 13))
    expect(openTimeOf("1M", t)).toBe(Date.UTC(2024, 4, 1))
    expect(openTimeOf("4h", t)).toBe(Date.UTC(2024, 4, 15, 12))
    expect(openTimeOf("1s", t + 5)).toBe(t)
  })

  it("counts a trade once, even when a replica sees it again after loading the candle", () => {
    const s = newSeries()
    const t0 = Date.UTC(2024, 0, 1)
    addTrade(s, "1m", trade(1, 100, 2, t0))
    addTrade(s, "1m", trade(2, 110, 1, t0 + 1_000))
    expect(addTrade(s, "1m", trade(2, 110, 1, t0 + 1_000))).toBeUndefined()
    expect(s.klines).toEqual([{ openTime: t0, open: 100, high: 110, low: 100, close: 110, volume: 3n, quote: quoteUnits(market.compiled, 100, 2) + quoteUnits(market.compiled, 110, 1), trades: 2, firstId: 1, lastId: 2 }])
  })

  it("answers the most recent buckets, flat at the previous close where nothing traded, none before the first trade", () => {
    const s = newSeries()
    const t0 = Date.UTC(2024, 0, 1)
    addTrade(s, "1m", trade(1, 100, 1, t0))
    addTrade(s, "1m", trade(2, 120, 1, t0 + 180_000))
    const rows = klinesFromMemory(s, "1m", { limit: 6 }, t0 + 240_000)!
    expect(rows.map((r) => [r.openTime - t0, r.open, r.close, r.trades])).toEqual([
      [0, 100, 100, 1], [60_000, 100, 100, 0], [120_000, 100, 100, 0], [180_000, 120, 120, 1], [240_000, 120, 120, 0]
    ])
    expect(bucketRange("1m", { startTime: t0 + 1, limit: 2 }, t0 + 600_000)).toEqual({ start: t0 + 60_000, end: t0 + 120_000 })
  })

  it("sends a range older than a full memory window to Postgres", () => {
    const s = newSeries()
    for (let i = 0; i < 1_600; i++) addTrade(s, "1m", trade(i + 1, 100, 1, i * 60_000))
    expect(s.complete).toBe(false)
    expect(klinesFromMemory(s, "1m", { startTime: 0, limit: 10 }, 1_600 * 60_000)).toBeUndefined()
    expect(klinesFromMemory(s, "1m", { limit: 10 }, 1_600 * 60_000)).toHaveLength(10)
  })
})

describe("the feed", () => {
  // A batch writes the candles its trades change before its commit (candlesOf) and applies the
  // trades after it: the rows written must be the candles as the feed then holds them.
  it("names, without changing anything, exactly the candles applying the trades then changes", () => {
    const t0 = Date.UTC(2024, 0, 1, 10, 59, 58)
    const feed = Feed.empty(0)
    feed.apply({ marketId: 1, seq: 1, time: t0, bids: [], asks: [], trades: [trade(1, 100, 2, t0)] })
    const before = JSON.stringify([...feed.klines].map(([iv, s]) => [iv, s.klines.map((k) => ({ ...k, volume: String(k.volume), quote: String(k.quote) }))]))
    // Into the open candle, across the minute and the hour, one already counted, one from an older candle.
    const trades = [trade(2, 120, 1, t0 + 500), trade(3, 90, 3, t0 + 2_500), trade(3, 90, 3, t0 + 2_500), trade(4, 95, 1, t0 + 3_000), trade(5, 80, 1, t0 - 120_000)]
    const dry = feed.candlesOf(trades)
    expect(JSON.stringify([...feed.klines].map(([iv, s]) => [iv, s.klines.map((k) => ({ ...k, volume: String(k.volume), quote: String(k.quote) }))]))).toBe(before)
    const changed = feed.apply({ marketId: 1, seq: 2, time: t0 + 3_000, bids: [], asks: [], trades })
    const finalOf = (rows: ReadonlyArray<readonly [string, { openTime: number }]>) => {
      const by = new Map(rows.map(([iv, k]) => [`${iv}:${k.openTime}`, { ...k }] as const))
      return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : 1))
    }
    expect(finalOf(dry)).toEqual(finalOf(changed))
    // The 1m series gained a candle (10:59 → 11:00), the 1h series too, the 1d one changed in place.
    expect(dry.filter(([iv]) => iv === "1m").map(([, k]) => [k.open, k.high, k.low, k.close, k.trades])).toEqual([[100, 120, 100, 120, 2], [90, 95, 90, 95, 2]])
    expect(feed.candlesOf([])).toEqual([])
  })

  it("keeps levels best first and diffs two tops of the book", () => {
    const bids: Levels = []
    setLevels(bids, [[10, 1], [12, 2], [11, 3]], true)
    setLevels(bids, [[12, 0], [9, 4]], true)
    expect(bids).toEqual([[11, 3], [10, 1], [9, 4]])
    expect(diffLevels([{ price: 10, qty: 1 }, { price: 9, qty: 2 }], [{ price: 10, qty: 5 }, { price: 8, qty: 1 }])).toEqual([[10, 5], [8, 1], [9, 0]])
  })

  it("chunks a large batch under the notification limit; each chunk decodes and applies in order", () => {
    const trades = Array.from({ length: 400 }, (_, i) => trade(2 ** 40 + i + 1, 12_345 + i, 100 + i, 1_700_000_000_000 + i))
    const asks: Levels = Array.from({ length: 900 }, (_, i) => [20_000 + i, 1_000 + i] as const)
    const msgs = chunk(1, 1_000, 1_700_000_000_000, [], asks, trades)
    expect(msgs.length).toBeGreaterThan(3)
    const feed = Feed.empty(0)
    feed.seq = 999
    for (const m of msgs) {
      expect(Buffer.byteLength(m.payload)).toBeLessThanOrEqual(PAYLOAD_MAX)
      const d = decode(m.payload)
      expect(d?._tag).toBe("Delta")
      if (d?._tag !== "Delta") return
      expect(d.delta.seq).toBe(feed.seq + 1)
      feed.apply(d.delta)
    }
    expect(feed.asks).toHaveLength(900)
    expect(feed.trades).toHaveLength(400)
    expect(feed.trades[399]!.quote).toBe(trades[399]!.quote)
    expect(decode("{\"k\":\"d\",\"m\":1}")).toBeUndefined()
    expect(decode("not json")).toBeUndefined()
  })

  it("names a payload's market before decoding it (the owner skips its own on that alone), and nothing for a payload that names none", () => {
    const delta = chunk(7, 41, Date.now(), [[100, 2]], [], [])[0]!.payload
    expect(marketIdOf(parsePayload(delta))).toBe(7)
    expect(decodeParsed(parsePayload(delta))).toMatchObject({ _tag: "Delta", delta: { marketId: 7, seq: 41 } })
    expect(marketIdOf(parsePayload("{\"k\":\"h\",\"m\":3,\"s\":9}"))).toBe(3)
    for (const junk of ["not json", "null", "[1,2]", "{\"m\":\"7\"}", "42"]) {
      expect(marketIdOf(parsePayload(junk))).toBeUndefined()
      expect(decodeParsed(parsePayload(junk))).toBeUndefined()
    }
  })
})

describe("Binance bodies", () => {
  const now = Date.UTC(2024, 0, 2)
  const feed = Feed.empty(now)
  feed.apply({ marketId: 1, seq: 1, time: now, bids: [[12_000, 150]], asks: [[12_500, 300]], trades: [trade(1, 12_000, 100, now - 3_600_000, 7), trade(2, 12_000, 50, now - 3_600_000, 7), trade(3, 13_000, 100, now - 60_000, 8)] })
  const view = { find: (s: string) => (normalizeSymbol(s) === "SHRDDUSD" ? market : undefined), all: () => [market], feed: () => feed, now: () => now }

  it("formats depth at the market's precision and refuses a limit out of range", () => {
    expect(Either.getOrThrow(depth(view, { symbol: "SHRDDUSD" }))).toEqual({ lastUpdateId: 1, bids: [["1.20000000", "1.50000000"]], asks: [["1.25000000", "3.00000000"]] })
    expect(Either.flip(depth(view, { symbol: "SHRDDUSD", limit: "1001" })).pipe(Either.getOrThrow).code).toBe(-1130)
    expect(Either.flip(depth(view, { symbol: "NOPE" })).pipe(Either.getOrThrow).code).toBe(-1121)
  })

  it("computes the 24-hour ticker exactly from the 1m candles", () => {
    const t = ticker24hrOf(market, feed, now)
    expect(t).toMatchObject({ openPrice: "1.20000000", lastPrice: "1.30000000", highPrice: "1.30000000", lowPrice: "1.20000000", volume: "2.50000000", priceChange: "0.10000000", priceChangePercent: "8.333", count: 3, firstId: 1, lastId: 3 })
    // (1.2 × 1.5 + 1.3 × 1) / 2.5 = 1.24
    expect(t.weightedAvgPrice).toBe("1.24000000")
  })

  it("aggregates trades of one taker order at one price", () => {
    expect(aggregate(feed.trades).map((a) => [a.first.id, a.last.id, a.qty])).toEqual([[1, 2, 150], [3, 3, 100]])
  })

  it("refuses a bad interval, symbols that are not a JSON array, and symbol with symbols", () => {
    expect(Either.flip(klines(view, { symbol: "SHRDDUSD", interval: "2m" })).pipe(Either.getOrThrow).code).toBe(-1120)
    expect(Either.flip(tickerPrice(view, { symbols: "SHRDDUSD" })).pipe(Either.getOrThrow).code).toBe(-1100)
    expect(Either.flip(tickerPrice(view, { symbol: "SHRDDUSD", symbols: "[]" })).pipe(Either.getOrThrow).code).toBe(-1128)
    expect(Either.getOrThrow(tickerPrice(view, { symbols: "[\"SHRD_DUSD\"]" }))).toEqual([{ symbol: "SHRDDUSD", price: "1.30000000" }])
  })
})
