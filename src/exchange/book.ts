// The matching core: an exact limit order book for one market. Orders in, events out (events.ts);
// no I/O, no clock, no Effect service. LIMIT GTC only, price-time priority, fills at the maker's
// price, self-trade prevention by owner (wallet), O(1) cancel and lookup by id.
//
// Numbers: prices are integer ticks and quantities integer lots, as JS numbers that must be
// positive safe integers (checked on input). The only sums the book forms are level totals, and
// an order that would push its level's total past 2^53 - 1 is refused (LEVEL_FULL), so every
// quantity stays an exact integer. Numbers rather than bigint because they live unboxed in typed
// arrays and cost nothing to add.
//
// Layout, for speed: open orders are slots in parallel typed arrays (struct of arrays), each slot
// linked into its price level's FIFO and into its owner's list; an id → slot Map gives O(1)
// cancel and get. Levels are in ladder.ts. Freed slots are reused, so a steady state allocates
// nothing per order besides the Map entry.
import type { BookSink, OrderStatus, RejectReason, Side } from "./events.ts"
import { IntMap } from "./intmap.ts"
import { grow, Ladder } from "./ladder.ts"
import type { Snapshot, SnapshotOrder } from "./snapshot.ts"
import { validateSnapshot } from "./snapshot.ts"

/** Binance's self-trade prevention modes; see docs/matching.md for the choice of default. */
export { type BookConfig, defaultBookConfig, type StpMode } from "./bookConfig.ts"
import type { BookConfig, StpMode } from "./bookConfig.ts"

export interface NewOrder {
  readonly id: number
  /**
   * The caller's correlation number for this request (a non-negative safe integer; default 0),
   * echoed only by a `rejected` event. Not an order identity: the book never indexes it.
   */
  readonly ref?: number
  readonly owner: string
  readonly side: Side
  /** Ticks. */
  readonly price: number
  /** Lots. */
  readonly qty: number
}

/** An order resting on the book. */
export interface OpenOrder {
  readonly id: number
  readonly owner: string
  readonly side: Side
  readonly price: number
  readonly qty: number
  readonly executedQty: number
  readonly openQty: number
  /** Sequence number of its `accepted` event: its time priority. */
  readonly seq: number
  readonly status: "NEW" | "PARTIALLY_FILLED"
}

export interface PriceLevel {
  readonly price: number
  readonly qty: number
}

/** Aggregated depth: bids descending, asks ascending; `seq` is the last event's sequence number. */
export interface Depth {
  readonly seq: number
  readonly bids: ReadonlyArray<PriceLevel>
  readonly asks: ReadonlyArray<PriceLevel>
}

export const DEPTH_LIMIT_MAX = 1000

export type RestoreResult =
  | { readonly _tag: "Restored"; readonly book: OrderBook }
  | { readonly _tag: "Invalid"; readonly reason: string }

/** A broken invariant: a bug, never a user error. The caller must stop using the book. */
export class InvariantViolation extends Error {
  override readonly name = "InvariantViolation"
}

const invariant = (ok: boolean, what: string): void => {
  if (!ok) throw new InvariantViolation(what)
}

const NONE = -1
const BUY = 0
const SELL = 1
const SIDE_NAMES: ReadonlyArray<Side> = ["BUY", "SELL"]
const INITIAL_SLOTS = 1024

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n > 0
const isRef = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

export class OrderBook {
  private readonly bids = new Ladder(1)
  private readonly asks = new Ladder(-1)
  private readonly stp: StpMode
  private readonly ordersMax: number
  private readonly qtyMax: number
  private lastSeq = 0
  private lastTradeId = 0
  private takerExpired = false

