// The Market entity's pure core: reservations against an authorization's cap and funded balance,
// fills at the maker's price into trades and two legs, self-trade prevention, grant expiry, and
// the rebuild from open orders. No I/O.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { checkNewMarket, type Market } from "../../../src/exchange/markets/marketSpec.ts"
import { globalId } from "../../../src/exchange/markets/ids.ts"
import { EXPIRY_MARGIN_MS, type GrantView, isRetryOf, MarketState, newChanges, type OrderRec } from "../../../src/exchange/market/MarketState.ts"

const market: Market = {
  ...Either.getOrThrow(checkNewMarket({ base: "TST", quote: "DUSD", tickSize: "0.01", stepSize: "0.001", minNotional: "1" }, 7)),
  baseProperty: 4,
  quoteProperty: 3
}
const SAT = 100_000_000n
const now = 1_700_000_000_000

const grant = (userId: number, asset: string, capWhole: bigint, fundedWhole: bigint, expiresAtMs = now + 3_600_000): GrantView => ({
  grantId: `g-${userId}-${asset}`,
  userId,
  asset,
  expiresAtMs,
  delegatedAddress: `D-${userId}-${asset}`,
  capFree: capWhole * SAT,
  fundedFree: fundedWhole * SAT
})

const fresh = () => {
  const s = MarketState.create(market, [], { lastOrder: 0, lastTrade: 0, lastSeq: 0 })
  if (typeof s === "string") throw new Error(s)
  return s
}

