// The fast book against the simple reference on random streams of place and cancel: the same
// return values, the same events (sequence numbers included), the same depth after every
// command, the same orders and snapshot at the end. Random snapshot+restore points on the fast
// side must change nothing. A failure prints fast-check's seed and the shrunk command list.
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type BookConfig, type NewOrder, OrderBook, type StpMode } from "../../../src/exchange/book.ts"
import { type BookEvent, recordingSink, type Side } from "../../../src/exchange/events.ts"
import type { Snapshot } from "../../../src/exchange/snapshot.ts"
import { ReferenceBook } from "./reference.ts"

type Command =
  | { readonly kind: "place"; readonly order: NewOrder; readonly restoreBefore: boolean }
  | { readonly kind: "cancel"; readonly id: number; readonly ref?: number; readonly restoreBefore: boolean }

const OWNERS = ["alice", "bob", "carol"] as const
const IDS_MAX = 40

const validPlace = fc.record({
  id: fc.integer({ min: 1, max: IDS_MAX }),
  owner: fc.constantFrom(...OWNERS),
  side: fc.constantFrom("BUY" as const, "SELL" as const),
  price: fc.integer({ min: 95, max: 105 }),
  qty: fc.integer({ min: 1, max: 20 })
})

/** A request's correlation number: mostly absent or valid, sometimes not a non-negative safe integer. */
const ref = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 1000 }) },
  { weight: 1, arbitrary: fc.constantFrom(-1, 1.5, Number.NaN, 2 ** 53) }
)

/** Ids as a careless caller might send them: mostly in range, sometimes not numbers at all. */
const oddId = fc.constantFrom<unknown>(0, -1, 1.5, 3, Number.NaN, Infinity, 2 ** 53, "3", undefined) as fc.Arbitrary<number>

const withRef = <A extends object>(a: fc.Arbitrary<A>) =>
  fc.tuple(a, ref).map(([o, r]) => (r === undefined ? o : { ...o, ref: r }))

// Out-of-range fields, to check that both books reject alike.
const oddPlace = withRef(fc.record({
  id: oddId,
  owner: fc.constantFrom("", "alice"),
  side: fc.constantFrom("BUY" as const, "SELL" as const),
  price: fc.constantFrom(0, 100, 2 ** 53, 99.5),
  qty: fc.constantFrom(0, 5, 21, 1e20)
}))

const command = (restoreRate: number): fc.Arbitrary<Command> =>
  fc.tuple(
    fc.oneof(
      { weight: 12, arbitrary: withRef(validPlace).map((order) => ({ kind: "place" as const, order })) },
      { weight: 1, arbitrary: oddPlace.map((order) => ({ kind: "place" as const, order })) },
      {
        weight: 5,
        arbitrary: withRef(fc.record({ id: fc.oneof({ weight: 9, arbitrary: fc.integer({ min: 0, max: IDS_MAX + 2 }) }, { weight: 1, arbitrary: oddId }) }))
          .map((c) => ({ kind: "cancel" as const, ...c }))
      }
    ),
    fc.double({ min: 0, max: 1, noNaN: true })
  ).map(([c, r]) => ({ ...c, restoreBefore: r < restoreRate }))

const config = fc.record({
  stp: fc.constantFrom<StpMode>("EXPIRE_MAKER", "EXPIRE_TAKER", "EXPIRE_BOTH"),
  ordersMax: fc.constantFrom(6, 1000),
  qtyMax: fc.constant(20)
})

const levelQty = (snap: Snapshot, side: Side, price: number) =>
  snap.orders.reduce((sum, o) => (o.side === side && o.price === price ? sum + o.openQty : sum), 0)

const restored = (cfg: BookConfig, book: OrderBook, events: Array<BookEvent>): OrderBook => {
  const r = OrderBook.restore(cfg, recordingSink(events), book.snapshot())
  if (r._tag !== "Restored") throw new Error(`restore refused its own snapshot: ${r.reason}`)
  return r.book
}

