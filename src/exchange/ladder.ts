// One side of the book: its price levels, sorted with the best price last so that the levels
// that come and go most (near the top) are the cheapest to insert and pop. A level is a 32-byte
// record (price, total open quantity, FIFO head and tail slots) in one buffer, so a level costs
// one cache line; each level heads an intrusive FIFO of order slots whose links belong to the
// book (book.ts, slots.ts).
//
// A level emptied below the top by a cancel stays in place (and in `byPrice`) so the next order at
// that price reuses it without a search; empty levels are popped when they reach the top and
// compacted away once they outnumber the live ones. That keeps cancel O(1) amortised.

import { IntMap } from "./intmap.ts"

const NONE = -1
const COMPACT_MIN_EMPTY = 64
/** Levels a new ladder has room for, and the least it shrinks back to. */
export const LEVELS_MIN = 256

// A level record: 4 float64 = 8 int32. Float fields at h*LF + LF_*, int fields at h*LI + LI_*.
// The book's hot paths index `f` and `i` directly (a call per field read did not always inline);
// everything else goes through the accessors.
export const LF = 4
export const LF_PRICE = 0
export const LF_QTY = 1
export const LI = 8
export const LI_HEAD = 4
export const LI_TAIL = 5
const F_PRICE = LF_PRICE
const F_QTY = LF_QTY
const I_HEAD = LI_HEAD
const I_TAIL = LI_TAIL

export class Ladder {
  /** Level records; replaced when the ladder grows (only `levelFor` grows it). */
  f: Float64Array
  i: Int32Array
  /** Handles sorted by `sign * price` ascending: the best level is `sorted[n - 1]`. */
  sorted: Int32Array
  n = 0
  /** Empty levels still in `sorted` (all of them below the top). */
  empty = 0
  /** price → handle of every level in `sorted`, live or empty. */
  byPrice: IntMap
  private free: Int32Array
  private freeN = 0
  private used = 0

  /** `sign` is +1 for bids (higher is better) and -1 for asks (lower is better). */
  constructor(readonly sign: 1 | -1, capacity = LEVELS_MIN) {
    this.byPrice = new IntMap(capacity)
    const buffer = new ArrayBuffer(capacity * 32)
    this.f = new Float64Array(buffer)
    this.i = new Int32Array(buffer)
    this.sorted = new Int32Array(capacity)
    this.free = new Int32Array(capacity)
  }

  price(h: number): number {
    return this.f[h * 4 + F_PRICE]!
  }

  qty(h: number): number {
    return this.f[h * 4 + F_QTY]!
  }

  setQty(h: number, qty: number): void {
    this.f[h * 4 + F_QTY] = qty
  }

  /** First order slot of the level's FIFO, -1 when the level is empty. */
  head(h: number): number {
    return this.i[h * 8 + I_HEAD]!
  }

  setHead(h: number, slot: number): void {
    this.i[h * 8 + I_HEAD] = slot
  }

  tail(h: number): number {
    return this.i[h * 8 + I_TAIL]!
  }

  setTail(h: number, slot: number): void {
    this.i[h * 8 + I_TAIL] = slot
  }

  /** Level records the ladder has room for. */
  get capacity(): number {
    return this.f.byteLength / 32
  }

  /** Bytes of its arrays and price index. */
  get bytes(): number {
    return this.f.byteLength + this.sorted.byteLength + this.free.byteLength + this.byPrice.bytes
  }

  /** The best level's handle, or -1 when the side is empty. Never an empty level. */
  top(): number {
    return this.n === 0 ? NONE : this.sorted[this.n - 1]!
  }

