// A deliberately simple order book to test the fast one against: a plain array of order
// objects, sorted into priority order on every place, with no indexes and no clever memory.
// It implements the same contract (events.ts, book.ts) from the written rules, not from the
// fast book's code.
import type { BookConfig, Depth, NewOrder, OpenOrder, PriceLevel } from "../../../src/exchange/book.ts"
import type { BookEvent, OrderStatus, RejectReason, Side } from "../../../src/exchange/events.ts"
import type { Snapshot } from "../../../src/exchange/snapshot.ts"

interface Resting {
  id: number
  owner: string
  side: Side
  price: number
  qty: number
  open: number
  seq: number
}

const positive = (n: number) => Number.isSafeInteger(n) && n > 0
const validRef = (n: number) => Number.isSafeInteger(n) && n >= 0

export class ReferenceBook {
  private orders: Array<Resting> = []
  private seq = 0
  private tradeId = 0

  constructor(private readonly config: BookConfig, readonly events: Array<BookEvent> = []) {}

  place(o: NewOrder): OrderStatus {
    const reason = this.reject(o)
    if (reason !== undefined) {
      this.events.push({ type: "rejected", ref: reason === "INVALID_REF" ? null : o.ref ?? null, reason })
      return "REJECTED"
    }
    const acceptedSeq = ++this.seq
    this.events.push({ type: "accepted", seq: acceptedSeq, id: o.id, owner: o.owner, side: o.side, price: o.price, qty: o.qty })
    const crosses = (m: Resting) =>
      m.side !== o.side && (o.side === "BUY" ? m.price <= o.price : m.price >= o.price)
    const makers = this.orders.filter(crosses).sort((a, b) =>
      a.price === b.price ? a.seq - b.seq : o.side === "BUY" ? a.price - b.price : b.price - a.price
    )
    let left = o.qty
    let expired = false
    let levelPrice: number | undefined
    let levelChanged = false
    // A level the taker changed is reported once, when the taker leaves it; one it did not change, never.
    const leaveLevel = () => {
      if (levelPrice !== undefined && levelChanged) this.levelEvent(o.side === "BUY" ? "SELL" : "BUY", levelPrice)
      levelChanged = false
    }
    for (const m of makers) {
      if (left === 0 || expired) break
      if (m.price !== levelPrice) leaveLevel()
      levelPrice = m.price
      if (m.owner === o.owner) {
        if (this.config.stp !== "EXPIRE_TAKER") this.close(m, "EXPIRED"), levelChanged = true
        if (this.config.stp !== "EXPIRE_MAKER") expired = true
        continue
      }
      levelChanged = true
      const fill = Math.min(left, m.open)
      left -= fill
      m.open -= fill
      this.events.push({
        type: "trade",
        seq: ++this.seq,
        tradeId: ++this.tradeId,
        makerId: m.id,
        takerId: o.id,
        makerOwner: m.owner,
        takerOwner: o.owner,
        price: m.price,
        qty: fill,
        makerSide: m.side
      })
      if (m.open === 0) this.close(m, "FILLED")
      else this.statusEvent(m.id, "PARTIALLY_FILLED", m.qty - m.open, m.open)
    }
    leaveLevel()
    if (expired) {
      this.statusEvent(o.id, "EXPIRED", o.qty - left, 0)
      return "EXPIRED"
    }
    if (left === 0) {
      this.statusEvent(o.id, "FILLED", o.qty, 0)
      return "FILLED"
    }
    const status = left === o.qty ? "NEW" : "PARTIALLY_FILLED"
    this.orders.push({ id: o.id, owner: o.owner, side: o.side, price: o.price, qty: o.qty, open: left, seq: acceptedSeq })
    this.statusEvent(o.id, status, o.qty - left, left)
    this.levelEvent(o.side, o.price)
    return status
  }

  cancel(id: number, ref?: number): boolean {
    const reason = ref !== undefined && !validRef(ref) ? "INVALID_REF" : !positive(id) ? "INVALID_ID" : undefined
    const o = reason === undefined ? this.orders.find((x) => x.id === id) : undefined
    if (o === undefined) {
      this.events.push({ type: "rejected", ref: reason === "INVALID_REF" ? null : ref ?? null, reason: reason ?? "UNKNOWN_ORDER" })
      return false
    }
    this.close(o, "CANCELED")
    this.levelEvent(o.side, o.price)
    return true
  }

  get(id: number): OpenOrder | undefined {
    const o = this.orders.find((x) => x.id === id)
    return o && this.view(o)
  }

  depth(limit: number): Depth {
    const side = (s: Side) => {
      const prices = [...new Set(this.orders.filter((o) => o.side === s).map((o) => o.price))]
      prices.sort((a, b) => (s === "BUY" ? b - a : a - b))
      return prices.slice(0, limit).map((price): PriceLevel => ({ price, qty: this.levelQty(s, price) }))
    }
    return { seq: this.seq, bids: side("BUY"), asks: side("SELL") }
  }

  openOrdersOf(owner: string): Array<OpenOrder> {
    return this.orders.filter((o) => o.owner === owner).sort((a, b) => a.seq - b.seq).map((o) => this.view(o))
  }

  snapshot(): Snapshot {
    const orders = [...this.orders].sort((a, b) => a.seq - b.seq).map((o) => ({
      id: o.id,
      owner: o.owner,
      side: o.side,
      price: o.price,
      qty: o.qty,
      openQty: o.open,
      seq: o.seq
    }))
    return { seq: this.seq, tradeId: this.tradeId, orders }
  }

  private reject(o: NewOrder): RejectReason | undefined {
    if (o.ref !== undefined && !validRef(o.ref)) return "INVALID_REF"
    if (!positive(o.id)) return "INVALID_ID"
    if (this.orders.some((x) => x.id === o.id)) return "DUPLICATE_ID"
    if (o.owner.length === 0) return "INVALID_OWNER"
    if (o.side !== "BUY" && o.side !== "SELL") return "INVALID_SIDE"
    if (!positive(o.price)) return "INVALID_PRICE"
    if (!positive(o.qty) || o.qty > this.config.qtyMax) return "INVALID_QUANTITY"
    if (this.orders.length >= this.config.ordersMax) return "BOOK_FULL"
    if (this.levelQty(o.side, o.price) + o.qty > Number.MAX_SAFE_INTEGER) return "LEVEL_FULL"
    return undefined
  }

  private close(o: Resting, status: OrderStatus): void {
    this.orders = this.orders.filter((x) => x !== o)
    this.statusEvent(o.id, status, status === "FILLED" ? o.qty : o.qty - o.open, 0)
  }

  private statusEvent(id: number, status: OrderStatus, executedQty: number, openQty: number): void {
    this.events.push({ type: "status", seq: ++this.seq, id, status, executedQty, openQty })
  }

  private levelEvent(side: Side, price: number): void {
    this.events.push({ type: "level", seq: ++this.seq, side, price, qty: this.levelQty(side, price) })
  }

  private levelQty(side: Side, price: number): number {
    return this.orders.filter((o) => o.side === side && o.price === price).reduce((sum, o) => sum + o.open, 0)
  }

  private view(o: Resting): OpenOrder {
    return {
      id: o.id,
      owner: o.owner,
      side: o.side,
      price: o.price,
      qty: o.qty,
      executedQty: o.qty - o.open,
      openQty: o.open,
      seq: o.seq,
      status: o.open === o.qty ? "NEW" : "PARTIALLY_FILLED"
    }
  }
}