describe("MarketState", () => {
  it("reserves the spent asset and refuses beyond the cap or the funded balance, changing nothing", () => {
    const s = fresh()
    const c = newChanges()
    const g = grant(1, "DUSD", 10n, 5n)
    const tooMuchCap = s.place({ userId: 1, clientOrderId: "a", side: "BUY", price: "2", quantity: "6" }, g, "P1", now, c)
    expect(tooMuchCap).toMatchObject({ _tag: "Refused", refusal: { code: -2010 } })
    expect(tooMuchCap._tag === "Refused" && tooMuchCap.refusal.msg).toMatch(/remaining cap of the DUSD authorization: needs 12.00000000, remaining 10.00000000/)
    const tooMuchFunds = s.place({ userId: 1, clientOrderId: "b", side: "BUY", price: "2", quantity: "3" }, g, "P1", now, c)
    expect(tooMuchFunds._tag === "Refused" && tooMuchFunds.refusal.msg).toMatch(/funded balance of the DUSD delegated address D-1-DUSD: needs 6.00000000, free 5.00000000/)
    expect(c.inserted.size).toBe(0)
    expect(s.book.size).toBe(0)
    const ok = s.place({ userId: 1, clientOrderId: "c", side: "BUY", price: "2", quantity: "2" }, g, "P1", now, c)
    expect(ok._tag).toBe("Accepted")
    expect(g.capFree).toBe(6n * SAT)
    expect(g.fundedFree).toBe(1n * SAT)
    expect(ok._tag === "Accepted" && ok.order.reserved).toBe(4n * SAT)
  })

  it("fills at the maker's price, releases the taker's better-priced reservation, and records both legs", () => {
    const s = fresh()
    const c = newChanges()
    const ask = s.place({ userId: 1, clientOrderId: "ask", side: "SELL", price: "2.50", quantity: "4" }, grant(1, "TST", 100n, 100n), "P1", now, c)
    const bid = s.place({ userId: 2, clientOrderId: "bid", side: "BUY", price: "2.60", quantity: "1.5" }, grant(2, "DUSD", 100n, 100n), "P2", now, c)
    if (ask._tag !== "Accepted" || bid._tag !== "Accepted") throw new Error("refused")
    expect(bid.order).toMatchObject({ status: "FILLED", executedLots: 1500, reserved: 0n, quoteExecuted: 375_000_000n })
    expect(ask.order).toMatchObject({ status: "PARTIALLY_FILLED", executedLots: 1500, reserved: 250_000_000n })
    expect(bid.trades).toEqual([expect.objectContaining({ priceTicks: 250, qtyLots: 1500, quoteSats: 375_000_000n, buyerUser: 2, sellerUser: 1, buyerIsMaker: false })])
    expect(c.legs).toEqual([
      { tradeId: globalId(7, 1), leg: "base", asset: "TST", propertyId: 4, amount: 150_000_000n, grantId: "g-1-TST", userId: 1, from: "D-1-TST", to: "P2" },
      { tradeId: globalId(7, 1), leg: "quote", asset: "DUSD", propertyId: 3, amount: 375_000_000n, grantId: "g-2-DUSD", userId: 2, from: "D-2-DUSD", to: "P1" }
    ])
    // The maker was accepted in this batch, so it is one insert in its final state, not an update.
    expect(c.inserted.size).toBe(2)
    expect(c.updated.size).toBe(0)
  })

  it("expires its own resting order instead of trading with itself (EXPIRE_MAKER)", () => {
    const s = fresh()
    const c = newChanges()
    s.place({ userId: 1, clientOrderId: "ask", side: "SELL", price: "2", quantity: "1" }, grant(1, "TST", 10n, 10n), "P1", now, c)
    const bid = s.place({ userId: 1, clientOrderId: "bid", side: "BUY", price: "2", quantity: "1" }, grant(1, "DUSD", 10n, 10n), "P1", now, c)
    if (bid._tag !== "Accepted") throw new Error("refused")
    expect(bid.trades).toEqual([])
    expect(c.legs).toEqual([])
    expect([...c.inserted.values()].map((o) => [o.clientOrderId, o.status, o.reserved])).toEqual([["ask", "EXPIRED", 0n], ["bid", "NEW", 200_000_000n]])
  })

  it("refuses an order whose grant is about to expire and ends the open orders of a due grant", () => {
    const s = fresh()
    const c = newChanges()
    const late = s.place({ userId: 1, clientOrderId: "x", side: "SELL", price: "2", quantity: "1" }, grant(1, "TST", 10n, 10n, now + EXPIRY_MARGIN_MS), "P1", now, c)
    expect(late._tag === "Refused" && late.refusal.msg).toMatch(/No live authorization for TST/)
    const g = grant(1, "TST", 10n, 10n, now + 5_000)
    s.place({ userId: 1, clientOrderId: "y", side: "SELL", price: "2", quantity: "1" }, g, "P1", now, c)
    expect(s.grantsDue(now)).toEqual([])
    expect(s.grantsDue(now + 4_000)).toEqual([g.grantId])
    expect(s.expireGrant(g.grantId, now + 4_000, c)).toBe(1)
    expect(s.book.size).toBe(0)
    expect(c.inserted.get(globalId(7, 1))).toMatchObject({ status: "EXPIRED", reserved: 0n })
  })

  it("refuses cancels of filled, unknown or another user's orders without a sequence number, a change or a published level", () => {
    const s = fresh()
    const setup = newChanges()
    s.place({ userId: 1, clientOrderId: "ask", side: "SELL", price: "2", quantity: "1" }, grant(1, "TST", 10n, 10n), "P1", now, setup)
    s.place({ userId: 2, clientOrderId: "bid", side: "BUY", price: "2", quantity: "1" }, grant(2, "DUSD", 10n, 10n), "P2", now, setup) // fills "ask"
    s.place({ userId: 3, clientOrderId: "rest", side: "BUY", price: "1", quantity: "1" }, grant(3, "DUSD", 10n, 10n), "P3", now, setup)
    const filled = globalId(7, 1)
    const resting = globalId(7, 3)
    const seq = s.book.seq
    const depth = s.book.depth(1000)
    const c = newChanges()
    const refusals = [
      s.cancel({ userId: 1, orderId: filled }, now, c),
      s.cancel({ userId: 1, clientOrderId: "ask" }, now, c),
      s.cancel({ userId: 2, orderId: globalId(7, 99) }, now, c),
      s.cancel({ userId: 1, orderId: resting }, now, c), // user 3's
      s.cancel({ userId: 3, orderId: resting, onlyIf: "PARTIALLY_FILLED" }, now, c),
      ...Array.from({ length: 100 }, () => s.cancel({ userId: 1, orderId: filled }, now, c))
    ]
    expect(refusals.every((r) => r._tag === "Refused" && r.refusal.code === -2011)).toBe(true)
    expect(s.book.seq).toBe(seq) // the book's (and so the orders') sequence did not move
    expect(s.book.depth(1000)).toEqual(depth) // nothing for the market-data feed to publish
    expect(c).toEqual(newChanges()) // nothing to store
    // A real cancel takes the next numbers.
    const ok = s.cancel({ userId: 3, orderId: resting }, now, c)
    expect(ok).toMatchObject({ _tag: "Canceled", order: { status: "CANCELED", reserved: 0n } })
    expect(s.book.seq).toBe(seq + 2)
  })

  it("rebuilds from its open orders with their priority, and keeps numbering after the last order and trade", () => {
    const open: Array<OrderRec> = [2, 1].map((n) => ({
      orderId: globalId(7, n), userId: n, clientOrderId: `o${n}`, side: "SELL", priceTicks: 300, qtyLots: 1000, executedLots: 0,
      quoteExecuted: 0n, status: "NEW", seq: n * 10, grantId: `g-${n}-TST`, fromAddress: `D-${n}-TST`, payTo: `P${n}`, reserved: SAT,
      createdMs: now, updatedMs: now, expiresAtMs: now + 3_600_000
    }))
    const s = MarketState.create(market, open, { lastOrder: 5, lastTrade: 9, lastSeq: 40 })
    if (typeof s === "string") throw new Error(s)
    const c = newChanges()
    const bid = s.place({ userId: 3, clientOrderId: "b", side: "BUY", price: "3", quantity: "1" }, grant(3, "DUSD", 10n, 10n), "P3", now, c)
    if (bid._tag !== "Accepted") throw new Error("refused")
    expect(bid.order.orderId).toBe(globalId(7, 6))
    // Order 1 has the earlier seq (10 < 20): it fills first.
    expect(bid.trades[0]).toMatchObject({ tradeId: globalId(7, 10), makerOrderId: globalId(7, 1) })
  })

  it("refuses a market spec whose tick × lot is finer than one satoshi", () => {
    const r = checkNewMarket({ base: "AAA", quote: "BBB", tickSize: "0.00001", stepSize: "0.0001", minNotional: "1" }, 1)
    expect(Either.isLeft(r) && r.left.message).toMatch(/finer than one satoshi/)
  })
})

describe("a reused newClientOrderId (issue 27.9)", () => {
  it("is a retry only with the same side, price and quantity (in the market's units); anything else is a duplicate", () => {
    const s = fresh()
    const placed = s.place({ userId: 1, clientOrderId: "x-1", side: "BUY", price: "2", quantity: "1" }, grant(1, "DUSD", 10n, 10n), "P1", now, newChanges())
    if (placed._tag !== "Accepted") throw new Error("not placed")
    const again = (side: "BUY" | "SELL", price: string, quantity: string) => isRetryOf(market, { userId: 1, clientOrderId: "x-1", side, price, quantity }, placed.order)
    expect(again("BUY", "2", "1")).toBe(true)
    expect(again("BUY", "2.00", "1.000")).toBe(true)
    expect(again("BUY", "3", "1")).toBe(false)
    expect(again("BUY", "2", "2")).toBe(false)
    expect(again("SELL", "2", "1")).toBe(false)
    expect(again("BUY", "junk", "1")).toBe(false)
  })
})
