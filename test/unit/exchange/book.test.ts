import { describe, expect, it } from "vitest"
import {
  type BookConfig,
  DEPTH_LIMIT_MAX,
  InvariantViolation,
  type NewOrder,
  OrderBook,
  type StpMode
} from "../../../src/exchange/book.ts"
import { type BookEvent, recordingSink } from "../../../src/exchange/events.ts"
import type { Ladder } from "../../../src/exchange/ladder.ts"

const config: BookConfig = { stp: "EXPIRE_MAKER", ordersMax: 1000, qtyMax: 1_000_000 }

const setup = (cfg: Partial<BookConfig> = {}) => {
  const events: Array<BookEvent> = []
  const book = new OrderBook({ ...config, ...cfg }, recordingSink(events))
  /** Events emitted by `f`, without their sequence numbers. */
  const during = (f: () => void) => {
    const from = events.length
    f()
    return events.slice(from).map((e) => {
      if (e.type === "rejected") return e // a refusal has no sequence number
      const { seq: _seq, ...rest } = e
      return rest
    })
  }
  return { book, events, during }
}

let nextId = 1
const order = (owner: string, side: "BUY" | "SELL", price: number, qty: number, id = nextId++): NewOrder => ({
  id,
  owner,
  side,
  price,
  qty
})

describe("matching", () => {
  it("fills a taker across levels at each maker's price, oldest first within a level", () => {
    const { book, during } = setup()
    book.place(order("m1", "SELL", 101, 5, 1))
    book.place(order("m2", "SELL", 100, 3, 2))
    book.place(order("m3", "SELL", 100, 4, 3))
    const events = during(() => expect(book.place(order("t", "BUY", 101, 10, 4))).toBe("FILLED"))
    expect(events).toEqual([
      { type: "accepted", id: 4, owner: "t", side: "BUY", price: 101, qty: 10 },
      { type: "trade", tradeId: 1, makerId: 2, takerId: 4, makerOwner: "m2", takerOwner: "t", price: 100, qty: 3, makerSide: "SELL" },
      { type: "status", id: 2, status: "FILLED", executedQty: 3, openQty: 0 },
      { type: "trade", tradeId: 2, makerId: 3, takerId: 4, makerOwner: "m3", takerOwner: "t", price: 100, qty: 4, makerSide: "SELL" },
      { type: "status", id: 3, status: "FILLED", executedQty: 4, openQty: 0 },
      { type: "level", side: "SELL", price: 100, qty: 0 },
      { type: "trade", tradeId: 3, makerId: 1, takerId: 4, makerOwner: "m1", takerOwner: "t", price: 101, qty: 3, makerSide: "SELL" },
      { type: "status", id: 1, status: "PARTIALLY_FILLED", executedQty: 3, openQty: 2 },
      { type: "level", side: "SELL", price: 101, qty: 2 },
      { type: "status", id: 4, status: "FILLED", executedQty: 10, openQty: 0 }
    ])
    expect(book.get(1)).toMatchObject({ status: "PARTIALLY_FILLED", executedQty: 3, openQty: 2, price: 101 })
    expect(book.get(2)).toBeUndefined()
    expect(book.bestAsk()).toEqual({ price: 101, qty: 2 })
    book.checkInvariants()
  })

  it("rests the remainder of a taker as PARTIALLY_FILLED at its own price", () => {
    const { book, during } = setup()
    book.place(order("m", "BUY", 99, 2, 10))
    const events = during(() => expect(book.place(order("t", "SELL", 98, 5, 11))).toBe("PARTIALLY_FILLED"))
    expect(events.slice(-2)).toEqual([
      { type: "status", id: 11, status: "PARTIALLY_FILLED", executedQty: 2, openQty: 3 },
      { type: "level", side: "SELL", price: 98, qty: 3 }
    ])
    expect(book.bestBid()).toBeUndefined()
    expect(book.bestAsk()).toEqual({ price: 98, qty: 3 })
    expect(book.get(11)).toMatchObject({ side: "SELL", qty: 5, executedQty: 2, openQty: 3, status: "PARTIALLY_FILLED" })
  })

  it("does not trade when prices do not cross, and a new order joins the back of its level", () => {
    const { book, during } = setup()
    book.place(order("a", "BUY", 100, 1, 20))
    book.place(order("b", "SELL", 101, 1, 21))
    const events = during(() => expect(book.place(order("c", "BUY", 100, 2, 22))).toBe("NEW"))
    expect(events.map((e) => e.type)).toEqual(["accepted", "status", "level"])
    expect(events[2]).toEqual({ type: "level", side: "BUY", price: 100, qty: 3 })
    book.place(order("d", "SELL", 100, 2, 23))
    expect(book.get(20)).toBeUndefined() // older order at 100 filled first
    expect(book.get(22)).toMatchObject({ openQty: 1 })
  })

  it("numbers events 1, 2, 3… and gives an order the sequence number of its acceptance", () => {
    const { book, events } = setup()
    book.place(order("a", "BUY", 100, 1, 30))
    book.place(order("b", "SELL", 100, 1, 31))
    expect(events.map((e) => "seq" in e && e.seq)).toEqual(events.map((_, i) => i + 1))
    expect(book.seq).toBe(events.length)
    book.place(order("a", "BUY", 90, 1, 32))
    const accepted = events.find((e) => e.type === "accepted" && e.id === 32)
    expect(book.get(32)?.seq).toBe(accepted?.type === "accepted" && accepted.seq)
  })
})

