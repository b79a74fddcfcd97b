// Klines (candles), pure: Binance's intervals, where a bucket starts, how a trade updates the
// candle of its bucket, and which candles a `klines` request answers (Binance's rules: openTime at
// or after startTime, at or before endTime, at most `limit`, the most recent ones when no
// startTime is given). Buckets without a trade are filled with a flat candle at the previous close
// and zero volume, as Binance answers quiet markets; none is made before the market's first trade.
// Prices are ticks, volumes lots and quote satoshis (bigint): nothing here is a float.

export const INTERVALS = ["1s", "1m", "3m", "5m", "15m", "30m", "1h", "2h", "4h", "6h", "8h", "12h", "1d", "3d", "1w", "1M"] as const
export type Interval = typeof INTERVALS[number]

const S = 1_000
const M = 60 * S
const H = 60 * M
const D = 24 * H
const fixedMs: Record<Exclude<Interval, "1M">, number> = {
  "1s": S, "1m": M, "3m": 3 * M, "5m": 5 * M, "15m": 15 * M, "30m": 30 * M, "1h": H, "2h": 2 * H, "4h": 4 * H,
  "6h": 6 * H, "8h": 8 * H, "12h": 12 * H, "1d": D, "3d": 3 * D, "1w": 7 * D
}
/** 1970-01-01 was a Thursday; Binance's weeks start on Monday 00:00 UTC (1970-01-05). */
const MONDAY = 4 * D

export const isInterval = (text: string): text is Interval => (INTERVALS as ReadonlyArray<string>).includes(text)

/** Open time of the bucket `t` (unix ms) falls in. Months are calendar months in UTC. */
export const openTimeOf = (iv: Interval, t: number): number => {
  if (iv === "1M") {
    const d = new Date(t)
    return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)
  }
  if (iv === "1w") return Math.floor((t - MONDAY) / fixedMs["1w"]) * fixedMs["1w"] + MONDAY
  const ms = fixedMs[iv]
  return Math.floor(t / ms) * ms
}

export const nextOpenOf = (iv: Interval, open: number): number => {
  if (iv !== "1M") return open + fixedMs[iv]
  const d = new Date(open)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
}

export const prevOpenOf = (iv: Interval, open: number): number => {
  if (iv !== "1M") return open - fixedMs[iv]
  const d = new Date(open)
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)
}

/** One bucket with at least one trade. `firstId`/`lastId` are the global ids of its first and last trade. */
export interface Kline {
  readonly openTime: number
  open: number
  high: number
  low: number
  close: number
  volume: bigint
  quote: bigint
  trades: number
  firstId: number
  lastId: number
}

/** What a kline needs of a trade. */
export interface TradeTick {
  readonly id: number
  readonly price: number
  readonly qty: number
  readonly quote: bigint
  readonly time: number
}

/** Candles kept in memory per interval (those with trades); 24 h of 1m candles is 1440. */
export const KLINES_IN_MEMORY = 1_500

/** The recent candles of one interval, oldest first; `complete` while nothing older was ever dropped. */
export interface Series {
  readonly klines: Array<Kline>
  complete: boolean
}

export const newSeries = (klines: Array<Kline> = [], complete = true): Series => ({ klines, complete })

/**
 * Adds a trade to its candle. A trade the candle already counts (its id at or below the candle's
 * last id: a replica that loaded candles from Postgres and then sees the same trade in a delta)
 * and a trade older than the newest candle (a clock that went back on a new owner) change nothing.
 * Answers the candle it changed.
 */
export const addTrade = (series: Series, iv: Interval, t: TradeTick): Kline | undefined => {
  const open = openTimeOf(iv, t.time)
  const k = series.klines
  const last = k[k.length - 1]
  if (last !== undefined && last.openTime === open) {
    if (t.id <= last.lastId) return undefined
    if (t.price > last.high) last.high = t.price
    if (t.price < last.low) last.low = t.price
    last.close = t.price
    last.volume += BigInt(t.qty)
    last.quote += t.quote
    last.trades += 1
    last.lastId = t.id
    return last
  }
  if (last !== undefined && (open < last.openTime || t.id <= last.lastId)) return undefined
  const fresh: Kline = { openTime: open, open: t.price, high: t.price, low: t.price, close: t.price, volume: BigInt(t.qty), quote: t.quote, trades: 1, firstId: t.id, lastId: t.id }
  k.push(fresh)
  if (k.length > KLINES_IN_MEMORY) {
    k.splice(0, k.length - KLINES_IN_MEMORY)
    series.complete = false
  }
  return fresh
}

/**
 * The candles `trades` would change, in their final state, leaving `series` as it is: addTrade on
 * a copy of the newest candle (the only one a trade can change; others are new). A batch writes
 * these with its own statement before its commit and applies the trades for real after it.
 */