  // Open orders, by slot.
  private oId = new Float64Array(INITIAL_SLOTS)
  private oOwner = new Int32Array(INITIAL_SLOTS)
  private oSide = new Uint8Array(INITIAL_SLOTS)
  private oLevel = new Int32Array(INITIAL_SLOTS)
  private oQty = new Float64Array(INITIAL_SLOTS)
  private oOpen = new Float64Array(INITIAL_SLOTS)
  private oSeq = new Float64Array(INITIAL_SLOTS)
  private oNext = new Int32Array(INITIAL_SLOTS) // level FIFO; also the free list
  private oPrev = new Int32Array(INITIAL_SLOTS)
  private oOwnNext = new Int32Array(INITIAL_SLOTS)
  private oOwnPrev = new Int32Array(INITIAL_SLOTS)
  private slotsUsed = 0
  private freeSlot = NONE
  private readonly slotOf = new IntMap(INITIAL_SLOTS)

  // Owners with open orders, interned to small integers; each heads a list of its slots.
  private readonly ownerIndex = new Map<string, number>()
  private ownerName: Array<string> = []
  private ownHead = new Int32Array(64)
  private ownTail = new Int32Array(64)
  private freeOwners: Array<number> = []

  constructor(config: BookConfig, private readonly sink: BookSink) {
    invariant(isCount(config.ordersMax) && isCount(config.qtyMax), "ordersMax and qtyMax are positive safe integers")
    this.stp = config.stp
    this.ordersMax = config.ordersMax
    this.qtyMax = config.qtyMax
  }

  /** Rebuilds a book, time priority included, from `snapshot()` output (or the same rows from storage). */
  static restore(config: BookConfig, sink: BookSink, snapshot: Snapshot): RestoreResult {
    const book = new OrderBook(config, sink)
    const invalid = validateSnapshot(snapshot, config)
    if (invalid !== undefined) return { _tag: "Invalid", reason: invalid }
    const orders = [...snapshot.orders].sort((a, b) => a.seq - b.seq)
    for (const o of orders) {
      const s = o.side === "BUY" ? BUY : SELL
      const own = s === BUY ? book.bids : book.asks
      book.rest(o.id, o.owner, NONE, s, own.levelFor(o.price, own.byPrice.get(o.price)), o.qty, o.openQty, o.seq)
    }
    if (book.isCrossed()) return { _tag: "Invalid", reason: "the orders cross" }
    book.lastSeq = snapshot.seq
    book.lastTradeId = snapshot.tradeId
    return { _tag: "Restored", book }
  }

  /** Sequence number of the last event emitted (0 before any). */
  get seq(): number {
    return this.lastSeq
  }

  /** Number of open orders. */
  get size(): number {
    return this.slotOf.size
  }

  /**
   * Matches a LIMIT GTC order and rests what is left. Emits `accepted` (or one `rejected` event
   * carrying `order.ref`, and nothing else), then per maker a trade and its status, a level change
   * per level it changed, the taker's final status and, if it rests, its level change. Returns the
   * taker's final status (REJECTED for a refusal).
   */
  place(order: NewOrder): OrderStatus {
    const { id, owner, side, price, qty } = order
    const s = side === "BUY" ? BUY : SELL
    const own = s === BUY ? this.bids : this.asks
    let reason = this.rejectReason(order)
    const found = reason === undefined ? own.byPrice.get(price) : NONE
    if (found !== NONE && own.qty[found]! + qty > Number.MAX_SAFE_INTEGER) reason = "LEVEL_FULL"
    if (reason !== undefined) {
      this.sink.rejected(++this.lastSeq, reason === "INVALID_REF" ? 0 : order.ref ?? 0, reason)
      return "REJECTED"
    }
    const acceptedSeq = ++this.lastSeq
    this.sink.accepted(acceptedSeq, id, owner, side, price, qty)
    const taker = this.ownerIndex.get(owner) ?? NONE
    const left = this.match(s, id, owner, taker, price, qty)
    let status: OrderStatus
    if (this.takerExpired) {
      status = "EXPIRED"
      this.sink.status(++this.lastSeq, id, status, qty - left, 0, undefined)
    } else if (left === 0) {
      status = "FILLED"
      this.sink.status(++this.lastSeq, id, status, qty, 0, undefined)
    } else {
      status = left === qty ? "NEW" : "PARTIALLY_FILLED"
      // Matching only touched the other side, so `found` still names this price's level (or none).
      const level = own.levelFor(price, found)
      this.rest(id, owner, taker, s, level, qty, left, acceptedSeq)
      this.sink.status(++this.lastSeq, id, status, qty - left, left, undefined)
      this.sink.level(++this.lastSeq, side, price, own.qty[level]!)
    }
    invariant(!this.isCrossed(), "book crossed after a place")
    return status
  }

