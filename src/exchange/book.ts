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
// Layout, for speed: open orders are 64-byte records in one buffer (slots.ts), each linked into
// its price level's FIFO and into its owner's list; an id → slot hash table (intmap.ts) gives
// O(1) cancel and get. Levels are in ladder.ts. Freed slots are reused, so a steady state
// allocates nothing per operation. Storage follows the open orders down as well as up: when
// three quarters of it stand empty, the book rebuilds it at its live size (see `rebuild`).
import type { BookSink, OrderStatus, RejectReason, Side } from "./events.ts"
import { IntMap } from "./intmap.ts"
import { grow, Ladder, LEVELS_MIN, LF, LF_PRICE, LF_QTY, LI, LI_HEAD, LI_TAIL } from "./ladder.ts"
import { F, F_ID, F_OPEN, F_QTY, F_SEQ, I, I_LEVEL, I_NEXT, I_OWN_NEXT, I_OWN_PREV, I_OWNER, I_PREV, I_SIDE, NONE, OrderSlots, SLOTS_MIN } from "./slots.ts"
import type { Snapshot, SnapshotOrder } from "./snapshot.ts"
import { validateSnapshot } from "./snapshot.ts"

/** Binance's self-trade prevention modes; see docs/matching.md for the choice of default. */
export { type BookConfig, defaultBookConfig, type StpMode } from "./bookConfig.ts"
import type { BookConfig, StpMode } from "./bookConfig.ts"

export interface NewOrder {
  readonly id: number
  /**
   * The caller's correlation number for this request (a non-negative safe integer; none by
   * default), echoed only by a `rejected` event (null there when none was given, so 0 is a real
   * ref). Not an order identity: the book never indexes it.
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

const BUY = 0
const SELL = 1
const SIDE_NAMES: ReadonlyArray<Side> = ["BUY", "SELL"]
const OWNERS_MIN = 64

const isCount = (n: number): boolean => Number.isSafeInteger(n) && n > 0
const isRef = (n: number): boolean => Number.isSafeInteger(n) && n >= 0

export class OrderBook {
  private bids = new Ladder(1)
  private asks = new Ladder(-1)
  private readonly stp: StpMode
  private readonly ordersMax: number
  private readonly qtyMax: number
  private lastSeq = 0
  private lastTradeId = 0
  private takerExpired = false

  // Open orders, by slot, and id → slot.
  private slots = new OrderSlots(SLOTS_MIN)
  private slotOf = new IntMap(SLOTS_MIN)

  // Owners, interned to small integers; each heads a list of its slots. An owner whose last order
  // closed keeps its entry (with an empty list) until the next rebuild: on a small book most
  // owners come and go with their one order, and a Map delete and insert per order cost more
  // than the entry. `liveOwners` counts the owners with open orders.
  private ownerIndex = new Map<string, number>()
  private ownerName: Array<string> = []
  private ownHead = new Int32Array(OWNERS_MIN)
  private ownTail = new Int32Array(OWNERS_MIN)
  private liveOwners = 0

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
    if (found !== NONE && own.f[found * LF + LF_QTY]! + qty > Number.MAX_SAFE_INTEGER) reason = "LEVEL_FULL"
    if (reason !== undefined) {
      this.sink.rejected(reason === "INVALID_REF" ? null : order.ref ?? null, reason)
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
      this.sink.level(++this.lastSeq, side, price, own.f[level * LF + LF_QTY]!)
    }
    invariant(!this.isCrossed(), "book crossed after a place")
    this.shrinkIfSparse()
    return status
  }

  /**
   * Cancels an open order: CANCELED status and a level change. Otherwise returns false and emits
   * one `rejected` event carrying `ref` (UNKNOWN_ORDER, INVALID_ID or INVALID_REF), which takes
   * no sequence number: a client's refused cancels do not move the market's sequence.
   */
  cancel(id: number, ref?: number): boolean {
    const refOk = ref === undefined || isRef(ref)
    const slot = isCount(id) && refOk ? this.slotOf.get(id) : NONE
    if (slot === NONE) {
      const reason = !refOk ? "INVALID_REF" : isCount(id) ? "UNKNOWN_ORDER" : "INVALID_ID"
      this.sink.rejected(reason === "INVALID_REF" ? null : ref ?? null, reason)
      return false
    }
    const f = this.slots.f
    const i = this.slots.i
    const s = i[slot * I + I_SIDE]!
    const ladder = s === BUY ? this.bids : this.asks
    const level = i[slot * I + I_LEVEL]!
    const open = f[slot * F + F_OPEN]!
    const lf = ladder.f
    const levelQty = lf[level * LF + LF_QTY]! - open
    invariant(levelQty >= 0, "level quantity went negative on cancel")
    lf[level * LF + LF_QTY] = levelQty
    this.sink.status(++this.lastSeq, id, "CANCELED", f[slot * F + F_QTY]! - open, 0, undefined)
    this.sink.level(++this.lastSeq, SIDE_NAMES[s]!, lf[level * LF + LF_PRICE]!, levelQty)
    this.remove(slot, ladder, level)
    if (levelQty === 0) ladder.emptied()
    this.shrinkIfSparse()
    return true
  }