describe("cancel", () => {
  it("emits CANCELED with the executed quantity and the level's new total; an unknown id is a rejection", () => {
    const { book, during } = setup()
    book.place(order("a", "BUY", 100, 5, 40))
    book.place(order("b", "BUY", 100, 7, 41))
    book.place(order("c", "SELL", 100, 2, 42))
    expect(during(() => expect(book.cancel(40)).toBe(true))).toEqual([
      { type: "status", id: 40, status: "CANCELED", executedQty: 2, openQty: 0 },
      { type: "level", side: "BUY", price: 100, qty: 7 }
    ])
    expect(during(() => expect(book.cancel(40, 3)).toBe(false))).toEqual([{ type: "rejected", ref: 3, reason: "UNKNOWN_ORDER" }])
    expect(during(() => expect(book.cancel(999)).toBe(false))).toEqual([{ type: "rejected", ref: null, reason: "UNKNOWN_ORDER" }])
    expect(during(() => expect(book.cancel(999, 0)).toBe(false))).toEqual([{ type: "rejected", ref: 0, reason: "UNKNOWN_ORDER" }])
    expect(book.cancel(41)).toBe(true)
    expect(book.depth(10)).toMatchObject({ bids: [], asks: [] })
    expect(book.size).toBe(0)
    book.checkInvariants()
  })

  it("keeps levels emptied below the top reusable and compacts them once they pile up", () => {
    const { book } = setup()
    for (let p = 1; p <= 300; p++) book.place(order("a", "BUY", p, 1, 1000 + p))
    for (let p = 1; p < 250; p++) expect(book.cancel(1000 + p)).toBe(true) // all below the best (300)
    book.checkInvariants()
    expect(book.depth(1000).bids.map((l) => l.price)).toEqual(Array.from({ length: 51 }, (_, i) => 300 - i))
    book.place(order("b", "BUY", 7, 4, 2000))
    book.place(order("b", "BUY", 260, 4, 2001))
    book.checkInvariants()
    expect(book.depth(1000).bids.at(-1)).toEqual({ price: 7, qty: 4 })
    expect(book.depth(1000).bids.find((l) => l.price === 260)).toEqual({ price: 260, qty: 5 })
    for (let p = 300; p >= 250; p--) book.cancel(1000 + p)
    book.checkInvariants()
    expect(book.bestBid()).toEqual({ price: 260, qty: 4 })
    book.cancel(2001)
    book.checkInvariants()
    expect(book.bestBid()).toEqual({ price: 7, qty: 4 })
  })
})