  /** The level an order at `price` is about to join: `found` (byPrice.get(price)), or a new one in place. */
  levelFor(price: number, found: number): number {
    if (found !== NONE) {
      if (this.head(found) === NONE) this.empty--
      return found
    }
    const h = this.alloc()
    this.f[h * 4 + F_PRICE] = price
    this.f[h * 4 + F_QTY] = 0
    this.i[h * 8 + I_HEAD] = NONE
    this.i[h * 8 + I_TAIL] = NONE
    this.insertSorted(h, this.sign * price)
    this.byPrice.set(price, h)
    return h
  }

  /** Records that level `h` lost its last order; pops empty levels off the top. */
  emptied(): void {
    this.empty++
    while (this.n > 0 && this.head(this.sorted[this.n - 1]!) === NONE) {
      this.n--
      this.empty--
      this.release(this.sorted[this.n]!)
    }
    if (this.empty >= COMPACT_MIN_EMPTY && this.empty * 2 > this.n) this.compact()
  }

  /** Calls `f(handle)` for live levels from the best down, at most `limit` of them. */
  forEachLive(limit: number, f: (h: number) => void): void {
    let seen = 0
    for (let i = this.n - 1; i >= 0 && seen < limit; i--) {
      const h = this.sorted[i]!
      if (this.head(h) === NONE) continue
      f(h)
      seen++
    }
  }

  /**
   * A right-sized copy holding only the live levels, best last as always, with empty FIFOs and
   * totals carried over; `moved[old handle]` receives the new handle. The caller relinks orders.
   */
  rebuilt(moved: Int32Array): Ladder {
    const live = this.n - this.empty
    let capacity = LEVELS_MIN
    while (capacity < live * 2) capacity *= 2
    const next = new Ladder(this.sign, capacity)
    for (let r = 0; r < this.n; r++) {
      const h = this.sorted[r]!
      if (this.head(h) === NONE) continue
      const k = next.used++
      next.f[k * 4 + F_PRICE] = this.price(h)
      next.f[k * 4 + F_QTY] = this.qty(h)
      next.i[k * 8 + I_HEAD] = NONE
      next.i[k * 8 + I_TAIL] = NONE
      next.sorted[next.n++] = k
      next.byPrice.set(this.price(h), k)
      moved[h] = k
    }
    return next
  }

  private insertSorted(h: number, key: number): void {
    if (this.n === this.sorted.length) this.sorted = grow(this.sorted, this.n * 2)
    // New levels mostly land near the best price, at the end: search backwards from there first.
    const sorted = this.sorted
    let i = this.n
    if (i > 0 && this.sign * this.price(sorted[i - 1]!) > key) {
      let lo = 0
      let hi = this.n - 1
      while (lo < hi) {
        const mid = (lo + hi) >>> 1
        if (this.sign * this.price(sorted[mid]!) > key) hi = mid
        else lo = mid + 1
      }
      i = lo
      sorted.copyWithin(i + 1, i, this.n)
    }
    sorted[i] = h
    this.n++
  }

  private compact(): void {
    let w = 0
    for (let r = 0; r < this.n; r++) {
      const h = this.sorted[r]!
      if (this.head(h) === NONE) this.release(h)
      else this.sorted[w++] = h
    }
    this.n = w
    this.empty = 0
  }

  private alloc(): number {
    if (this.freeN > 0) return this.free[--this.freeN]!
    if (this.used * 32 === this.f.byteLength) {
      const cap = this.used * 2
      const buffer = new ArrayBuffer(cap * 32)
      new Uint8Array(buffer).set(new Uint8Array(this.f.buffer))
      this.f = new Float64Array(buffer)
      this.i = new Int32Array(buffer)
      this.free = grow(this.free, cap)
    }
    return this.used++
  }

  private release(h: number): void {
    this.byPrice.delete(this.price(h))
    this.free[this.freeN++] = h
  }
}

/** A copy of `a` with room for `capacity` elements. */
export const grow = <A extends Float64Array | Int32Array | Uint8Array>(a: A, capacity: number): A => {
  const b = new (a.constructor as new(n: number) => A)(capacity)
  b.set(a)
  return b
}
