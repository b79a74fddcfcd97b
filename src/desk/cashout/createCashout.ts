// A cash-out order from a request: every check first (live token, chain, amount in limits and in
// the token's precision, addresses by their rules, coupon), so a refused request creates nothing;
// then, in one transaction, the order's own deposit address, the coupon's use and the row.
import { randomUUID } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { type CashoutOrderBody, payoutChains } from "../../../schemas/desk/cashout.ts"
import { BadRequest } from "../../../schemas/desk/errors.ts"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { quote } from "../orders/deskOrderState.ts"
import { newShortRef } from "../orders/orderStore.ts"
import { usdcDecimals } from "../orders/orderView.ts"
import { isLive, showAmount, TOKEN_DECIMALS } from "../tokens/registry.ts"
import { DeskWallets } from "../wallets/DeskWallets.ts"
import { cashoutToken, memberAccount } from "./account.ts"
import { findCoupon, useCoupon } from "./couponStore.ts"
import { amountBase, applyCoupon, evmAddressInput, ledgerAddressInput, normalizeCouponCode } from "./policy.ts"

/** How long an order waits for its deposit (docs/desk-orders.md, "Expiry"). */
export const ORDER_WINDOW_MS = 60 * 60_000
/** A ledger deposit counts from its first block; the registry may ask for more. */
export const ledgerConfirmations = (registry: number): number => Math.max(1, registry)

const bad = (message: string) => new BadRequest({ error: { code: "invalid_parameter", message } })

export const createCashout = (member: DeskCaller, body: CashoutOrderBody) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const wallets = yield* DeskWallets
    const ledger = yield* UtxoLedger
    const token = yield* cashoutToken
    if (!isLive(token)) return yield* Effect.fail(bad(`cash-out of ${token.code} is paused; GET /cashout/settings shows when it is live`))
    const chain = payoutChains.find((c) => c === body.chain)
    if (chain === undefined) return yield* Effect.fail(bad(`chain must be one of ${payoutChains.join(", ")}, got "${body.chain.slice(0, 20)}"`))
    const amount = amountBase(body.amount, TOKEN_DECIMALS)
    if (Either.isLeft(amount)) return yield* Effect.fail(bad(amount.left))
    if (amount.right < token.minBase || amount.right > token.maxBase) {
      return yield* Effect.fail(bad(`amount must be between ${showAmount(token.minBase)} and ${showAmount(token.maxBase)} ${token.code}`))
    }
    const account = yield* memberAccount(member)
    const payoutText = body.payoutAddress ?? account.payoutAddress
    if (payoutText === null) return yield* Effect.fail(bad("payoutAddress is required: no cash-out address is saved (POST /cashout/payout-address saves one)"))
    const payout = evmAddressInput("payoutAddress", payoutText)
    if (Either.isLeft(payout)) return yield* Effect.fail(bad(payout.left))
    // Spec: absent, the member's permanent token-ledger address: the linked wallet's, else the
    // member's permanent deposit address at the desk.
    const refund = ledgerAddressInput("refundAddress", body.refundAddress ?? account.tokenPayoutAddress ?? account.depositAddress)
    if (Either.isLeft(refund)) return yield* Effect.fail(bad(refund.left))
    let feeBps = account.redeemFeeBps
    let couponCode: string | null = null
    if (body.couponCode !== undefined) {
      const code = normalizeCouponCode(body.couponCode)
      if (Either.isLeft(code)) return yield* Effect.fail(bad(`couponCode: ${code.left}`))
      const check = applyCoupon(yield* findCoupon(code.right), feeBps, new Date())
      if (!check.valid) return yield* Effect.fail(bad(`couponCode ${code.right}: ${check.reason}`))
      // A coupon that would not lower the fee is not used up.
      if (check.lowers) {
        feeBps = check.feeBps
        couponCode = code.right
      }
    }
    const q = quote(amount.right, feeBps, TOKEN_DECIMALS, usdcDecimals(chain))
    if (q === undefined) return yield* Effect.fail(bad("amount is too small: after the fee nothing would be paid out"))
    const tip = yield* ledger.tip
    const id = randomUUID()
    return yield* Effect.gen(function*() {
      if (couponCode !== null && !(yield* useCoupon(couponCode))) return yield* Effect.fail(bad(`couponCode ${couponCode}: the coupon was used up or expired meanwhile`))
      const deposit = yield* wallets.depositAddress({ chain: "ledger", purpose: "order", owner: id, memberId: member.memberId })
      yield* sql`INSERT INTO desk_orders (id, short_ref, member_id, key_id, kind, status, asset, chain, amount, fee, payout, fee_bps, coupon_code,
          deposit_address, payout_address, refund_address, source, required_confirmations, expires_at, deposit_from_height)
        VALUES (${id}, ${newShortRef()}, ${member.memberId}, ${member.keyId}, 'cashout', 'awaiting_deposit', ${token.code}, ${chain},
          ${amount.right.toString()}, ${q.fee.toString()}, ${q.payout.toString()}, ${feeBps}, ${couponCode}, ${deposit.address}, ${payout.right},
          ${refund.right}, ${body.source ?? null}, ${ledgerConfirmations(token.requiredConfirmations)}, now() + ${ORDER_WINDOW_MS} * interval '1 millisecond',
          ${tip.height})`
      yield* sql`INSERT INTO desk_order_events (order_id, source, event, body) VALUES (${id}, 'desk', 'created', ${JSON.stringify({ kind: "cashout", keyId: member.keyId })}::jsonb)`
      return id
    }).pipe(sql.withTransaction)
  })
