// The desk order's state machine alone: every kind's happy path, the refund rule (over, under,
// late), expiry, a deposit reorged away, a refused leg, and the fee arithmetic, exact in bigint.
import { describe, expect, it } from "vitest"
import {
  type DeskOrder,
  type DeskOrderEvent,
  type DeskOrderKind,
  type Milestone,
  nextAction,
  quote,
  step
} from "../../../src/desk/orders/deskOrderState.ts"
import { noRefundAddressReason, refundable } from "../../../src/desk/orders/refunds.ts"

const T0 = 1_000_000
const order = (kind: DeskOrderKind, over: Partial<DeskOrder> = {}): DeskOrder => ({
  kind,
  status: "awaiting_deposit",
  amount: 100_000_000n,
  fee: 300_000n,
  payout: 99_700_000n,
  requiredConfirmations: 2,
  expiresAtMs: T0 + 60_000,
  ...over
})
const seen = (amount: bigint, confirmations: number, nowMs = T0): DeskOrderEvent => ({ _tag: "DepositSighting", deposit: { txid: "d".repeat(64), amount, confirmations }, nowMs })

/** Runs the events in turn; the order and every milestone on the way. */
const run = (o: DeskOrder, events: ReadonlyArray<DeskOrderEvent>) => {
  const milestones: Array<Milestone> = []
  for (const e of events) {
    const s = step(o, e)
    o = s.order
    milestones.push(...s.milestones)
  }
  return { order: o, milestones }
}