/** Runs both books over the commands, comparing as it goes; returns the final pair. */
const runBoth = (cfg: BookConfig, commands: ReadonlyArray<Command>) => {
  const fastEvents: Array<BookEvent> = []
  let fast = new OrderBook(cfg, recordingSink(fastEvents))
  const ref = new ReferenceBook(cfg)
  for (const c of commands) {
    if (c.restoreBefore) fast = restored(cfg, fast, fastEvents)
    const before = fast.snapshot()
    const from = fastEvents.length
    if (c.kind === "place") expect(fast.place(c.order)).toBe(ref.place(c.order))
    else expect(fast.cancel(c.id, c.ref)).toBe(ref.cancel(c.id, c.ref))
    fast.checkInvariants()
    expect(fast.depth(1000)).toEqual(ref.depth(1000))
    const emitted = fastEvents.slice(from)
    if (emitted.some((e) => e.type === "rejected")) {
      // A refusal is one unnumbered event, tied to the request by its ref (null if none or
      // invalid), and the book is as it was, its sequence number included.
      const asked = c.kind === "place" ? c.order.ref : c.ref
      const echoed = asked !== undefined && Number.isSafeInteger(asked) && asked >= 0 ? asked : null
      expect(emitted).toEqual([{ type: "rejected", ref: echoed, reason: expect.any(String) }])
      expect(fast.snapshot()).toEqual(before)
    }
    for (const e of emitted) {
      // Only valid ids ever reach an event, and a level event always reports a change.
      if ("id" in e) expect(Number.isSafeInteger(e.id) && e.id > 0).toBe(true)
      if (e.type === "level") expect(e.qty).not.toBe(levelQty(before, e.side, e.price))
    }
  }
  expect(fastEvents).toEqual(ref.events)
  return { fast, ref }
}

