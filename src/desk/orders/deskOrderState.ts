// The desk order's state machine, pure: what a cash-out, a dollar-token mint or redeem, a wrap or
// an unwrap does next, given what the chains said. The DeskOrder entity (one per order) feeds it
// sightings and the outcomes of its own legs, writes what it returns, and does the action it asks
// for: a leg is recorded (signed bytes stored, or an EVM nonce reserved) before it is broadcast,
// so the entity only ever asks the chain for what the row already holds.
//
// States (docs/desk-orders.md has the same table):
//
// | status            | meaning                                              | next                                  |
// |-------------------|------------------------------------------------------|---------------------------------------|
// | awaiting_deposit  | deposit address issued, nothing seen                 | deposit_seen, expired                 |
// | deposit_seen      | a deposit is on its chain, fewer confirmations than required | deposit_confirmed, refunding, failed (nowhere to refund), awaiting_deposit (reorged away) |
// | deposit_confirmed | required confirmations reached                       | burning (token in), paying (coin in)  |
// | burning           | the received token's burn is recorded and sent       | paying                                |
// | paying            | the payout (USDC, native coin, or the token grant) is recorded and sent | released               |
// | released          | the payout is confirmed: done                        | —                                     |
// | refunding         | the deposit did not match the order (or came late): its refund is recorded and sent | refunded, failed (leg refused) |
// | refunded          | the refund is confirmed: done                        | —                                     |
// | expired           | no deposit within the window                         | refunding (a late deposit), failed (nowhere to refund) |
// | failed            | a leg was refused for good; an operator looks        | —                                     |
//
// Rules (documented in docs/desk-orders.md):
// - The deposit must be exactly the ordered amount. Any other amount (over or under) is refunded
//   in full (a wrap's less the network fee; who gets it: refunds.ts) and the order ends `refunded`:
//   the desk never guesses which part the customer meant. A deposit arriving after expiry is
//   refunded the same way.
// - The fee is `ceil(amount × feeBps / 10000)` in the deposit asset's base units (rounded in the
//   desk's favour by at most one base unit); the payout is what is left, converted to the payout
//   asset's precision rounding down (`floor`); the remainder below the payout's smallest unit stays
//   with the fee. All integers (bigint), never floats.
// - An order that cannot return a deposit by itself (`refundable: false`: a wrap without a
//   refundAddress, refunds.ts) ends `failed` with the reason instead of `refunding`.
// - A deposit seen with fewer confirmations than required that then disappears (dropped, reorged
//   out) sends the order back to `awaiting_deposit`; once `deposit_confirmed`, the desk acts.

export type DeskOrderKind = "cashout" | "mint" | "redeem" | "wrap" | "unwrap"

export type DeskOrderStatus =
  | "awaiting_deposit"
  | "deposit_seen"
  | "deposit_confirmed"
  | "burning"
  | "paying"
  | "released"
  | "refunding"
  | "refunded"
  | "expired"
  | "failed"

/** Milestones posted to the key's callback URL (the spec names payout_sent; the rest are ours). */
export type Milestone = "deposit_seen" | "deposit_confirmed" | "burned" | "payout_sent" | "refund_sent" | "expired" | "failed"

/** Kinds whose deposit is the desk's own token, burned before the payout goes out. */
export const burnsDeposit = (kind: DeskOrderKind): boolean => kind === "cashout" || kind === "redeem" || kind === "unwrap"

export interface DeskOrder {
  readonly kind: DeskOrderKind
  readonly status: DeskOrderStatus
  /** The ordered amount, in the deposit asset's base units. */
  readonly amount: bigint
  /** Fee and payout fixed at creation (see `quote`), in deposit and payout base units. */
  readonly fee: bigint
  readonly payout: bigint
  readonly requiredConfirmations: number
  /** Unix ms after which an order still awaiting its deposit expires. */
  readonly expiresAtMs: number
  readonly deposit?: { readonly txid: string; readonly amount: bigint; readonly confirmations: number } | undefined
  readonly burnTxid?: string | undefined
  readonly payoutTxid?: string | undefined
  readonly refundTxid?: string | undefined
  readonly failure?: string | undefined
  /**
   * Whether a mismatched or late deposit can go back automatically (refunds.ts `refundable`);
   * false: such an order ends `failed` with `noRefundReason`. Absent: true.
   */
  readonly refundable?: boolean | undefined
  readonly noRefundReason?: string | undefined
}

export type DeskOrderEvent =
  /** What the deposit's chain says now about the order's deposit address (undefined: nothing there). */
  | { readonly _tag: "DepositSighting"; readonly deposit: { readonly txid: string; readonly amount: bigint; readonly confirmations: number } | undefined; readonly nowMs: number }
  | { readonly _tag: "BurnRecorded"; readonly txid: string }
  | { readonly _tag: "PayoutRecorded"; readonly txid: string }
  | { readonly _tag: "PayoutConfirmed" }
  | { readonly _tag: "RefundRecorded"; readonly txid: string }
  | { readonly _tag: "RefundConfirmed" }
  /** Time passes with nothing seen (the entity's timer). */
  | { readonly _tag: "Tick"; readonly nowMs: number }
  | { readonly _tag: "LegRefused"; readonly reason: string }

/** What the entity must do next, from the order as it stands. */
export type DeskOrderAction =
  | { readonly _tag: "Watch" } // look at the deposit again later
  | { readonly _tag: "Burn"; readonly amount: bigint }
  | { readonly _tag: "Pay"; readonly amount: bigint }
  | { readonly _tag: "FollowPayout"; readonly txid: string }
  | { readonly _tag: "Refund"; readonly amount: bigint }
  | { readonly _tag: "FollowRefund"; readonly txid: string }
  | { readonly _tag: "None" } // settled