  /**
   * Cancels an open order: CANCELED status and a level change. Otherwise returns false and emits
   * one `rejected` event carrying `ref` (UNKNOWN_ORDER, INVALID_ID or INVALID_REF).
   */
  cancel(id: number, ref: number = 0): boolean {
    const slot = isCount(id) && isRef(ref) ? this.slotOf.get(id) : NONE
    if (slot === NONE) {
      const reason = !isRef(ref) ? "INVALID_REF" : isCount(id) ? "UNKNOWN_ORDER" : "INVALID_ID"
      this.sink.rejected(++this.lastSeq, reason === "INVALID_REF" ? 0 : ref, reason)
      return false
    }
    const ladder = this.oSide[slot] === BUY ? this.bids : this.asks
    const level = this.oLevel[slot]!
    const open = this.oOpen[slot]!
    const levelQty = ladder.qty[level]! - open
    invariant(levelQty >= 0, "level quantity went negative on cancel")
    ladder.qty[level] = levelQty
    this.sink.status(++this.lastSeq, id, "CANCELED", this.oQty[slot]! - open, 0, undefined)
    this.sink.level(++this.lastSeq, SIDE_NAMES[this.oSide[slot]!]!, ladder.price[level]!, levelQty)
    this.remove(slot, ladder, level)
    if (levelQty === 0) ladder.emptied()
    return true
  }

  /**
   * Bytes held by the book's arrays and hash tables (orders, levels, indexes, owner lists); the
   * owner strings themselves are not counted. For memory accounting and tests.
   */
  storageBytes(): number {
    const slots = [this.oId, this.oOwner, this.oSide, this.oLevel, this.oQty, this.oOpen, this.oSeq, this.oNext, this.oPrev, this.oOwnNext, this.oOwnPrev]
    const owners = this.ownHead.byteLength + this.ownTail.byteLength
    return slots.reduce((sum, a) => sum + a.byteLength, owners + this.slotOf.bytes + this.bids.bytes + this.asks.bytes)
  }

  get(id: number): OpenOrder | undefined {
    const slot = this.slotOf.get(id)
    return slot === NONE ? undefined : this.view(slot)
  }

  bestBid(): PriceLevel | undefined {
    return topOf(this.bids)
  }

  bestAsk(): PriceLevel | undefined {
    return topOf(this.asks)
  }

  /** Up to `limit` levels per side, `limit` clamped to 1..DEPTH_LIMIT_MAX. */
  depth(limit: number = 100): Depth {
    const n = Math.max(1, Math.min(DEPTH_LIMIT_MAX, Math.floor(limit) || 1))
    return { seq: this.lastSeq, bids: levelsOf(this.bids, n), asks: levelsOf(this.asks, n) }
  }

  /** The owner's open orders in time priority. */
  openOrdersOf(owner: string): Array<OpenOrder> {
    const k = this.ownerIndex.get(owner)
    const out: Array<OpenOrder> = []
    if (k === undefined) return out
    for (let s = this.ownHead[k]!; s !== NONE; s = this.oOwnNext[s]!) out.push(this.view(s))
    return out
  }

  /** Every open order in time priority, with the counters needed to continue: input to `restore`. */
  snapshot(): Snapshot {
    const orders: Array<SnapshotOrder> = []
    this.slotOf.forEach((slot) => {
      const o = this.view(slot)
      orders.push({ id: o.id, owner: o.owner, side: o.side, price: o.price, qty: o.qty, openQty: o.openQty, seq: o.seq })
    })
    orders.sort((a, b) => a.seq - b.seq)
    return { seq: this.lastSeq, tradeId: this.lastTradeId, orders }
  }

