// Partner cash-out (spec: Cash-out): the member's account (settings, permanent deposit
// addresses, saved payout address, coupons) and cash-out orders. Every route needs a key with
// the cashout scope. Amounts are decimal strings in the token's unit at the answer; a request's
// amount may be a JSON number or a decimal string (never more decimals than the token has).
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { BadRequest, IdempotencyKeyReused, NotFound } from "../common/ErrorBody.ts"
import { text } from "../common/text.ts"
import { Weight } from "../common/Weight.ts"
import { Forbidden } from "./errors.ts"
import { prefix } from "./key.ts"
import { DeskKey, DeskKeyCashout, DeskKeyStables, DeskKeyWrap } from "./security.ts"

/** The order routes' Idempotency-Key (docs/desk-orders.md, "Retrying an order"). */
const idempotencyKeyHeader = "Optional header Idempotency-Key (draft-ietf-httpapi-idempotency-key-header; a Structured Field String, or a bare token; scoped to the API key, kept 24 hours): a retry with the same key and body answers the same order; the same key with another body is 422 idempotency_key_reused; concurrent retries make one order."

const fee = {
  redeemFeeBps: Schema.Number.annotations({ description: "The fee this member's orders pay, in basis points (negotiated, else the desk's)" }),
  defaultRedeemFeeBps: Schema.Number.annotations({ description: "The desk's global redemption fee, in basis points" }),
  feePercent: Schema.Number.annotations({ description: "redeemFeeBps as a percentage (10 bps = 0.1)" })
}

/** Spec: "Deposit-address and payout-address responses". */
export const CashoutAccount = Schema.Struct({
  depositAddress: Schema.String.annotations({ description: "The member's permanent token-ledger deposit address (reusable, safe to cache)" }),
  evmAddress: Schema.String.annotations({ description: "The member's permanent EVM address (the same on ethereum, base and bsc)" }),
  payoutAddress: Schema.NullOr(Schema.String).annotations({ description: "The saved cash-out (USDC payout) address; null until saved or linked" }),
  ...fee
})
export type CashoutAccount = typeof CashoutAccount.Type

export const CashoutSettings = Schema.Struct({
  live: Schema.Boolean.annotations({ description: "Cash-out takes orders (the token is live and issued)" }),
  asset: Schema.String.annotations({ description: "The token cash-out redeems" }),
  propertyId: Schema.NullOr(Schema.Int),
  minAmount: Schema.String,
  maxAmount: Schema.String,
  redeemFeeBps: Schema.Number.annotations({ description: "The global redemption fee, in basis points" }),
  chains: Schema.Array(Schema.String).annotations({ description: "Chains a USDC payout can go to" }),
  account: CashoutAccount
})

export const PayoutAddressBody = Schema.Struct({ payoutAddress: text(200) })
export const CouponBody = Schema.Struct({ code: text(100) })

export const CouponValidation = Schema.Struct({
  code: Schema.String,
  valid: Schema.Boolean,
  redeemFeeBps: Schema.Number.annotations({ description: "The fee an order with this code would pay (the member's fee when the code is invalid or not lower)" }),
  feePercent: Schema.Number,
  defaultRedeemFeeBps: Schema.Number,
  reason: Schema.optional(Schema.String).annotations({ description: "Why the code is not valid" })
})

export const payoutChains = ["ethereum", "base", "bsc"] as const

export const CashoutOrderBody = Schema.Struct({
  amount: Schema.Union(Schema.Number, text(60)).annotations({ description: "Order size in the token's unit" }),
  payoutAddress: Schema.optional(text(200)),
  refundAddress: Schema.optional(text(200)),
  chain: text(20).annotations({ description: "ethereum, base or bsc" }),
  couponCode: Schema.optional(text(100)),
  source: Schema.optional(text(200))
})
export type CashoutOrderBody = typeof CashoutOrderBody.Type

export const OrderTxids = Schema.Struct({
  depositTxid: Schema.NullOr(Schema.String),
  mintTxid: Schema.NullOr(Schema.String).annotations({ description: "The token's grant (mint and wrap orders)" }),
  burnTxid: Schema.NullOr(Schema.String),
  payoutTxid: Schema.NullOr(Schema.String),
  refundTxid: Schema.NullOr(Schema.String)
})

