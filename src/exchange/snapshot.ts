// The book's state as data: every open order with the sequence number that gives its time
// priority, plus the counters to continue from. This is what the Market actor persists (or
// re-reads from its open-orders table) and hands to `OrderBook.restore` on activation.
import type { BookConfig } from "./bookConfig.ts"
import type { Side } from "./events.ts"

export interface SnapshotOrder {
  readonly id: number
  readonly owner: string
  readonly side: Side
  readonly price: number
  readonly qty: number
  readonly openQty: number
  /** Sequence number of the order's `accepted` event. */
  readonly seq: number
}

export interface Snapshot {
  /** Last event sequence number; the next event gets seq + 1. */
  readonly seq: number
  /** Last trade id; the next trade gets tradeId + 1. */
  readonly tradeId: number
  readonly orders: ReadonlyArray<SnapshotOrder>
}

const isCount = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n > 0
const isCounter = (n: unknown): n is number => typeof n === "number" && Number.isSafeInteger(n) && n >= 0

/** Why a snapshot cannot be restored under `config`, or undefined when it can (crossing is checked on rebuild). */
export const validateSnapshot = (snap: Snapshot, config: BookConfig): string | undefined => {
  if (!isCounter(snap.seq) || !isCounter(snap.tradeId)) return "seq and tradeId must be non-negative safe integers"
  if (snap.orders.length > config.ordersMax) return `more than ordersMax (${config.ordersMax}) orders`
  const ids = new Set<number>()
  const seqs = new Set<number>()
  const levels = new Map<string, number>()
  for (const o of snap.orders) {
    const bad = orderProblem(o, snap.seq, config.qtyMax)
    if (bad !== undefined) return `order ${String(o.id)}: ${bad}`
    if (ids.has(o.id)) return `order ${o.id}: duplicate id`
    if (seqs.has(o.seq)) return `order ${o.id}: duplicate seq ${o.seq}`
    const level = `${o.side} ${o.price}`
    const total = (levels.get(level) ?? 0) + o.openQty
    if (total > Number.MAX_SAFE_INTEGER) return `level ${level}: total above 2^53 - 1`
    ids.add(o.id)
    seqs.add(o.seq)
    levels.set(level, total)
  }
  return undefined
}

const orderProblem = (o: SnapshotOrder, lastSeq: number, qtyMax: number): string | undefined => {
  if (!isCount(o.id)) return "id must be a positive safe integer"
  if (typeof o.owner !== "string" || o.owner.length === 0) return "owner must be a non-empty string"
  if (o.side !== "BUY" && o.side !== "SELL") return "side must be BUY or SELL"
  if (!isCount(o.price)) return "price must be a positive safe integer"
  if (!isCount(o.qty) || o.qty > qtyMax) return "qty must be a positive safe integer up to qtyMax"
  if (!isCount(o.openQty) || o.openQty > o.qty) return "openQty must be positive and at most qty"
  if (!isCount(o.seq) || o.seq > lastSeq) return "seq must be positive and at most the snapshot's seq"
  return undefined
}