  /**
   * Audits every structure in O(n): sorted levels, level totals equal to their orders, FIFO in
   * sequence order, links both ways, owner lists, counts. Throws InvariantViolation. For tests and
   * for a paranoid actor after restore; the hot path asserts the cheap subset.
   */
  checkInvariants(): void {
    let orders = 0
    for (const ladder of [this.bids, this.asks]) orders += this.auditSide(ladder)
    invariant(orders === this.slotOf.size, "orders on levels match the id index")
    let owned = 0
    for (const [owner, k] of this.ownerIndex) {
      invariant(this.ownerName[k] === owner && this.ownHead[k] !== NONE, "owner index points at a live list")
      let prev = NONE
      for (let s = this.ownHead[k]!; s !== NONE; s = this.oOwnNext[s]!) {
        invariant(this.oOwner[s] === k && this.oOwnPrev[s] === prev, "owner list links")
        prev = s
        owned++
      }
      invariant(this.ownTail[k] === prev, "owner list tail")
    }
    invariant(owned === this.slotOf.size, "every open order is in its owner's list")
    invariant(!this.isCrossed(), "book not crossed")
  }

  /**
   * Walks the opposite side from the best level while it crosses `price`; returns the taker's
   * quantity left. Sets `takerExpired` when self-trade prevention expired the taker.
   */
  private match(s: number, id: number, owner: string, taker: number, price: number, qty: number): number {
    const opp = s === BUY ? this.asks : this.bids
    const oppSide = SIDE_NAMES[1 - s]!
    const sink = this.sink
    const oOpen = this.oOpen
    const oOwner = this.oOwner
    const oNext = this.oNext
    let left = qty
    let traded = 0
    let takerExpired = false
    while (left > 0 && opp.n > 0) {
      const level = opp.sorted[opp.n - 1]!
      const levelPrice = opp.price[level]!
      if (s === BUY ? levelPrice > price : levelPrice < price) break
      const levelQtyBefore = opp.qty[level]!
      let levelQty = levelQtyBefore
      let m = opp.head[level]!
      while (m !== NONE && left > 0) {
        const next = oNext[m]!
        const makerOpen = oOpen[m]!
        if (oOwner[m] === taker) {
          if (this.stp !== "EXPIRE_TAKER") {
            levelQty -= makerOpen
            this.sink.status(++this.lastSeq, this.oId[m]!, "EXPIRED", this.oQty[m]! - makerOpen, 0, undefined)
            this.remove(m, opp, level)
          }
          if (this.stp !== "EXPIRE_MAKER") {
            takerExpired = true
            break
          }
        } else {
          const fill = left < makerOpen ? left : makerOpen
          invariant(fill > 0, "a fill is positive")
          left -= fill
          traded += fill
          levelQty -= fill
          const makerId = this.oId[m]!
          sink.trade(++this.lastSeq, ++this.lastTradeId, makerId, id, this.ownerName[oOwner[m]!]!, owner, levelPrice, fill, oppSide)
          if (fill === makerOpen) {
            sink.status(++this.lastSeq, makerId, "FILLED", this.oQty[m]!, 0, undefined)
            this.remove(m, opp, level)
          } else {
            oOpen[m] = makerOpen - fill
            sink.status(++this.lastSeq, makerId, "PARTIALLY_FILLED", this.oQty[m]! - oOpen[m]!, oOpen[m]!, undefined)
          }
        }
        m = next
      }
      invariant(levelQty >= 0 && (levelQty === 0) === (opp.head[level] === NONE), "a level's total is the sum of its orders")
      if (levelQty === levelQtyBefore) break // EXPIRE_TAKER at the level's first order: nothing changed, no event
      opp.qty[level] = levelQty
      sink.level(++this.lastSeq, oppSide, levelPrice, levelQty)
      if (levelQty === 0) opp.emptied()
      if (takerExpired || levelQty > 0) break
    }
    invariant(traded + left === qty, "the taker's fills plus its rest equal its quantity")
    this.takerExpired = takerExpired
    return left
  }