/** Spec: "Cash-out order response" and "Cash-out order poll response" (one shape for both). */
export const CashoutOrder = Schema.Struct({
  id: Schema.String.annotations({ description: "The order's uuid" }),
  shortRef: Schema.String.annotations({ description: "TX- and 8 characters; reads the order as the uuid does" }),
  reference: Schema.NullOr(Schema.String).annotations({ description: "The caller's own reference (wrap orders), echoed on every poll" }),
  status: Schema.String,
  depositAddress: Schema.String.annotations({ description: "The order's own deposit address: show this one, not the account's" }),
  address: Schema.String,
  ledgerDepositAddress: Schema.String,
  sendTo: Schema.String,
  asset: Schema.String,
  kind: Schema.Literal("cashout", "mint", "redeem", "wrap", "unwrap"),
  network: Schema.String,
  memo: Schema.Null,
  chain: Schema.String,
  amount: Schema.String,
  amountReceived: Schema.NullOr(Schema.String),
  fee: Schema.String,
  feeBps: Schema.Number,
  payoutAmount: Schema.String,
  payoutAddress: Schema.String,
  refundAddress: Schema.String,
  confirmations: Schema.Int,
  requiredConfirmations: Schema.Int,
  expiresAt: Schema.String,
  createdAt: Schema.String,
  txids: OrderTxids,
  depositTxid: Schema.NullOr(Schema.String),
  mintTxid: Schema.NullOr(Schema.String),
  burnTxid: Schema.NullOr(Schema.String),
  payoutTxid: Schema.NullOr(Schema.String),
  refundTxid: Schema.NullOr(Schema.String),
  failure: Schema.NullOr(Schema.String)
})
export type CashoutOrder = typeof CashoutOrder.Type

const OrderIdPath = Schema.Struct({ id: text(64) })

export const CashoutGroup = HttpApiGroup.make("cashout")
  .add(HttpApiEndpoint.get("settings", `${prefix}/cashout/settings`).addSuccess(CashoutSettings)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "Cash-out's live flag, limits and fee, and the calling member's account (scope cashout)"))
  .add(HttpApiEndpoint.get("depositAddress", `${prefix}/cashout/deposit-address`).addSuccess(CashoutAccount)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "The member's permanent deposit addresses, saved payout address and effective fee (scope cashout)"))
  .add(HttpApiEndpoint.get("payoutAddress", `${prefix}/cashout/payout-address`).addSuccess(CashoutAccount)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "The saved payout address with the deposit addresses and effective fee (scope cashout)"))
  .add(HttpApiEndpoint.post("savePayoutAddress", `${prefix}/cashout/payout-address`).setPayload(PayoutAddressBody).addSuccess(CashoutAccount)
    .addError(BadRequest)
    .annotate(Weight, 5)
    .annotate(OpenApi.Summary, "Saves the USDC payout address (EVM, EIP-55 checksum when mixed case) so later orders may omit payoutAddress (scope cashout)"))
  .add(HttpApiEndpoint.post("coupon", `${prefix}/cashout/coupon`).setPayload(CouponBody).addSuccess(CouponValidation)
    .addError(BadRequest)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "Whether a coupon code is valid and the fee it would apply; never uses it (scope cashout)"))
  .add(HttpApiEndpoint.post("createOrder", `${prefix}/cashout/orders`).setPayload(CashoutOrderBody).addSuccess(CashoutOrder, { status: 201 })
    .addError(BadRequest).addError(IdempotencyKeyReused)
    .annotate(OpenApi.Description, idempotencyKeyHeader)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "A cash-out order: send the token to its deposit address, USDC is paid on the chosen chain (scope cashout)"))
  .middleware(DeskKeyCashout)
  .annotate(OpenApi.Title, "Cash-out")

/** The poll of every desk order made through cash-out or stables (spec: "Orders are polled with the cash-out order endpoint"). */
export const OrderPollGroup = HttpApiGroup.make("orderPoll")
  .add(HttpApiEndpoint.get("order", `${prefix}/cashout/orders/:id`).setPath(OrderIdPath).addSuccess(CashoutOrder)
    .addError(NotFound).addError(Forbidden)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "A cash-out, mint or redeem order by uuid or TX- reference; only the creating key reads it (any scope); polling advances it"))
  .middleware(DeskKey)
  .annotate(OpenApi.Title, "Cash-out")

export const stablecoins = ["USDC", "USDT", "PYUSD", "DAI"] as const