describe("self-trade prevention", () => {
  const scenario = (stp: StpMode) => {
    const { book, during } = setup({ stp })
    book.place(order("w", "SELL", 100, 2, 50)) // own, first in line
    book.place(order("x", "SELL", 100, 3, 51))
    const events = during(() => book.place(order("w", "BUY", 100, 4, 52)))
    return { book, statuses: events.filter((e) => e.type === "status"), trades: events.filter((e) => e.type === "trade") }
  }

  it("EXPIRE_MAKER expires the own resting order and keeps matching others", () => {
    const { book, statuses, trades } = scenario("EXPIRE_MAKER")
    expect(statuses).toEqual([
      { type: "status", id: 50, status: "EXPIRED", executedQty: 0, openQty: 0 },
      { type: "status", id: 51, status: "FILLED", executedQty: 3, openQty: 0 },
      { type: "status", id: 52, status: "PARTIALLY_FILLED", executedQty: 3, openQty: 1 }
    ])
    expect(trades.map((t) => t.type === "trade" && t.makerId)).toEqual([51])
    expect(book.bestBid()).toEqual({ price: 100, qty: 1 })
    expect(book.bestAsk()).toBeUndefined()
  })

  it("EXPIRE_TAKER expires the incoming order and leaves the book as it was", () => {
    const { book, statuses, trades } = scenario("EXPIRE_TAKER")
    expect(statuses).toEqual([{ type: "status", id: 52, status: "EXPIRED", executedQty: 0, openQty: 0 }])
    expect(trades).toEqual([])
    expect(book.depth(5).asks).toEqual([{ price: 100, qty: 5 }])
    expect(book.get(52)).toBeUndefined()
  })

  it("EXPIRE_BOTH expires both", () => {
    const { book, statuses } = scenario("EXPIRE_BOTH")
    expect(statuses.map((s) => s.type === "status" && [s.id, s.status])).toEqual([[50, "EXPIRED"], [52, "EXPIRED"]])
    expect(book.depth(5).asks).toEqual([{ price: 100, qty: 3 }])
  })

  it("EXPIRE_TAKER meeting only its own order emits no level event: nothing changed", () => {
    const { book, during } = setup({ stp: "EXPIRE_TAKER" })
    book.place(order("w", "SELL", 100, 2, 55))
    book.place(order("x", "SELL", 101, 2, 56))
    const before = book.depth(10)
    const events = during(() => expect(book.place(order("w", "BUY", 101, 4, 57))).toBe("EXPIRED"))
    expect(events).toEqual([
      { type: "accepted", id: 57, owner: "w", side: "BUY", price: 101, qty: 4 },
      { type: "status", id: 57, status: "EXPIRED", executedQty: 0, openQty: 0 }
    ])
    expect(book.depth(10)).toEqual({ ...before, seq: book.seq })
  })

  it("EXPIRE_TAKER keeps the fills made before reaching the own order", () => {
    const { book, during } = setup({ stp: "EXPIRE_TAKER" })
    book.place(order("x", "SELL", 100, 3, 60))
    book.place(order("w", "SELL", 101, 3, 61))
    const events = during(() => expect(book.place(order("w", "BUY", 101, 5, 62))).toBe("EXPIRED"))
    expect(events.at(-1)).toEqual({ type: "status", id: 62, status: "EXPIRED", executedQty: 3, openQty: 0 })
    expect(book.openOrdersOf("w").map((o) => o.id)).toEqual([61])
  })
})