describe("the book against the reference", () => {
  it("produces the same events, depth, orders and snapshot on random place/cancel streams", () => {
    fc.assert(
      fc.property(config, fc.array(command(0), { maxLength: 200 }), (cfg, commands) => {
        const { fast, ref } = runBoth(cfg, commands)
        for (let id = 0; id <= IDS_MAX; id++) expect(fast.get(id)).toEqual(ref.get(id))
        for (const owner of OWNERS) expect(fast.openOrdersOf(owner)).toEqual(ref.openOrdersOf(owner))
        expect(fast.snapshot()).toEqual(ref.snapshot())
        expect(fast.seq).toBe(ref.depth(1).seq)
      }),
      { numRuns: 1500 }
    )
  })

  it("is unchanged by snapshot and restore at random points", () => {
    fc.assert(
      fc.property(config, fc.array(command(0.15), { maxLength: 200 }), (cfg, commands) => {
        const { fast, ref } = runBoth(cfg, commands)
        expect(fast.snapshot()).toEqual(ref.snapshot())
        for (const owner of OWNERS) expect(fast.openOrdersOf(owner)).toEqual(ref.openOrdersOf(owner))
      }),
      { numRuns: 800 }
    )
  })

  it("agrees on long streams over many levels (slot, level and index growth; empty-level compaction)", () => {
    // Bids mostly at 1..3000 and asks at 3101..6100, about one order per level, so heavy
    // cancelling leaves more empty levels than live ones; one order in 20 crosses the spread.
    const wide = (id: fc.Arbitrary<number>) =>
      fc.record({
        id,
        owner: fc.constantFrom("a", "b", "c", "d", "e", "f"),
        side: fc.constantFrom("BUY" as const, "SELL" as const),
        price: fc.integer({ min: 1, max: 3000 }),
        qty: fc.integer({ min: 1, max: 50 }),
        crossing: fc.integer({ min: 0, max: 19 })
      }).map(({ crossing, ...o }): NewOrder => ({
        ...o,
        price: o.side === "BUY" ? (crossing === 0 ? 3100 + (o.price % 50) : o.price) : crossing === 0 ? 3000 - (o.price % 50) : 3100 + o.price
      }))
    const place = (id: fc.Arbitrary<number>) => wide(id).map((order): Command => ({ kind: "place", order, restoreBefore: false }))
    const cancel = fc.integer({ min: 1, max: 2000 }).map((id): Command => ({ kind: "cancel", id, restoreBefore: false }))
    // Build many levels, then mostly cancel: empty levels pile up below the top and get compacted.
    const stream = fc.tuple(
      fc.array(place(fc.constant(0)), { minLength: 1500, maxLength: 2000 }),
      fc.array(fc.oneof({ weight: 1, arbitrary: place(fc.integer({ min: 2501, max: 3000 })) }, { weight: 9, arbitrary: cancel }), {
        minLength: 2500,
        maxLength: 3500
      })
    ).map(([build, churn]) => [
      ...build.map((c, i): Command => (c.kind === "place" ? { ...c, order: { ...c.order, id: i + 1 } } : c)),
      ...churn
    ])
    fc.assert(
      fc.property(config, stream, (cfg, commands) => {
        const events: Array<BookEvent> = []
        const fast = new OrderBook({ ...cfg, ordersMax: 5000, qtyMax: 50 }, recordingSink(events))
        const ref = new ReferenceBook({ ...cfg, ordersMax: 5000, qtyMax: 50 })
        commands.forEach((c, i) => {
          if (c.kind === "place") fast.place(c.order), ref.place(c.order)
          else fast.cancel(c.id), ref.cancel(c.id)
          if (i % 250 === 0) fast.checkInvariants()
        })
        fast.checkInvariants()
        expect(events).toEqual(ref.events)
        expect(fast.snapshot()).toEqual(ref.snapshot())
      }),
      { numRuns: 12 }
    )
  })

  it("agrees across storage rebuilds: thousands of orders on many levels and owners, then most cancelled", () => {
    // Above SLOTS_MIN (1024) open orders, then cancelling below a quarter of the storage makes
    // the book rebuild itself, possibly more than once; nothing observable may change.
    const cfg: BookConfig = { stp: "EXPIRE_MAKER", ordersMax: 10_000, qtyMax: 50 }
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), (seed) => {
        const rnd = fc.sample(fc.integer({ min: 0, max: 999 }), { seed, numRuns: 30_000 })
        let r = 0
        const next = (n: number) => rnd[r++ % rnd.length]! % n
        const events: Array<BookEvent> = []
        const fast = new OrderBook(cfg, recordingSink(events))
        const ref = new ReferenceBook(cfg)
        const both = (c: Command) => {
          if (c.kind === "place") expect(fast.place(c.order)).toBe(ref.place(c.order))
          else expect(fast.cancel(c.id)).toBe(ref.cancel(c.id))
        }
        const owners = ["a", "b", "c", "d", "e", "f", "g"]
        const placeAt = (id: number, crossing: boolean): Command => {
          const side = next(2) === 0 ? "BUY" : "SELL"
          const price = crossing ? 1500 + next(20) - 10 : side === "BUY" ? 1000 + next(400) : 2000 + next(400)
          return { kind: "place", order: { id, owner: owners[next(owners.length)]!, side, price, qty: 1 + next(50) }, restoreBefore: false }
        }
        for (let id = 1; id <= 2200; id++) both(placeAt(id, false))
        fast.checkInvariants()
        const peakBytes = fast.storageBytes()
        for (let k = 0; k < 2150; k++) {
          both({ kind: "cancel", id: 1 + ((k * 7919 + seed) % 2200), restoreBefore: false }) // distinct ids
          if (k % 7 === 0) both(placeAt(2201 + k, next(4) === 0))
        }
        fast.checkInvariants()
        expect(fast.storageBytes()).toBeLessThan(peakBytes) // it did rebuild
        expect(events).toEqual(ref.events)
        expect(fast.snapshot()).toEqual(ref.snapshot())
        expect(fast.depth(1000)).toEqual(ref.depth(1000))
        for (const owner of owners) expect(fast.openOrdersOf(owner)).toEqual(ref.openOrdersOf(owner))
        for (let id = 1; id <= 2600; id += 7) expect(fast.get(id)).toEqual(ref.get(id))
      }),
      { numRuns: 2 }
    )
  })

  it("sequence numbers run 1, 2, 3… across all event kinds but refusals, which take none", () => {
    fc.assert(
      fc.property(config, fc.array(command(0.1), { maxLength: 80 }), (cfg, commands) => {
        const events: Array<BookEvent> = []
        let book = new OrderBook(cfg, recordingSink(events))
        for (const c of commands) {
          if (c.restoreBefore) book = restored(cfg, book, events)
          if (c.kind === "place") book.place(c.order)
          else book.cancel(c.id)
        }
        // Refusals take no number: the numbered events alone run 1, 2, 3…
        const numbered = events.flatMap((e) => (e.type === "rejected" ? [] : [e.seq]))
        expect(numbered).toEqual(numbered.map((_, i) => i + 1))
        const trades = events.filter((e) => e.type === "trade")
        expect(trades.map((t) => t.tradeId)).toEqual(trades.map((_, i) => i + 1))
      }),
      { numRuns: 150 }
    )
  })
})