/** Spec: "Dollar token registry entry". */
export const DollarToken = Schema.Struct({
  asset: Schema.String,
  name: Schema.String,
  propertyId: Schema.NullOr(Schema.Int),
  acceptedDeposits: Schema.Array(Schema.String),
  chains: Schema.Array(Schema.String),
  minAmount: Schema.String,
  maxAmount: Schema.String,
  mintFeeBps: Schema.Number,
  redeemFeeBps: Schema.Number,
  circulatingSupply: Schema.String.annotations({ description: "Tokens outside the issuer's own address, decimal" }),
  live: Schema.Boolean.annotations({ description: "Takes orders: disable submit when false" })
})

export const StablesOrderBody = Schema.Struct({
  asset: text(20),
  direction: text(10).annotations({ description: "mint or redeem" }),
  chain: text(20).annotations({ description: "ethereum, base or bsc" }),
  token: Schema.optional(text(10)).annotations({ description: "mint: the stablecoin sent (USDC, USDT, PYUSD, DAI)" }),
  recipient: Schema.optional(text(200)).annotations({ description: "mint: the legacy token-ledger address that receives the token" }),
  payoutAddress: Schema.optional(text(200)).annotations({ description: "redeem: the USDC destination" }),
  refundAddress: Schema.optional(text(200)).annotations({ description: "redeem: where a mismatched deposit goes back (default: the member's ledger address)" }),
  amount: Schema.Union(Schema.Number, text(60))
})
export type StablesOrderBody = typeof StablesOrderBody.Type

export const StablesGroup = HttpApiGroup.make("stables")
  .add(HttpApiEndpoint.post("order", `${prefix}/stables/orders`).setPayload(StablesOrderBody).addSuccess(CashoutOrder, { status: 201 })
    .addError(BadRequest).addError(IdempotencyKeyReused)
    .annotate(OpenApi.Description, idempotencyKeyHeader)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "Mint (send a stablecoin to the order's fresh EVM address, the token is granted to recipient) or redeem (send the token, USDC is paid) (scope stables)"))
  .middleware(DeskKeyStables)
  .annotate(OpenApi.Title, "Dollar tokens")

export const wrapBases = ["BTC", "LTC", "ETH"] as const

/** Spec: "Wrappable asset entry". */
export const WrappableAsset = Schema.Struct({
  base: Schema.String,
  wrapped: Schema.String,
  network: Schema.String,
  propertyId: Schema.NullOr(Schema.Int),
  requiredConfirmations: Schema.Int,
  minAmount: Schema.String,
  maxAmount: Schema.String,
  wrapFeeBps: Schema.Number,
  unwrapFeeBps: Schema.Number,
  live: Schema.Boolean,
  wrappable: Schema.Boolean.annotations({ description: "This desk takes wrap orders of it now (ETH: not yet)" }),
  reserves: Schema.String.annotations({ description: "Confirmed native coin received by released wrap orders, decimal" }),
  wrappedSupply: Schema.String,
  collateralization: Schema.NullOr(Schema.Number).annotations({ description: "reserves / wrappedSupply; null while nothing is wrapped" })
})

export const WrapOrderBody = Schema.Struct({
  direction: text(10).annotations({ description: "wrap or unwrap" }),
  asset: text(10).annotations({ description: "BTC, LTC or ETH" }),
  amount: Schema.Union(Schema.Number, text(60)),
  payoutAddress: text(200).annotations({ description: "wrap: the legacy token-ledger address; unwrap: the native address" }),
  refundAddress: Schema.optional(text(200)),
  reference: Schema.optional(text(100))
})
export type WrapOrderBody = typeof WrapOrderBody.Type

export const WrapGroup = HttpApiGroup.make("wrap")
  .add(HttpApiEndpoint.post("order", `${prefix}/wrap/orders`).setPayload(WrapOrderBody).addSuccess(CashoutOrder, { status: 201 })
    .addError(BadRequest).addError(IdempotencyKeyReused)
    .annotate(OpenApi.Description, idempotencyKeyHeader)
    .annotate(Weight, 10)
    .annotate(OpenApi.Summary, "A wrap order: send the coin to the order's own address, the wrapped token is granted to payoutAddress (scope wrap)"))
  .add(HttpApiEndpoint.get("poll", `${prefix}/wrap/orders/:id`).setPath(OrderIdPath).addSuccess(CashoutOrder)
    .addError(NotFound).addError(Forbidden)
    .annotate(Weight, 2)
    .annotate(OpenApi.Summary, "A wrap order by uuid or TX- reference; only the creating key reads it; polling advances it (scope wrap)"))
  .middleware(DeskKeyWrap)
  .annotate(OpenApi.Title, "Wrapping")