export const candlesAfter = (series: Series, iv: Interval, trades: ReadonlyArray<TradeTick>): Array<Kline> => {
  const last = series.klines[series.klines.length - 1]
  const scratch = newSeries(last === undefined ? [] : [{ ...last }])
  const changed = new Map<number, Kline>()
  for (const t of trades) {
    const k = addTrade(scratch, iv, t)
    if (k !== undefined) changed.set(k.openTime, k)
  }
  return [...changed.values()]
}

/** A candle as a request answers it: empty buckets are flat at the previous close. */
export interface KlineRow {
  readonly openTime: number
  readonly closeTime: number
  readonly open: number
  readonly high: number
  readonly low: number
  readonly close: number
  readonly volume: bigint
  readonly quote: bigint
  readonly trades: number
}

export interface KlineQuery {
  readonly startTime?: number | undefined
  readonly endTime?: number | undefined
  readonly limit: number
}

/** The buckets a request covers, as [first open, last open], or undefined when there are none. */
export const bucketRange = (iv: Interval, q: KlineQuery, now: number): { readonly start: number; readonly end: number } | undefined => {
  const last = openTimeOf(iv, Math.min(q.endTime ?? now, now))
  if (q.startTime !== undefined) {
    let start = openTimeOf(iv, q.startTime)
    if (start < q.startTime) start = nextOpenOf(iv, start)
    if (start > last) return undefined
    let end = start
    for (let n = 1; n < q.limit && nextOpenOf(iv, end) <= last; n++) end = nextOpenOf(iv, end)
    return { start, end }
  }
  let start = last
  for (let n = 1; n < q.limit; n++) start = prevOpenOf(iv, start)
  return { start, end: last }
}

/**
 * The rows of [start, end] from the candles with trades in that range (oldest first) and the last
 * candle before it (for the close that flat buckets carry). Buckets before the first trade are left out.
 */
export const fillRange = (iv: Interval, start: number, end: number, stored: ReadonlyArray<Kline>, before: Kline | undefined): Array<KlineRow> => {
  const rows: Array<KlineRow> = []
  let prevClose = before?.close
  let i = 0
  for (let open = start; open <= end; open = nextOpenOf(iv, open)) {
    while (i < stored.length && stored[i]!.openTime < open) i++
    const k = stored[i]
    const closeTime = nextOpenOf(iv, open) - 1
    if (k !== undefined && k.openTime === open) {
      rows.push({ openTime: open, closeTime, open: k.open, high: k.high, low: k.low, close: k.close, volume: k.volume, quote: k.quote, trades: k.trades })
      prevClose = k.close
    } else if (prevClose !== undefined) {
      rows.push({ openTime: open, closeTime, open: prevClose, high: prevClose, low: prevClose, close: prevClose, volume: 0n, quote: 0n, trades: 0 })
    }
  }
  return rows
}

/**
 * The rows of a request from memory, or undefined when memory does not reach back far enough (the
 * series lost older candles and the range starts at or before its oldest): then Postgres answers.
 */
export const klinesFromMemory = (series: Series, iv: Interval, q: KlineQuery, now: number): Array<KlineRow> | undefined => {
  const range = bucketRange(iv, q, now)
  if (range === undefined) return []
  const k = series.klines
  if (!series.complete && (k.length === 0 || k[0]!.openTime >= range.start)) return undefined
  let lo = 0
  while (lo < k.length && k[lo]!.openTime < range.start) lo++
  let hi = lo
  while (hi < k.length && k[hi]!.openTime <= range.end) hi++
  return fillRange(iv, range.start, range.end, k.slice(lo, hi), lo > 0 ? k[lo - 1] : undefined)
}

/** Sums of the candles with openTime in [from, to] of a 1m series: the 24 h ticker and avgPrice. */
export interface WindowStats {
  readonly open: number | undefined
  readonly high: number | undefined
  readonly low: number | undefined
  readonly volume: bigint
  readonly quote: bigint
  readonly trades: number
  readonly firstId: number
  readonly lastId: number
  /** Close of the last candle before the window. */
  readonly prevClose: number | undefined
}

export const windowStats = (klines: ReadonlyArray<Kline>, from: number): WindowStats => {
  let open: number | undefined, high: number | undefined, low: number | undefined, prevClose: number | undefined
  let volume = 0n, quote = 0n, trades = 0, firstId = -1, lastId = -1
  for (const k of klines) {
    if (k.openTime < from) {
      prevClose = k.close
      continue
    }
    if (open === undefined) {
      open = k.open
      firstId = k.firstId
    }
    high = high === undefined || k.high > high ? k.high : high
    low = low === undefined || k.low < low ? k.low : low
    volume += k.volume
    quote += k.quote
    trades += k.trades
    lastId = k.lastId
  }
  return { open, high, low, volume, quote, trades, firstId, lastId, prevClose }
}