describe("rejections and limits", () => {
  it("rejects bad fields with a reason, the request's ref and no other event", () => {
    const { book, during } = setup({ qtyMax: 10 })
    book.place(order("a", "BUY", 100, 1, 70))
    const cases: Array<[NewOrder, string]> = [
      [order("a", "BUY", 100, 1, 0), "INVALID_ID"],
      [order("a", "BUY", 100, 1, 2 ** 53), "INVALID_ID"],
      [order("a", "BUY", 100, 1, 70), "DUPLICATE_ID"],
      [order("", "BUY", 100, 1), "INVALID_OWNER"],
      [{ ...order("a", "BUY", 100, 1), side: "HOLD" as "BUY" }, "INVALID_SIDE"],
      [order("a", "BUY", 0, 1), "INVALID_PRICE"],
      [order("a", "BUY", 100.5, 1), "INVALID_PRICE"],
      [order("a", "BUY", 100, 0), "INVALID_QUANTITY"],
      [order("a", "BUY", 100, 11), "INVALID_QUANTITY"]
    ]
    cases.forEach(([o, reason], i) => {
      expect(during(() => expect(book.place({ ...o, ref: 500 + i })).toBe("REJECTED"))).toEqual([
        { type: "rejected", ref: 500 + i, reason }
      ])
    })
    expect(book.place(order("a", "BUY", 100, 10))).toBe("NEW") // qtyMax itself is allowed
    expect(book.size).toBe(2)
  })

  it("never gives a rejection a live order's identity: a duplicate id leaves the live order's story alone", () => {
    const { book, during } = setup()
    expect(book.place({ ...order("a", "BUY", 100, 3, 1), ref: 11 })).toBe("NEW")
    const events = during(() => expect(book.place({ ...order("b", "BUY", 99, 2, 1), ref: 12 })).toBe("REJECTED"))
    expect(events).toEqual([{ type: "rejected", ref: 12, reason: "DUPLICATE_ID" }])
    expect(events.some((e) => "id" in e)).toBe(false)
    expect(book.get(1)).toMatchObject({ status: "NEW", owner: "a", openQty: 3 })
    // Without a ref the rejection still comes out during the call, with ref null ("no ref"), and ref 0 is a ref.
    expect(during(() => book.place(order("c", "SELL", 200, 1, 1)))).toEqual([{ type: "rejected", ref: null, reason: "DUPLICATE_ID" }])
    expect(during(() => book.place({ ...order("c", "SELL", 200, 1, 1), ref: 0 }))).toEqual([{ type: "rejected", ref: 0, reason: "DUPLICATE_ID" }])
  })

  it("refuses ids that are not positive safe integers before any event carries them", () => {
    const { book, events, during } = setup()
    book.place(order("a", "BUY", 100, 1, 7))
    const bad: Array<unknown> = [Number.NaN, "7", "x", 2 ** 53, 1.5, -3, 0, Infinity, undefined, null, 7n, {}]
    bad.forEach((id, i) => {
      const o = { ...order("a", "SELL", 200, 1), id, ref: i + 1 } as unknown as NewOrder
      expect(during(() => expect(book.place(o)).toBe("REJECTED"))).toEqual([{ type: "rejected", ref: i + 1, reason: "INVALID_ID" }])
      expect(during(() => expect(book.cancel(id as number, 100 + i)).toBe(false))).toEqual([
        { type: "rejected", ref: 100 + i, reason: "INVALID_ID" }
      ])
    })
    for (const ref of [Number.NaN, -1, 1.5, "3", 2 ** 53]) {
      const o = { ...order("a", "SELL", 200, 1), ref } as unknown as NewOrder
      expect(during(() => expect(book.place(o)).toBe("REJECTED"))).toEqual([{ type: "rejected", ref: null, reason: "INVALID_REF" }])
      expect(during(() => expect(book.cancel(7, ref as number)).toBe(false))).toEqual([{ type: "rejected", ref: null, reason: "INVALID_REF" }])
    }
    for (const e of events) if ("id" in e) expect(Number.isSafeInteger(e.id) && e.id > 0).toBe(true)
    expect(book.snapshot().orders.map((o) => o.id)).toEqual([7])
    book.checkInvariants()
  })

  it("holds at most ordersMax open orders", () => {
    const { book } = setup({ ordersMax: 2 })
    expect(book.place(order("a", "BUY", 100, 1))).toBe("NEW")
    expect(book.place(order("a", "BUY", 99, 1))).toBe("NEW")
    expect(book.place(order("b", "SELL", 100, 1))).toBe("REJECTED")
    book.cancel(book.openOrdersOf("a")[0]!.id)
    expect(book.place(order("b", "SELL", 100, 1))).toBe("NEW")
  })

  it("refuses an order that would take its level's total past 2^53 - 1", () => {
    const max = Number.MAX_SAFE_INTEGER
    const { book, events } = setup({ qtyMax: max })
    expect(book.place(order("a", "BUY", 100, max - 10))).toBe("NEW")
    expect(book.place(order("a", "BUY", 100, 11))).toBe("REJECTED")
    expect(events.at(-1)).toMatchObject({ type: "rejected", reason: "LEVEL_FULL" })
    expect(book.place(order("a", "BUY", 100, 10))).toBe("NEW")
    expect(book.bestBid()).toEqual({ price: 100, qty: max })
    expect(book.place(order("a", "BUY", 101, 11))).toBe("NEW") // another level is fine
  })

  it("gives a refusal no sequence number: refused cancels leave the book's sequence where it was", () => {
    const { book, events } = setup()
    book.place(order("a", "BUY", 100, 2, 1))
    book.place(order("b", "SELL", 100, 2, 2)) // fills order 1
    const seq = book.seq
    const snapshot = book.snapshot()
    const from = events.length
    for (let i = 0; i < 50; i++) expect(book.cancel(1)).toBe(false) // already filled
    expect(book.cancel(2, 7)).toBe(false)
    expect(book.place(order("c", "BUY", 100, 0, 3))).toBe("REJECTED")
    expect(book.seq).toBe(seq)
    expect(book.depth(10).seq).toBe(seq)
    expect(book.snapshot()).toEqual(snapshot)
    expect(events.slice(from).every((e) => e.type === "rejected" && !("seq" in e))).toBe(true)
    // The next real event takes the next number.
    book.place(order("c", "BUY", 99, 1, 3))
    expect(events.at(-1)).toMatchObject({ type: "level", seq: seq + 3 })
  })

  it("refuses a config it cannot keep exact", () => {
    expect(() => new OrderBook({ ...config, qtyMax: 2 ** 53 }, recordingSink([]))).toThrow(InvariantViolation)
    expect(() => new OrderBook({ ...config, ordersMax: 0 }, recordingSink([]))).toThrow(InvariantViolation)
  })
})

