// The two engines the matching bench drives, behind one interface: our book
// (src/exchange/book.ts) and nodejs-order-book. Each converts a stream to its own call shapes
// once (`load`), so `apply(i)` does nothing but the engine's work.
import { type LimitOrderOptions, OrderBook as PeerBook, Side as PeerSide } from "nodejs-order-book"
import { defaultBookConfig, type NewOrder, OrderBook } from "../../src/exchange/book.ts"
import type { BookSink } from "../../src/exchange/events.ts"

export type Op = { readonly cancel: number } | { readonly place: NewOrder }

/** The calls both engines get: `apply(i)` runs op i of the loaded list. */
export interface Engine {
  readonly name: string
  load(ops: ReadonlyArray<Op>): void
  apply(i: number): void
  depth(): { bids: Array<[number, number]>; asks: Array<[number, number]> }
}

/** mulberry32: small, fast, reproducible. */
export const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** A wallet-shaped owner string; buyers and sellers use different `side` digits so they never meet themselves. */
export const wallet = (side: string, i: number) => `0x${side}${i.toString(16).padStart(39, "0")}`

/** Counts events; allocates nothing. */
export class CountingSink implements BookSink {
  events = 0
  trades = 0
  accepted() {
    this.events++
  }
  trade() {
    this.events++
    this.trades++
  }
  status() {
    this.events++
  }
  level() {
    this.events++
  }
  rejected() {
    this.events++
  }
}

export const ours = (): Engine => {
  const book = new OrderBook(defaultBookConfig, new CountingSink())
  let places: Array<NewOrder | undefined> = []
  let cancels: Array<number> = []
  return {
    name: "shardline",
    load(ops) {
      places = ops.map((op) => ("place" in op ? op.place : undefined))
      cancels = ops.map((op) => ("cancel" in op ? op.cancel : 0))
    },
    apply(i) {
      const p = places[i]
      if (p !== undefined) book.place(p)
      else book.cancel(cancels[i]!)
    },
    depth() {
      const d = book.depth(1000)
      return { bids: d.bids.map((l) => [l.price, l.qty]), asks: d.asks.map((l) => [l.price, l.qty]) }
    }
  }
}

export const peer = (): Engine => {
  const book = new PeerBook()
  let places: Array<LimitOrderOptions | undefined> = []
  let cancels: Array<string> = []
  return {
    name: "nodejs-order-book",
    load(ops) {
      places = ops.map((op) =>
        "place" in op
          ? {
            id: String(op.place.id),
            side: op.place.side === "BUY" ? PeerSide.BUY : PeerSide.SELL,
            price: op.place.price,
            size: op.place.qty,
            accountId: op.place.owner,
            timeInForce: "GTC" as LimitOrderOptions["timeInForce"]
          }
          : undefined
      )
      cancels = ops.map((op) => ("cancel" in op ? String(op.cancel) : ""))
    },
    apply(i) {
      const p = places[i]
      if (p !== undefined) book.limit(p)
      else book.cancel(cancels[i]!)
    },
    depth() {
      const [asks, bids] = book.depth()
      return { bids: bids.slice(0, 1000), asks: asks.slice(0, 1000) }
    }
  }
}