  /** Puts an order on the FIFO tail of `level` and on its owner's list (`ownerHint`: its index if known). */
  private rest(id: number, owner: string, ownerHint: number, s: number, level: number, qty: number, open: number, seq: number): void {
    const ladder = s === BUY ? this.bids : this.asks
    const slot = this.allocSlot()
    this.oId[slot] = id
    this.oSide[slot] = s
    this.oLevel[slot] = level
    this.oQty[slot] = qty
    this.oOpen[slot] = open
    this.oSeq[slot] = seq
    const tail = ladder.tail[level]!
    this.oPrev[slot] = tail
    this.oNext[slot] = NONE
    if (tail === NONE) ladder.head[level] = slot
    else this.oNext[tail] = slot
    ladder.tail[level] = slot
    ladder.qty[level] = ladder.qty[level]! + open
    // The hint is stale if matching expired the owner's last order (the index was released).
    const k = ownerHint !== NONE && this.ownerName[ownerHint] === owner ? ownerHint : this.intern(owner)
    this.linkOwner(slot, k)
    this.slotOf.set(id, slot)
  }

  /** Unlinks a slot from its level and owner and frees it. The caller has adjusted the level total. */
  private remove(slot: number, ladder: Ladder, level: number): void {
    const prev = this.oPrev[slot]!
    const next = this.oNext[slot]!
    if (prev === NONE) ladder.head[level] = next
    else this.oNext[prev] = next
    if (next === NONE) ladder.tail[level] = prev
    else this.oPrev[next] = prev
    this.unlinkOwner(slot)
    this.slotOf.delete(this.oId[slot]!)
    this.oNext[slot] = this.freeSlot
    this.freeSlot = slot
  }

  private intern(owner: string): number {
    const known = this.ownerIndex.get(owner)
    if (known !== undefined) return known
    const k = this.freeOwners.pop() ?? this.ownerName.length
    if (k === this.ownerName.length) this.ownerName.push(owner)
    else this.ownerName[k] = owner
    if (k >= this.ownHead.length) {
      this.ownHead = grow(this.ownHead, this.ownHead.length * 2)
      this.ownTail = grow(this.ownTail, this.ownTail.length * 2)
    }
    this.ownHead[k] = NONE
    this.ownTail[k] = NONE
    this.ownerIndex.set(owner, k)
    return k
  }

  private linkOwner(slot: number, k: number): void {
    this.oOwner[slot] = k
    const tail = this.ownTail[k]!
    this.oOwnPrev[slot] = tail
    this.oOwnNext[slot] = NONE
    if (tail === NONE) this.ownHead[k] = slot
    else this.oOwnNext[tail] = slot
    this.ownTail[k] = slot
  }

  private unlinkOwner(slot: number): void {
    const k = this.oOwner[slot]!
    const prev = this.oOwnPrev[slot]!
    const next = this.oOwnNext[slot]!
    if (prev === NONE) this.ownHead[k] = next
    else this.oOwnNext[prev] = next
    if (next === NONE) this.ownTail[k] = prev
    else this.oOwnPrev[next] = prev
    if (this.ownHead[k] === NONE) {
      this.ownerIndex.delete(this.ownerName[k]!)
      this.ownerName[k] = ""
      this.freeOwners.push(k)
    }
  }

  private allocSlot(): number {
    if (this.freeSlot !== NONE) {
      const slot = this.freeSlot
      this.freeSlot = this.oNext[slot]!
      return slot
    }
    if (this.slotsUsed === this.oId.length) this.growSlots(this.slotsUsed * 2)
    return this.slotsUsed++
  }

  private growSlots(capacity: number): void {
    this.oId = grow(this.oId, capacity)
    this.oOwner = grow(this.oOwner, capacity)
    this.oSide = grow(this.oSide, capacity)
    this.oLevel = grow(this.oLevel, capacity)
    this.oQty = grow(this.oQty, capacity)
    this.oOpen = grow(this.oOpen, capacity)
    this.oSeq = grow(this.oSeq, capacity)
    this.oNext = grow(this.oNext, capacity)
    this.oPrev = grow(this.oPrev, capacity)
    this.oOwnNext = grow(this.oOwnNext, capacity)
    this.oOwnPrev = grow(this.oOwnPrev, capacity)
  }

