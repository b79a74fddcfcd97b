// A hash map from positive safe integers to non-negative int32 values, in one Float64Array of
// [key, value] pairs with linear probing: a lookup is usually one cache line. Used for
// order id → slot and price → level, where a JS Map was most of the book's time (profiled: its
// lookups on a 500k-entry map are several dependent cache misses).
//
// The hash is murmur3's finaliser: keys that share their low bits (ids a table size apart, both
// still open) must not pile into one cluster, which an identity hash would do. Deletion shifts
// back the cluster, so there are no tombstones. Load stays at most one half.

const EMPTY = 0 // keys are positive, so 0 marks a free cell
const MIN_CAPACITY = 16

export class IntMap {
  private cells: Float64Array
  private mask: number
  private count = 0

  constructor(capacity = MIN_CAPACITY) {
    let cap = MIN_CAPACITY
    while (cap < capacity * 2) cap *= 2
    this.cells = new Float64Array(cap * 2)
    this.mask = cap - 1
  }

  get size(): number {
    return this.count
  }

  /** Bytes of the table. */
  get bytes(): number {
    return this.cells.byteLength
  }

  /** The value for `key`, or -1. */
  get(key: number): number {
    const cells = this.cells
    const mask = this.mask
    for (let i = hash(key) & mask; ; i = (i + 1) & mask) {
      const k = cells[2 * i]!
      if (k === EMPTY) return -1 // first: a key of 0 is never present
      if (k === key) return cells[2 * i + 1]!
    }
  }

  has(key: number): boolean {
    return this.get(key) !== -1
  }

  /** Sets `key` (positive safe integer) to `value` (int32 ≥ 0). */
  set(key: number, value: number): void {
    if ((this.count + 1) * 2 > this.mask + 1) this.resize((this.mask + 1) * 2)
    const cells = this.cells
    const mask = this.mask
    for (let i = hash(key) & mask; ; i = (i + 1) & mask) {
      const k = cells[2 * i]!
      if (k === EMPTY) {
        cells[2 * i] = key
        cells[2 * i + 1] = value
        this.count++
        return
      }
      if (k === key) {
        cells[2 * i + 1] = value
        return
      }
    }
  }

  delete(key: number): boolean {
    const cells = this.cells
    const mask = this.mask
    let i = hash(key) & mask
    for (;; i = (i + 1) & mask) {
      const k = cells[2 * i]!
      if (k === EMPTY) return false
      if (k === key) break
    }
    // Backward-shift: move later members of the cluster into the hole when their home allows it.
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const k = cells[2 * j]!
      if (k === EMPTY) break
      const home = hash(k) & mask
      const between = i <= j ? i < home && home <= j : i < home || home <= j
      if (between) continue
      cells[2 * i] = k
      cells[2 * i + 1] = cells[2 * j + 1]!
      i = j
    }
    cells[2 * i] = EMPTY
    this.count--
    return true
  }

  /** Calls f for every entry, in no particular order. */
  forEach(f: (value: number, key: number) => void): void {
    const cells = this.cells
    for (let i = 0; i < cells.length; i += 2) if (cells[i] !== EMPTY) f(cells[i + 1]!, cells[i]!)
  }

  private resize(capacity: number): void {
    const old = this.cells
    this.cells = new Float64Array(capacity * 2)
    this.mask = capacity - 1
    this.count = 0
    for (let i = 0; i < old.length; i += 2) if (old[i] !== EMPTY) this.set(old[i]!, old[i + 1]!)
  }
}

const TWO_32 = 4294967296

/** murmur3 fmix32 of the low 32 bits, with the high bits folded in for keys of 2^32 and above. */
const hash = (key: number): number => {
  let h = key >>> 0
  if (key >= TWO_32) h ^= Math.imul(Math.floor(key / TWO_32) >>> 0, 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}