describe("desk order state machine", () => {
  it("cash-out, redeem and unwrap: deposit seen, confirmed, burned, paid, released", () => {
    for (const kind of ["cashout", "redeem", "unwrap"] as const) {
      let o = order(kind)
      expect(nextAction(o)).toEqual({ _tag: "Watch" })
      o = run(o, [seen(o.amount, 0), seen(o.amount, 1)]).order
      expect(o.status).toBe("deposit_seen")
      const r = run(o, [seen(o.amount, 2)])
      expect(r.order.status).toBe("deposit_confirmed")
      expect(r.milestones).toEqual(["deposit_confirmed"])
      expect(nextAction(r.order)).toEqual({ _tag: "Burn", amount: 100_000_000n })
      const burned = step(r.order, { _tag: "BurnRecorded", txid: "b" })
      expect(burned.order.status).toBe("burning")
      expect(nextAction(burned.order)).toEqual({ _tag: "Pay", amount: 99_700_000n })
      const paid = step(burned.order, { _tag: "PayoutRecorded", txid: "p" })
      expect(paid.milestones).toEqual(["payout_sent"])
      expect(nextAction(paid.order)).toEqual({ _tag: "FollowPayout", txid: "p" })
      const done = step(paid.order, { _tag: "PayoutConfirmed" })
      expect(done.order.status).toBe("released")
      expect(nextAction(done.order)).toEqual({ _tag: "None" })
    }
  })

  it("mint and wrap: the confirmed deposit is answered by the token grant, no burn", () => {
    for (const kind of ["mint", "wrap"] as const) {
      const r = run(order(kind), [seen(100_000_000n, 3), { _tag: "BurnRecorded", txid: "b" }])
      expect(r.milestones).toEqual(["deposit_seen", "deposit_confirmed"])
      expect(r.order.status).toBe("deposit_confirmed") // a burn is not this kind's step
      expect(nextAction(r.order)).toEqual({ _tag: "Pay", amount: 99_700_000n })
      expect(run(r.order, [{ _tag: "PayoutRecorded", txid: "g" }, { _tag: "PayoutConfirmed" }]).order.status).toBe("released")
    }
  })

  it("refunds an over- or under-payment in full once it is confirmed, and never pays out", () => {
    for (const amount of [99_999_999n, 100_000_001n, 1n]) {
      const r = run(order("wrap"), [seen(amount, 1), seen(amount, 2)])
      expect(r.order.status).toBe("refunding")
      expect(r.milestones).toEqual(["deposit_seen", "deposit_confirmed"])
      expect(nextAction(r.order)).toEqual({ _tag: "Refund", amount })
      const again = step(r.order, { _tag: "PayoutRecorded", txid: "x" })
      expect(again.order.status).toBe("refunding")
      const sent = run(r.order, [{ _tag: "RefundRecorded", txid: "r" }, { _tag: "RefundRecorded", txid: "r2" }])
      expect(sent.milestones).toEqual(["refund_sent"])
      expect(nextAction(sent.order)).toEqual({ _tag: "FollowRefund", txid: "r" })
      expect(step(sent.order, { _tag: "RefundConfirmed" }).order.status).toBe("refunded")
    }
  })

  it("an order with nowhere to return a deposit (a wrap without refundAddress) fails with the reason instead of refunding", () => {
    const reason = noRefundAddressReason("wrap")
    const wrap = order("wrap", { refundable: refundable("wrap", null), noRefundReason: reason })
    const wrong = run(wrap, [seen(99_000_000n, 1), seen(99_000_000n, 2)])
    expect(wrong.order).toMatchObject({ status: "failed", failure: reason, deposit: { amount: 99_000_000n } })
    expect(wrong.milestones).toEqual(["deposit_seen", "deposit_confirmed", "failed"])
    expect(nextAction(wrong.order)).toEqual({ _tag: "None" })
    // Late, straight from expired, confirmed in one look.
    const expired = step(wrap, { _tag: "Tick", nowMs: wrap.expiresAtMs }).order
    const late = step(expired, seen(wrap.amount, 2, wrap.expiresAtMs + 1))
    expect(late).toMatchObject({ order: { status: "failed", failure: reason }, milestones: ["deposit_seen", "deposit_confirmed", "failed"] })
    // The right amount in time is not affected: the wrap goes on.
    expect(run(wrap, [seen(wrap.amount, 2)]).order.status).toBe("deposit_confirmed")
    // A wrap with a refund address, and every mint (its deposit's sender at worst), refund.
    for (const o of [order("wrap", { refundable: refundable("wrap", "mkRefund") }), order("mint", { refundable: refundable("mint", null) })]) {
      const r = run(o, [seen(1n, 2)])
      expect(r.order.status).toBe("refunding")
      expect(nextAction(r.order)).toEqual({ _tag: "Refund", amount: 1n })
    }
  })

  it("expires without a deposit, and refunds one that comes after the window", () => {
    const o = order("cashout")
    expect(step(o, { _tag: "Tick", nowMs: o.expiresAtMs - 1 }).order.status).toBe("awaiting_deposit")
    const expired = step(o, { _tag: "Tick", nowMs: o.expiresAtMs })
    expect(expired).toMatchObject({ order: { status: "expired" }, milestones: ["expired"] })
    expect(nextAction(expired.order)).toEqual({ _tag: "Watch" })
    const lateUnconfirmed = step(expired.order, seen(o.amount, 0, o.expiresAtMs + 5))
    expect(lateUnconfirmed.order.status).toBe("expired")
    const late = step(lateUnconfirmed.order, seen(o.amount, 2, o.expiresAtMs + 10))
    expect(late.order.status).toBe("refunding")
    expect(nextAction(late.order)).toEqual({ _tag: "Refund", amount: o.amount })
    // Exactly the ordered amount but after the window: refunded, not processed.
    const direct = step(o, seen(o.amount, 2, o.expiresAtMs))
    expect(direct.order.status).toBe("refunding")
  })

  it("goes back to waiting when an unconfirmed deposit disappears; a confirmed one stays", () => {
    const s = run(order("wrap"), [seen(100_000_000n, 1)])
    expect(s.order.status).toBe("deposit_seen")
    const gone = step(s.order, { _tag: "DepositSighting", deposit: undefined, nowMs: T0 })
    expect(gone.order).toMatchObject({ status: "awaiting_deposit", deposit: undefined })
    const confirmed = run(order("wrap"), [seen(100_000_000n, 2), { _tag: "DepositSighting", deposit: undefined, nowMs: T0 }])
    expect(confirmed.order.status).toBe("deposit_confirmed")
  })

  it("fails when a leg is refused for good, and a settled order ignores everything", () => {
    const c = run(order("cashout"), [seen(100_000_000n, 2), { _tag: "BurnRecorded", txid: "b" }, { _tag: "LegRefused", reason: "no USDC in the hot vault" }])
    expect(c.order).toMatchObject({ status: "failed", failure: "no USDC in the hot vault" })
    expect(c.milestones.at(-1)).toBe("failed")
    expect(step(c.order, { _tag: "PayoutRecorded", txid: "p" }).order.status).toBe("failed")
    // Refusing a leg means nothing before there is a leg.
    expect(step(order("mint"), { _tag: "LegRefused", reason: "x" }).order.status).toBe("awaiting_deposit")
  })

  it("quotes fees rounded up and payouts rounded down, exactly", () => {
    // 1 token (8 decimals) at 30 bps into USDC (6 decimals): fee 0.003, payout 0.997.
    expect(quote(100_000_000n, 30, 8, 6)).toEqual({ fee: 300_000n, payout: 997_000n })
    // A fee that does not divide: rounded up by at most one base unit.
    expect(quote(1_001n, 30, 8, 8)).toEqual({ fee: 4n, payout: 997n })
    // Into a finer unit (wETH 8 decimals into ETH's 18): scaled, exact.
    expect(quote(100_000_000n, 0, 8, 18)).toEqual({ fee: 0n, payout: 10n ** 18n })
    // Below the payout's smallest unit: nothing to pay, refused.
    expect(quote(99n, 0, 8, 6)).toBeUndefined()
    expect(quote(100n, 10_001, 8, 8)).toBeUndefined()
    expect(quote(0n, 0, 8, 8)).toBeUndefined()
    expect(quote(10n ** 30n, 25, 8, 6)).toEqual({ fee: 25n * 10n ** 26n, payout: (10n ** 30n - 25n * 10n ** 26n) / 100n })
  })
})