export interface Step {
  readonly order: DeskOrder
  readonly milestones: ReadonlyArray<Milestone>
}

export const isSettled = (s: DeskOrderStatus): boolean => s === "released" || s === "refunded" || s === "failed"

/** Fee and payout of an amount; undefined when nothing would be paid out. */
export const quote = (amount: bigint, feeBps: number, depositDecimals: number, payoutDecimals: number): { readonly fee: bigint; readonly payout: bigint } | undefined => {
  if (amount <= 0n || !Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) return undefined
  const fee = (amount * BigInt(feeBps) + 9_999n) / 10_000n
  const left = amount - fee
  const payout = payoutDecimals >= depositDecimals
    ? left * 10n ** BigInt(payoutDecimals - depositDecimals)
    : left / 10n ** BigInt(depositDecimals - payoutDecimals)
  return payout > 0n ? { fee, payout } : undefined
}

const same = (order: DeskOrder): Step => ({ order, milestones: [] })

/** The order after one event; events that do not apply in its status change nothing. */
export const step = (order: DeskOrder, event: DeskOrderEvent): Step => {
  if (isSettled(order.status)) return same(order)
  if (event._tag === "LegRefused") {
    return order.status === "burning" || order.status === "paying" || order.status === "refunding" || order.status === "deposit_confirmed"
      ? { order: { ...order, status: "failed", failure: event.reason }, milestones: ["failed"] }
      : same(order)
  }
  switch (order.status) {
    case "awaiting_deposit":
    case "deposit_seen":
    case "expired": {
      if (event._tag === "Tick") {
        return order.status === "awaiting_deposit" && event.nowMs >= order.expiresAtMs
          ? { order: { ...order, status: "expired" }, milestones: ["expired"] }
          : same(order)
      }
      if (event._tag !== "DepositSighting") return same(order)
      const d = event.deposit
      if (d === undefined) {
        // Seen before, gone now (dropped or reorged out) while still short of its confirmations.
        return order.status === "deposit_seen" ? { order: { ...order, status: "awaiting_deposit", deposit: undefined }, milestones: [] } : same(order)
      }
      // Late, or not the ordered amount: the whole deposit goes back once it is confirmed.
      const mismatch = d.amount !== order.amount
      const late = order.status === "expired" || (order.status === "awaiting_deposit" && event.nowMs >= order.expiresAtMs)
      if (d.confirmations >= order.requiredConfirmations) {
        const seen: ReadonlyArray<Milestone> = order.status === "deposit_seen" ? ["deposit_confirmed"] : ["deposit_seen", "deposit_confirmed"]
        if ((mismatch || late) && order.refundable === false) {
          return { order: { ...order, status: "failed", deposit: d, failure: order.noRefundReason ?? "the deposit cannot be returned automatically: an operator returns it" }, milestones: [...seen, "failed"] }
        }
        if (mismatch || late) return { order: { ...order, status: "refunding", deposit: d }, milestones: seen }
        return { order: { ...order, status: "deposit_confirmed", deposit: d }, milestones: order.status === "deposit_seen" ? ["deposit_confirmed"] : ["deposit_seen", "deposit_confirmed"] }
      }
      if (late) return { order: { ...order, deposit: d }, milestones: [] }
      return order.status === "deposit_seen"
        ? { order: { ...order, deposit: d }, milestones: [] }
        : { order: { ...order, status: "deposit_seen", deposit: d }, milestones: ["deposit_seen"] }
    }
    case "deposit_confirmed":
      if (event._tag === "BurnRecorded" && burnsDeposit(order.kind)) return { order: { ...order, status: "burning", burnTxid: event.txid }, milestones: ["burned"] }
      if (event._tag === "PayoutRecorded" && !burnsDeposit(order.kind)) return { order: { ...order, status: "paying", payoutTxid: event.txid }, milestones: ["payout_sent"] }
      return same(order)
    case "burning":
      return event._tag === "PayoutRecorded" ? { order: { ...order, status: "paying", payoutTxid: event.txid }, milestones: ["payout_sent"] } : same(order)
    case "paying":
      return event._tag === "PayoutConfirmed" ? { order: { ...order, status: "released" }, milestones: [] } : same(order)
    case "refunding":
      if (event._tag === "RefundRecorded" && order.refundTxid === undefined) return { order: { ...order, refundTxid: event.txid }, milestones: ["refund_sent"] }
      if (event._tag === "RefundConfirmed" && order.refundTxid !== undefined) return { order: { ...order, status: "refunded" }, milestones: [] }
      return same(order)
    default:
      return same(order)
  }
}

/** What the entity does next for an order in this state. */
export const nextAction = (order: DeskOrder): DeskOrderAction => {
  switch (order.status) {
    case "awaiting_deposit":
    case "deposit_seen":
    case "expired":
      return { _tag: "Watch" }
    case "deposit_confirmed":
      return burnsDeposit(order.kind) ? { _tag: "Burn", amount: order.amount } : { _tag: "Pay", amount: order.payout }
    case "burning":
      return { _tag: "Pay", amount: order.payout }
    case "paying":
      return { _tag: "FollowPayout", txid: order.payoutTxid! }
    case "refunding":
      return order.refundTxid === undefined ? { _tag: "Refund", amount: order.deposit!.amount } : { _tag: "FollowRefund", txid: order.refundTxid }
    case "released":
    case "refunded":
    case "failed":
      return { _tag: "None" }
  }
}