describe("memory", () => {
  it("returns storage to its floor once the book empties, and keeps it proportional to the open orders on the way", () => {
    const { book } = setup({ ordersMax: 200_000 })
    const floor = book.storageBytes()
    const n = 40_000
    for (let id = 1; id <= n; id++) {
      const buy = id % 2 === 0
      book.place(order(`w${id % 300}`, buy ? "BUY" : "SELL", buy ? 10_000 - (id % 3000) : 20_000 + (id % 3000), 1 + (id % 7), id))
    }
    const full = book.storageBytes()
    expect(full).toBeGreaterThan(40 * floor)
    for (let id = 1; id <= n; id++) {
      book.cancel(id)
      if (id % 2000 === 0) {
        // At most 4× the records and 16× the index cells an order needs, plus the floor.
        expect(book.storageBytes()).toBeLessThanOrEqual(floor + book.size * (4 * 64 + 16 * 16))
        if (id % 10_000 === 0) book.checkInvariants()
      }
    }
    expect(book.size).toBe(0)
    expect(book.storageBytes()).toBe(floor)
    // And it still works.
    expect(book.place(order("a", "BUY", 100, 1, 1))).toBe("NEW")
    expect(book.place(order("b", "SELL", 100, 1, 2))).toBe("FILLED")
    book.checkInvariants()
  })
})

