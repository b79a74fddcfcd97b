// The seeded order streams of the matching bench. Buyers and sellers are disjoint wallets, so
// self-trade prevention never fires and both engines must end with identical books.
//
// - deep: prices spread exponentially over about a thousand ticks, so at 100k resting the levels
//   near the touch hold hundreds of orders; one cancel in ten (of any id issued so far, often
//   already closed), about 30% of places marketable.
// - ordinary: about 32 orders a level (prices uniform over resting/64 levels a side), 60% places
//   and 40% cancels of live orders, a quarter of places crossing the spread. Crossing orders are
//   sized to the best level so they never rest; their size also steers the open count back to
//   `resting` (bigger when above it), so the book keeps its size for the whole stream.
import { defaultBookConfig, OrderBook } from "../../src/exchange/book.ts"
import type { BookSink } from "../../src/exchange/events.ts"
import { type Op, prng, wallet } from "./matchingEngines.ts"

export interface Stream {
  /** Rests `resting` orders; none crosses. */
  readonly phaseA: ReadonlyArray<Op>
  /** The mixed phase. */
  readonly phaseB: ReadonlyArray<Op>
}

const MID = 6_000_000 // 60000.00 in 0.01 ticks
const WALLETS_PER_SIDE = 500

const owners = () => ({
  buyers: Array.from({ length: WALLETS_PER_SIDE }, (_, i) => wallet("b", i)),
  sellers: Array.from({ length: WALLETS_PER_SIDE }, (_, i) => wallet("5", i))
})

export const deepStream = (seed: number, resting: number, mixed: number): Stream => {
  const rnd = prng(seed)
  const { buyers, sellers } = owners()
  let nextId = 1
  const place = (side: "BUY" | "SELL", price: number): Op => ({
    place: {
      id: nextId++,
      owner: (side === "BUY" ? buyers : sellers)[Math.floor(rnd() * WALLETS_PER_SIDE)]!,
      side,
      price,
      qty: 1 + Math.floor(rnd() * 100)
    }
  })
  // Passive prices spread over about a thousand ticks, densest at the touch.
  const passive = () => {
    const side = rnd() < 0.5 ? "BUY" : "SELL"
    const offset = 1 + Math.floor(-Math.log(1 - rnd()) * 150)
    return place(side, side === "BUY" ? MID - offset : MID + offset)
  }
  const marketable = () => {
    const side = rnd() < 0.5 ? "BUY" : "SELL"
    const reach = Math.floor(rnd() * 20)
    return place(side, side === "BUY" ? MID + 1 + reach : MID - 1 - reach)
  }
  const phaseA: Array<Op> = Array.from({ length: resting }, passive)
  const phaseB: Array<Op> = []
  for (let i = 0; i < mixed; i++) {
    if (i % 10 === 9) phaseB.push({ cancel: 1 + Math.floor(rnd() * (nextId - 1)) })
    else phaseB.push(rnd() < 0.3 ? marketable() : passive())
  }
  return { phaseA, phaseB }
}

export const ORDERS_PER_LEVEL = 32
const CANCEL_SHARE = 0.4
const CROSSING_SHARE = 0.25

/** Ids of open orders, for picking a random one in O(1). */
class LivePool {
  private readonly ids: Float64Array
  private readonly at: Int32Array
  n = 0
  constructor(idsMax: number) {
    this.ids = new Float64Array(idsMax + 1)
    this.at = new Int32Array(idsMax + 1).fill(-1)
  }
  add(id: number) {
    this.at[id] = this.n
    this.ids[this.n++] = id
  }
  drop(id: number) {
    const i = this.at[id]!
    if (i < 0) return
    const last = this.ids[--this.n]!
    this.ids[i] = last
    this.at[last] = i
    this.at[id] = -1
  }
  pick(r: number) {
    return this.ids[Math.floor(r * this.n)]!
  }
}

export const ordinaryStream = (seed: number, resting: number, mixed: number): Stream => {
  const rnd = prng(seed)
  const { buyers, sellers } = owners()
  const width = Math.max(1, Math.round(resting / (2 * ORDERS_PER_LEVEL)))
  const pool = new LivePool(resting + mixed)
  const closes: BookSink = {
    accepted: () => {},
    trade: () => {},
    status: (_seq, id, status) => {
      if (status !== "NEW" && status !== "PARTIALLY_FILLED") pool.drop(id)
    },
    level: () => {},
    rejected: () => {}
  }
  // The generator keeps its own copy of the book to know which orders are live and where the touch is.
  const book = new OrderBook(defaultBookConfig, closes)
  let nextId = 1
  const place = (side: "BUY" | "SELL", price: number, qty: number): Op => {
    const id = nextId++
    const order = { id, owner: (side === "BUY" ? buyers : sellers)[Math.floor(rnd() * WALLETS_PER_SIDE)]!, side, price, qty }
    const status = book.place(order)
    if (status === "NEW" || status === "PARTIALLY_FILLED") pool.add(id)
    return { place: order }
  }
  const passive = () => {
    const side = rnd() < 0.5 ? "BUY" : "SELL"
    const offset = Math.floor(rnd() * width)
    return place(side, side === "BUY" ? MID - 1 - offset : MID + 1 + offset, 1 + Math.floor(rnd() * 100))
  }
  const crossing = () => {
    const side = rnd() < 0.5 ? "BUY" : "SELL"
    const best = side === "BUY" ? book.bestAsk() : book.bestBid()
    if (best === undefined) return passive()
    const reach = Math.floor(rnd() * 3)
    const qty = Math.min(best.qty, 1 + Math.floor(rnd() * (book.size > resting ? 60 : 12)))
    return place(side, side === "BUY" ? best.price + reach : best.price - reach, qty)
  }
  const phaseA = Array.from({ length: resting }, passive)
  const phaseB: Array<Op> = []
  for (let i = 0; i < mixed; i++) {
    if (rnd() < CANCEL_SHARE && pool.n > 0) {
      const id = pool.pick(rnd())
      book.cancel(id)
      phaseB.push({ cancel: id })
    } else phaseB.push(rnd() < CROSSING_SHARE ? crossing() : passive())
  }
  return { phaseA, phaseB }
}