  /**
   * Bytes held by the book's arrays and hash tables (orders, levels, indexes, owner tables); the
   * owner strings and the owner Map are not counted. For memory accounting and tests.
   */
  storageBytes(): number {
    const owners = this.ownHead.byteLength + this.ownTail.byteLength + 8 * this.ownerName.length
    return this.slots.bytes + this.slotOf.bytes + this.bids.bytes + this.asks.bytes + owners
  }

  get(id: number): OpenOrder | undefined {
    const slot = isCount(id) ? this.slotOf.get(id) : NONE
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
    for (let s = this.ownHead[k]!; s !== NONE; s = this.slots.i[s * I + I_OWN_NEXT]!) out.push(this.view(s))
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
    const i = this.slots.i
    let owned = 0
    let live = 0
    for (const [owner, k] of this.ownerIndex) {
      invariant(this.ownerName[k] === owner, "owner index points at its name")
      if (this.ownHead[k] !== NONE) live++
      let prev = NONE
      for (let s = this.ownHead[k]!; s !== NONE; s = i[s * I + I_OWN_NEXT]!) {
        invariant(i[s * I + I_OWNER] === k && i[s * I + I_OWN_PREV] === prev, "owner list links")
        prev = s
        owned++
      }
      invariant(this.ownTail[k] === prev, "owner list tail")
    }
    invariant(owned === this.slotOf.size, "every open order is in its owner's list")
    invariant(live === this.liveOwners && this.ownerIndex.size === this.ownerName.length, "owner counts")
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
    // No slot or level is allocated while matching, so the record arrays stay put.
    const f = this.slots.f
    const i = this.slots.i
    const lf = opp.f
    const li = opp.i
    let left = qty
    let traded = 0
    let takerExpired = false
    while (left > 0 && opp.n > 0) {
      const level = opp.sorted[opp.n - 1]!
      const levelPrice = lf[level * LF + LF_PRICE]!
      if (s === BUY ? levelPrice > price : levelPrice < price) break
      const levelQtyBefore = lf[level * LF + LF_QTY]!
      let levelQty = levelQtyBefore
      let m = li[level * LI + LI_HEAD]!
      while (m !== NONE && left > 0) {
        const next = i[m * I + I_NEXT]!
        const makerOpen = f[m * F + F_OPEN]!
        const makerOwner = i[m * I + I_OWNER]!
        if (makerOwner === taker) {
          if (this.stp !== "EXPIRE_TAKER") {
            levelQty -= makerOpen
            sink.status(++this.lastSeq, f[m * F + F_ID]!, "EXPIRED", f[m * F + F_QTY]! - makerOpen, 0, undefined)
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
          const makerId = f[m * F + F_ID]!
          sink.trade(++this.lastSeq, ++this.lastTradeId, makerId, id, this.ownerName[makerOwner]!, owner, levelPrice, fill, oppSide)
          if (fill === makerOpen) {
            sink.status(++this.lastSeq, makerId, "FILLED", f[m * F + F_QTY]!, 0, undefined)
            this.remove(m, opp, level)
          } else {
            const open = makerOpen - fill
            f[m * F + F_OPEN] = open
            sink.status(++this.lastSeq, makerId, "PARTIALLY_FILLED", f[m * F + F_QTY]! - open, open, undefined)
          }
        }
        m = next
      }
      invariant(levelQty >= 0 && (levelQty === 0) === (li[level * LI + LI_HEAD] === NONE), "a level's total is the sum of its orders")
      if (levelQty === levelQtyBefore) break // EXPIRE_TAKER at the level's first order: nothing changed, no event
      lf[level * LF + LF_QTY] = levelQty
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
    const slot = this.slots.alloc()
    const f = this.slots.f
    const i = this.slots.i
    // The hint is stale if matching expired the owner's last order (the index was released).
    const k = ownerHint !== NONE && this.ownerName[ownerHint] === owner ? ownerHint : this.intern(owner)
    const lf = ladder.f
    const li = ladder.i
    const tail = li[level * LI + LI_TAIL]!
    f[slot * F + F_ID] = id
    f[slot * F + F_QTY] = qty
    f[slot * F + F_OPEN] = open
    f[slot * F + F_SEQ] = seq
    i[slot * I + I_SIDE] = s
    i[slot * I + I_LEVEL] = level
    i[slot * I + I_PREV] = tail
    i[slot * I + I_NEXT] = NONE
    if (tail === NONE) li[level * LI + LI_HEAD] = slot
    else i[tail * I + I_NEXT] = slot
    li[level * LI + LI_TAIL] = slot
    lf[level * LF + LF_QTY] = lf[level * LF + LF_QTY]! + open
    const ownTail = this.ownTail[k]!
    i[slot * I + I_OWNER] = k
    i[slot * I + I_OWN_PREV] = ownTail
    i[slot * I + I_OWN_NEXT] = NONE
    if (ownTail === NONE) {
      this.ownHead[k] = slot
      this.liveOwners++
    } else i[ownTail * I + I_OWN_NEXT] = slot
    this.ownTail[k] = slot
    this.slotOf.set(id, slot)
  }

  /** Unlinks a slot from its level and owner and frees it. The caller has adjusted the level total. */
  private remove(slot: number, ladder: Ladder, level: number): void {
    const f = this.slots.f
    const i = this.slots.i
    const prev = i[slot * I + I_PREV]!
    const next = i[slot * I + I_NEXT]!
    const li = ladder.i
    if (prev === NONE) li[level * LI + LI_HEAD] = next
    else i[prev * I + I_NEXT] = next
    if (next === NONE) li[level * LI + LI_TAIL] = prev
    else i[next * I + I_PREV] = prev
    const k = i[slot * I + I_OWNER]!
    const ownPrev = i[slot * I + I_OWN_PREV]!
    const ownNext = i[slot * I + I_OWN_NEXT]!
    if (ownPrev === NONE) this.ownHead[k] = ownNext
    else i[ownPrev * I + I_OWN_NEXT] = ownNext
    if (ownNext === NONE) this.ownTail[k] = ownPrev
    else i[ownNext * I + I_OWN_PREV] = ownPrev
    if (ownPrev === NONE && ownNext === NONE) this.liveOwners--
    this.slotOf.delete(f[slot * F + F_ID]!)
    this.slots.release(slot)
  }

  private intern(owner: string): number {
    const known = this.ownerIndex.get(owner)
    if (known !== undefined) return known
    const k = this.ownerName.length
    this.ownerName.push(owner)
    if (k >= this.ownHead.length) {
      this.ownHead = grow(this.ownHead, this.ownHead.length * 2)
      this.ownTail = grow(this.ownTail, this.ownTail.length * 2)
    }
    this.ownHead[k] = NONE
    this.ownTail[k] = NONE
    this.ownerIndex.set(owner, k)
    return k
  }

  /**
   * The high-water rule: when the open orders fill less than a quarter of the record storage
   * (above its floor, SLOTS_MIN), rebuild everything at its live size. Growth doubles and this at
   * least halves, so record and index storage stay within 4× of what the open orders need, or at
   * the floor, and each rebuild, O(storage), is paid for by the quarter of the storage that
   * emptied since the last one. Level storage is rebuilt at the same time; in between it is at
   * most twice the most levels live since, and live levels never outnumber open orders. Owner
   * entries whose orders all closed are dropped by a rebuild; one is also due when the entries
   * outnumber both the record capacity and four times the owners with open orders, which keeps
   * them within the record storage and pays for that rebuild with the interns since the last.
   */
  private shrinkIfSparse(): void {
    const capacity = this.slots.capacity
    if (capacity > SLOTS_MIN && this.slotOf.size * 4 < capacity) this.rebuild()
    else if (this.slotOf.size === 0 && this.aboveFloor()) this.rebuild() // an empty book holds exactly the floor
    else if (this.slotOf.size === 0 && this.ownerName.length > 0) this.forgetOwners()
    else if (this.ownerName.length > capacity && this.ownerName.length > 4 * this.liveOwners) this.rebuild() // owners that left
  }

  /**
   * An empty book within its floor drops the entries of owners who left (at most OWNERS_MIN, so
   * O(64) and no allocation): it then holds exactly a new book's storage. The owner tables stay
   * at their floor size; a re-interned owner resets its head and tail.
   */
  private forgetOwners(): void {
    this.ownerIndex.clear()
    this.ownerName.length = 0
  }

  private aboveFloor(): boolean {
    return this.bids.capacity > LEVELS_MIN || this.asks.capacity > LEVELS_MIN || this.ownerName.length > OWNERS_MIN
  }

  /**
   * Copies the open orders into right-sized storage: levels in price order, each FIFO in order
   * (so neighbours in a queue are neighbours in memory), owner indices renumbered, the id index
   * and owner tables rebuilt. Nothing observable changes.
   */
  private rebuild(): void {
    const old = this.slots
    const count = this.slotOf.size
    let capacity = SLOTS_MIN
    while (capacity < count * 2) capacity *= 2
    const slots = new OrderSlots(capacity)
    const slotOf = new IntMap(Math.max(SLOTS_MIN, count))
    const moved = new Int32Array(old.highWater)
    const ownerMoved = new Int32Array(this.ownerName.length).fill(NONE)
    const ownerName: Array<string> = []
    const ownerIndex = new Map<string, number>()
    const sides: Array<Ladder> = []
    for (const ladder of [this.bids, this.asks]) {
      const levelMoved = new Int32Array(ladder.capacity)
      const next = ladder.rebuilt(levelMoved)
      for (let r = 0; r < ladder.n; r++) {
        const h = ladder.sorted[r]!
        let prev = NONE
        for (let o = ladder.head(h); o !== NONE; o = old.i[o * I + I_NEXT]!) {
          const n = slots.alloc()
          for (let w = 0; w < 4; w++) slots.f[n * F + w] = old.f[o * F + w]! // id, qty, open, seq
          const k = old.i[o * I + I_OWNER]!
          if (ownerMoved[k] === NONE) {
            ownerMoved[k] = ownerName.length
            ownerIndex.set(this.ownerName[k]!, ownerName.length)
            ownerName.push(this.ownerName[k]!)
          }
          slots.i[n * I + I_SIDE] = old.i[o * I + I_SIDE]!
          slots.i[n * I + I_LEVEL] = levelMoved[h]!
          slots.i[n * I + I_OWNER] = ownerMoved[k]!
          slots.i[n * I + I_PREV] = prev
          slots.i[n * I + I_NEXT] = NONE
          if (prev === NONE) next.setHead(levelMoved[h]!, n)
          else slots.i[prev * I + I_NEXT] = n
          next.setTail(levelMoved[h]!, n)
          slotOf.set(old.f[o * F + F_ID]!, n)
          moved[o] = n
          prev = n
        }
      }
      sides.push(next)
    }
    // Owner lists keep their order: relink them through `moved`.
    let ownersCap = OWNERS_MIN
    while (ownersCap < ownerName.length) ownersCap *= 2
    const ownHead = new Int32Array(ownersCap)
    const ownTail = new Int32Array(ownersCap)
    const at = (o: number) => (o === NONE ? NONE : moved[o]!)
    for (const [name, k] of this.ownerIndex) {
      const k2 = ownerIndex.get(name)
      if (k2 === undefined) continue // no open order: dropped
      ownHead[k2] = at(this.ownHead[k]!)
      ownTail[k2] = at(this.ownTail[k]!)
      for (let o = this.ownHead[k]!; o !== NONE; o = old.i[o * I + I_OWN_NEXT]!) {
        slots.i[moved[o]! * I + I_OWN_NEXT] = at(old.i[o * I + I_OWN_NEXT]!)
        slots.i[moved[o]! * I + I_OWN_PREV] = at(old.i[o * I + I_OWN_PREV]!)
      }
    }
    this.slots = slots
    this.slotOf = slotOf
    this.bids = sides[0]!
    this.asks = sides[1]!
    this.ownerIndex = ownerIndex
    this.ownerName = ownerName
    this.ownHead = ownHead
    this.ownTail = ownTail
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
    return b !== NONE && a !== NONE && this.bids.price(b) >= this.asks.price(a)
  }

  private view(slot: number): OpenOrder {
    const f = this.slots.f
    const i = this.slots.i
    const s = i[slot * I + I_SIDE]!
    const ladder = s === BUY ? this.bids : this.asks
    const qty = f[slot * F + F_QTY]!
    const open = f[slot * F + F_OPEN]!
    return {
      id: f[slot * F + F_ID]!,
      owner: this.ownerName[i[slot * I + I_OWNER]!]!,
      side: SIDE_NAMES[s]!,
      price: ladder.price(i[slot * I + I_LEVEL]!),
      qty,
      executedQty: qty - open,
      openQty: open,
      seq: f[slot * F + F_SEQ]!,
      status: open === qty ? "NEW" : "PARTIALLY_FILLED"
    }
  }

  private auditSide(ladder: Ladder): number {
    const s = ladder === this.bids ? BUY : SELL
    const f = this.slots.f
    const i = this.slots.i
    let orders = 0
    let empty = 0
    let lastKey = -Infinity
    for (let r = 0; r < ladder.n; r++) {
      const level = ladder.sorted[r]!
      const price = ladder.price(level)
      invariant(ladder.sign * price > lastKey, "levels strictly sorted")
      invariant(ladder.byPrice.get(price) === level, "price index points at the level")
      lastKey = ladder.sign * price
      let sum = 0
      let prev = NONE
      let lastSeq = 0
      for (let o = ladder.head(level); o !== NONE; o = i[o * I + I_NEXT]!) {
        invariant(i[o * I + I_PREV] === prev && i[o * I + I_LEVEL] === level && i[o * I + I_SIDE] === s, "level FIFO links")
        invariant(f[o * F + F_SEQ]! > lastSeq, "FIFO in time priority")
        invariant(f[o * F + F_OPEN]! > 0 && f[o * F + F_OPEN]! <= f[o * F + F_QTY]!, "open quantity within the order")
        invariant(this.slotOf.get(f[o * F + F_ID]!) === o, "id index points at the slot")
        lastSeq = f[o * F + F_SEQ]!
        sum += f[o * F + F_OPEN]!
        prev = o
        orders++
      }
      invariant(ladder.tail(level) === prev, "level tail")
      invariant(sum === ladder.qty(level), "level total equals its orders")
      if (prev === NONE) empty++
    }
    invariant(empty === ladder.empty && ladder.byPrice.size === ladder.n, "empty-level count and price index size")
    invariant(ladder.n === 0 || ladder.head(ladder.top()) !== NONE, "the top level is live")
    return orders
  }
}

const topOf = (ladder: Ladder): PriceLevel | undefined => {
  const h = ladder.top()
  return h === NONE ? undefined : { price: ladder.price(h), qty: ladder.qty(h) }
}

const levelsOf = (ladder: Ladder, limit: number): Array<PriceLevel> => {
  const out: Array<PriceLevel> = []
  ladder.forEachLive(limit, (h) => out.push({ price: ladder.price(h), qty: ladder.qty(h) }))
  return out
}
