// One market's public data as every node holds it, pure: the top of the book (at most
// DEPTH_LEVELS price levels a side), the last RECENT_TRADES trades, and the recent candles of every
// interval. The owner of the market (the node running its Market entity) changes it after each
// committed batch and publishes the change as deltas; every other node applies the same deltas in
// sequence order. A delta carries the market's sequence number: one more than the previous delta,
// or a jump (a new owner starts its numbers at its start time × 1000), which a replica treats as a
// gap and refills from a snapshot.
import type { PriceLevel } from "../book.ts"
import { addTrade, candlesAfter, INTERVALS, type Interval, type Kline, newSeries, type Series } from "./klines.ts"

/** Price levels a side that the feed carries: depth's `limit` maximum. */
export const DEPTH_LEVELS = 1_000
/** Trades kept for `trades` and `aggTrades` (their `limit` maximum). */
export const RECENT_TRADES = 1_000

/** A public trade. `takerOrder` is the taker's per-market order number (aggTrades groups by it). */
export interface PublicTrade {
  readonly id: number
  readonly price: number
  readonly qty: number
  readonly quote: bigint
  readonly time: number
  readonly buyerIsMaker: boolean
  readonly takerOrder: number
}

/** A side's levels, best first: [price ticks, quantity lots]. */
export type Levels = Array<readonly [number, number]>

/** What one published delta says. Levels with quantity 0 are gone (or left the top DEPTH_LEVELS). */
export interface Delta {
  readonly marketId: number
  readonly seq: number
  readonly time: number
  readonly bids: Levels
  readonly asks: Levels
  readonly trades: ReadonlyArray<PublicTrade>
}

export interface FeedSnapshot {
  readonly seq: number
  readonly bids: Levels
  readonly asks: Levels
  readonly trades: ReadonlyArray<PublicTrade>
}

export class Feed {
  seq: number
  bids: Levels
  asks: Levels
  trades: Array<PublicTrade>
  readonly klines: Map<Interval, Series>
  /** When the last delta or snapshot was applied (unix ms): how stale a replica is. */
  updated: number

  constructor(snapshot: FeedSnapshot, klines: Map<Interval, Series>, now: number) {
    this.seq = snapshot.seq
    this.bids = [...snapshot.bids]
    this.asks = [...snapshot.asks]
    this.trades = [...snapshot.trades]
    this.klines = klines
    for (const iv of INTERVALS) if (!klines.has(iv)) klines.set(iv, newSeries())
    this.updated = now
  }

  static empty(now: number): Feed {
    return new Feed({ seq: 0, bids: [], asks: [], trades: [] }, new Map(), now)
  }

  /** Applies a delta (the caller checked its sequence number); answers the candles it changed. */
  apply(d: Delta): Array<readonly [Interval, Kline]> {
    setLevels(this.bids, d.bids, true)
    setLevels(this.asks, d.asks, false)
    const changed: Array<readonly [Interval, Kline]> = []
    const lastId = this.trades.length === 0 ? 0 : this.trades[this.trades.length - 1]!.id
    for (const t of d.trades) {
      if (t.id > lastId) this.trades.push(t)
      for (const iv of INTERVALS) {
        const k = addTrade(this.klines.get(iv)!, iv, t)
        if (k !== undefined) changed.push([iv, k])
      }
    }
    if (this.trades.length > RECENT_TRADES) this.trades.splice(0, this.trades.length - RECENT_TRADES)
    this.seq = d.seq
    this.updated = d.time
    return changed
  }

  /** The candles these trades would change (klines.ts candlesAfter), the feed left as it is. */
  candlesOf(trades: ReadonlyArray<PublicTrade>): Array<readonly [Interval, Kline]> {
    const out: Array<readonly [Interval, Kline]> = []
    if (trades.length === 0) return out
    for (const iv of INTERVALS) for (const k of candlesAfter(this.klines.get(iv)!, iv, trades)) out.push([iv, k])
    return out
  }

  snapshot(): FeedSnapshot {
    return { seq: this.seq, bids: this.bids, asks: this.asks, trades: this.trades }
  }

  lastTrade(): PublicTrade | undefined {
    return this.trades[this.trades.length - 1]
  }
}

/** Sets each changed level in a side kept best first (bids descending, asks ascending). */
export const setLevels = (side: Levels, changes: ReadonlyArray<readonly [number, number]>, descending: boolean): void => {
  for (const [price, qty] of changes) {
    let lo = 0, hi = side.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      const p = side[mid]![0]
      if (descending ? p > price : p < price) lo = mid + 1
      else hi = mid
    }
    const here = side[lo]
    if (here !== undefined && here[0] === price) {
      if (qty === 0) side.splice(lo, 1)
      else side[lo] = [price, qty]
    } else if (qty !== 0) {
      side.splice(lo, 0, [price, qty])
    }
  }
  if (side.length > DEPTH_LEVELS) side.length = DEPTH_LEVELS
}

/**
 * The level changes between two tops of one side (best first, as `OrderBook.depth` gives them): a
 * level that is new or changed carries its quantity, one that is gone (or fell below the top) 0.
 */
export const diffLevels = (before: ReadonlyArray<PriceLevel>, after: ReadonlyArray<PriceLevel>): Levels => {
  const out: Levels = []
  const was = new Map<number, number>()
  for (const l of before) was.set(l.price, l.qty)
  for (const l of after) {
    if (was.get(l.price) !== l.qty) out.push([l.price, l.qty])
    was.delete(l.price)
  }
  for (const price of was.keys()) out.push([price, 0])
  return out
}