  private rejectReason(o: NewOrder): RejectReason | undefined {
    if (o.ref !== undefined && !isRef(o.ref)) return "INVALID_REF"
    if (!isCount(o.id)) return "INVALID_ID"
    if (this.slotOf.has(o.id)) return "DUPLICATE_ID"
    if (typeof o.owner !== "string" || o.owner.length === 0) return "INVALID_OWNER"
    if (o.side !== "BUY" && o.side !== "SELL") return "INVALID_SIDE"
    if (!isCount(o.price)) return "INVALID_PRICE"
    if (!isCount(o.qty) || o.qty > this.qtyMax) return "INVALID_QUANTITY"
    if (this.slotOf.size >= this.ordersMax) return "BOOK_FULL"
    return undefined // LEVEL_FULL is checked by place, which looks the level up anyway
  }

  private isCrossed(): boolean {
    const b = this.bids.top()
    const a = this.asks.top()
    return b !== NONE && a !== NONE && this.bids.price[b]! >= this.asks.price[a]!
  }

  private view(slot: number): OpenOrder {
    const s = this.oSide[slot]!
    const ladder = s === BUY ? this.bids : this.asks
    const qty = this.oQty[slot]!
    const open = this.oOpen[slot]!
    return {
      id: this.oId[slot]!,
      owner: this.ownerName[this.oOwner[slot]!]!,
      side: SIDE_NAMES[s]!,
      price: ladder.price[this.oLevel[slot]!]!,
      qty,
      executedQty: qty - open,
      openQty: open,
      seq: this.oSeq[slot]!,
      status: open === qty ? "NEW" : "PARTIALLY_FILLED"
    }
  }

  private auditSide(ladder: Ladder): number {
    const s = ladder === this.bids ? BUY : SELL
    let orders = 0
    let empty = 0
    let lastKey = -Infinity
    for (let i = 0; i < ladder.n; i++) {
      const level = ladder.sorted[i]!
      const price = ladder.price[level]!
      invariant(ladder.sign * price > lastKey, "levels strictly sorted")
      invariant(ladder.byPrice.get(price) === level, "price index points at the level")
      lastKey = ladder.sign * price
      let sum = 0
      let prev = NONE
      let lastSeq = 0
      for (let o = ladder.head[level]!; o !== NONE; o = this.oNext[o]!) {
        invariant(this.oPrev[o] === prev && this.oLevel[o] === level && this.oSide[o] === s, "level FIFO links")
        invariant(this.oSeq[o]! > lastSeq, "FIFO in time priority")
        invariant(this.oOpen[o]! > 0 && this.oOpen[o]! <= this.oQty[o]!, "open quantity within the order")
        invariant(this.slotOf.get(this.oId[o]!) === o, "id index points at the slot")
        lastSeq = this.oSeq[o]!
        sum += this.oOpen[o]!
        prev = o
        orders++
      }
      invariant(ladder.tail[level] === prev, "level tail")
      invariant(sum === ladder.qty[level], "level total equals its orders")
      if (prev === NONE) empty++
    }
    invariant(empty === ladder.empty && ladder.byPrice.size === ladder.n, "empty-level count and price index size")
    invariant(ladder.n === 0 || ladder.head[ladder.top()] !== NONE, "the top level is live")
    return orders
  }
}

const topOf = (ladder: Ladder): PriceLevel | undefined => {
  const h = ladder.top()
  return h === NONE ? undefined : { price: ladder.price[h]!, qty: ladder.qty[h]! }
}

const levelsOf = (ladder: Ladder, limit: number): Array<PriceLevel> => {
  const out: Array<PriceLevel> = []
  ladder.forEachLive(limit, (h) => out.push({ price: ladder.price[h]!, qty: ladder.qty[h]! }))
  return out
}