describe("owner table", () => {
  it("an emptied book holds exactly a new book's storage after orders from three wallets, all cancelled", () => {
    const { book } = setup()
    const floor = book.storageBytes()
    expect(floor).toBe(135_680) // docs/matching.md, "Memory"
    book.place(order("w1", "BUY", 100, 1, 1))
    book.place(order("w2", "BUY", 99, 1, 2))
    book.place(order("w3", "SELL", 101, 1, 3))
    for (const id of [1, 2, 3]) expect(book.cancel(id)).toBe(true)
    expect(book.size).toBe(0)
    expect(book.storageBytes()).toBe(floor)
    // And the owners come back as new ones: their orders and lists are right.
    expect(book.place(order("w2", "BUY", 100, 2, 4))).toBe("NEW")
    expect(book.place(order("w4", "SELL", 100, 1, 5))).toBe("FILLED")
    expect(book.openOrdersOf("w2").map((o) => o.openQty)).toEqual([1])
    expect(book.openOrdersOf("w1")).toEqual([])
    book.checkInvariants()
  })

  it("an emptied book holds a new book's storage whatever the number of wallets (up to 64 and beyond)", () => {
    for (const wallets of [1, 2, 63, 64, 65, 200]) {
      const { book } = setup()
      const floor = book.storageBytes()
      for (let w = 1; w <= wallets; w++) book.place(order(`w${w}`, w % 2 === 0 ? "BUY" : "SELL", w % 2 === 0 ? 100 : 200, 1, w))
      for (let w = 1; w <= wallets; w++) book.cancel(w)
      expect([wallets, book.storageBytes()]).toEqual([wallets, floor])
      book.checkInvariants()
    }
  })

  it("stays bounded when owners come and go, each with its one order", () => {
    const { book } = setup({ ordersMax: 100 })
    const floor = book.storageBytes()
    for (let id = 1; id <= 20_000; id++) {
      book.place(order(`w${id}`, "BUY", 100 + (id % 5), 1, id))
      if (id > 5) book.cancel(id - 5)
      if (id % 4000 === 0) book.checkInvariants()
    }
    // Entries of owners with no open order are dropped once they outnumber the record capacity (1024).
    expect(book.storageBytes()).toBeLessThanOrEqual(floor + 32 * 1024)
    expect(book.openOrdersOf("w7")).toEqual([])
    expect(book.openOrdersOf("w20000").map((o) => o.id)).toEqual([20_000])
    expect(book.place(order("w7", "SELL", 200, 1, 30_000))).toBe("NEW")
    expect(book.openOrdersOf("w7").map((o) => o.id)).toEqual([30_000])
    book.checkInvariants()
  })
})

describe("reads", () => {
  it("aggregates depth: bids descending, asks ascending, limit clamped to 1..1000", () => {
    const { book } = setup({ ordersMax: 5000 })
    for (let i = 0; i < 1001; i++) {
      book.place(order("a", "BUY", 2000 - i, 1))
      book.place(order("b", "SELL", 3000 + i, 2))
    }
    book.place(order("c", "BUY", 2000, 5))
    const d = book.depth(3)
    expect(d.bids).toEqual([{ price: 2000, qty: 6 }, { price: 1999, qty: 1 }, { price: 1998, qty: 1 }])
    expect(d.asks).toEqual([{ price: 3000, qty: 2 }, { price: 3001, qty: 2 }, { price: 3002, qty: 2 }])
    expect(d.seq).toBe(book.seq)
    expect(book.depth(DEPTH_LIMIT_MAX).bids).toHaveLength(1000)
    expect(book.depth(DEPTH_LIMIT_MAX + 1).asks).toHaveLength(1000)
    expect(book.depth(0).bids).toHaveLength(1)
    expect(book.depth(Number.NaN).asks).toHaveLength(1)
  })

  it("lists an owner's open orders in time priority, and none once they close", () => {
    const { book } = setup()
    book.place(order("w", "BUY", 90, 1, 80))
    book.place(order("z", "BUY", 95, 1, 81))
    book.place(order("w", "SELL", 120, 3, 82))
    book.place(order("w", "BUY", 91, 1, 83))
    expect(book.openOrdersOf("w").map((o) => o.id)).toEqual([80, 82, 83])
    book.place(order("y", "BUY", 120, 3, 84))
    expect(book.openOrdersOf("w").map((o) => o.id)).toEqual([80, 83])
    book.cancel(80)
    book.cancel(83)
    expect(book.openOrdersOf("w")).toEqual([])
    expect(book.openOrdersOf("nobody")).toEqual([])
  })
})

describe("invariants", () => {
  it("the audit catches a corrupted level total", () => {
    const { book } = setup()
    book.place(order("a", "BUY", 100, 5))
    book.checkInvariants()
    const internals = book as unknown as { bids: Ladder }
    internals.bids.setQty(0, 4)
    expect(() => book.checkInvariants()).toThrow(InvariantViolation)
  })

  it("the hot path refuses to leave a level whose total disagrees with its orders", () => {
    const { book } = setup()
    book.place(order("a", "SELL", 100, 5))
    const internals = book as unknown as { asks: Ladder }
    internals.asks.setQty(0, 6) // one lot more than the orders hold
    expect(() => book.place(order("b", "BUY", 100, 5))).toThrow(/sum of its orders/)
  })
})
