import { describe, expect, it } from "vitest"
import { type BookConfig, OrderBook } from "../../../src/exchange/book.ts"
import { type BookEvent, recordingSink } from "../../../src/exchange/events.ts"
import type { Snapshot, SnapshotOrder } from "../../../src/exchange/snapshot.ts"

const config: BookConfig = { stp: "EXPIRE_MAKER", ordersMax: 100, qtyMax: 1000 }

const restore = (snap: Snapshot, cfg: BookConfig = config) => {
  const events: Array<BookEvent> = []
  const r = OrderBook.restore(cfg, recordingSink(events), snap)
  return { r, events }
}

const row = (o: Partial<SnapshotOrder> & Pick<SnapshotOrder, "id" | "seq">): SnapshotOrder => ({
  owner: "w",
  side: "SELL",
  price: 100,
  qty: 5,
  openQty: 5,
  ...o
})

describe("snapshot and restore", () => {
  it("rebuilds time priority from the rows' sequence numbers, whatever their order", () => {
    const snap: Snapshot = {
      seq: 50,
      tradeId: 7,
      orders: [row({ id: 3, seq: 30, owner: "c" }), row({ id: 1, seq: 10, owner: "a", openQty: 2 }), row({ id: 2, seq: 20, owner: "b" })]
    }
    const { r, events } = restore(snap)
    if (r._tag !== "Restored") throw new Error(r.reason)
    expect(events).toEqual([]) // restoring is silent
    expect(r.book.snapshot()).toEqual({ ...snap, orders: [...snap.orders].sort((a, b) => a.seq - b.seq) })
    expect(r.book.depth(5).asks).toEqual([{ price: 100, qty: 12 }])
    r.book.place({ id: 9, owner: "t", side: "BUY", price: 100, qty: 4 })
    const trades = events.filter((e) => e.type === "trade")
    expect(trades.map((t) => t.type === "trade" && [t.makerId, t.qty, t.tradeId])).toEqual([[1, 2, 8], [2, 2, 9]])
    expect(events[0]).toMatchObject({ type: "accepted", seq: 51 }) // continues after the snapshot's seq
    expect(r.book.get(1)).toBeUndefined()
    expect(r.book.get(2)).toMatchObject({ executedQty: 2, openQty: 3, status: "PARTIALLY_FILLED" })
  })

  it("round-trips a busy book exactly", () => {
    const events: Array<BookEvent> = []
    const book = new OrderBook(config, recordingSink(events))
    for (let i = 1; i <= 60; i++) {
      book.place({ id: i, owner: `w${i % 4}`, side: i % 2 ? "BUY" : "SELL", price: 100 + ((i * 7) % 11) - 5, qty: 1 + (i % 9) })
      if (i % 5 === 0) book.cancel(i - 3)
    }
    const snap = book.snapshot()
    const { r } = restore(snap)
    if (r._tag !== "Restored") throw new Error(r.reason)
    r.book.checkInvariants()
    expect(r.book.snapshot()).toEqual(snap)
    expect(r.book.depth(1000)).toEqual(book.depth(1000))
    for (const owner of ["w0", "w1", "w2", "w3"]) expect(r.book.openOrdersOf(owner)).toEqual(book.openOrdersOf(owner))
  })

  it("refuses snapshots that cannot be a book", () => {
    const base = { seq: 100, tradeId: 0 }
    const bad: Array<[string, Snapshot]> = [
      ["duplicate id", { ...base, orders: [row({ id: 1, seq: 1 }), row({ id: 1, seq: 2 })] }],
      ["duplicate seq", { ...base, orders: [row({ id: 1, seq: 1 }), row({ id: 2, seq: 1 })] }],
      ["openQty above qty", { ...base, orders: [row({ id: 1, seq: 1, openQty: 6 })] }],
      ["openQty zero", { ...base, orders: [row({ id: 1, seq: 1, openQty: 0 })] }],
      ["seq after the snapshot", { ...base, orders: [row({ id: 1, seq: 101 })] }],
      ["qty above qtyMax", { ...base, orders: [row({ id: 1, seq: 1, qty: 1001, openQty: 1 })] }],
      ["negative counter", { seq: 100, tradeId: -1, orders: [] }],
      ["crossed", { ...base, orders: [row({ id: 1, seq: 1, side: "BUY", price: 100 }), row({ id: 2, seq: 2, price: 100 })] }],
      ["too many", { ...base, orders: [row({ id: 1, seq: 1 }), row({ id: 2, seq: 2 })] }]
    ]
    for (const [what, snap] of bad) {
      const cfg = what === "too many" ? { ...config, ordersMax: 1 } : config
      expect(restore(snap, cfg).r._tag, what).toBe("Invalid")
    }
    const max = Number.MAX_SAFE_INTEGER
    const big = { ...config, qtyMax: max }
    const level = { ...base, orders: [row({ id: 1, seq: 1, qty: max, openQty: max }), row({ id: 2, seq: 2, qty: 1, openQty: 1 })] }
    expect(restore(level, big).r).toMatchObject({ _tag: "Invalid", reason: expect.stringMatching(/2\^53/) })
    expect(restore({ ...base, orders: [row({ id: 1, seq: 1 })] }).r._tag).toBe("Restored")
  })
})
