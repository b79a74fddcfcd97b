// Desk orders from requests: every check (live token, chain, amount in limits and in the asset's
// precision, addresses by their rules, coupon), then the order's draft: every field of its row but
// those the DeskOrder entity makes when it writes the order (orders/createOrder.ts), so a refused
// request creates nothing and the entity is the only writer of its row.
//   cash-out and redeem: the desk's token comes in on the ledger, USDC goes out on an EVM chain;
//   mint: a stablecoin comes in at a fresh EVM address, the token is granted on the ledger.
import { Effect, Either } from "effect"
import { payoutChains, stablecoins } from "../../../schemas/desk/cashout.ts"
import { OrderDraft } from "../../../schemas/desk/orders.ts"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { EvmLedgers } from "../../chain/evm/EvmLedger.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { quote } from "../orders/deskOrderState.ts"
import { erc20Decimals } from "../orders/orderDecimals.ts"
import { baseChainOf, isLive, TOKEN_DECIMALS } from "../tokens/registry.ts"
import { findToken, listTokens } from "../tokens/tokenStore.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { CoinLedgers } from "../../chain/ledger/CoinLedgers.ts"
import { coinChains } from "../../chain/params.ts"
import { CASHOUT_TOKEN } from "./policy.ts"
import { memberAccount } from "./account.ts"
import { findCoupon } from "./couponStore.ts"
import { createUnwrapOrder } from "./createUnwrap.ts"
import { bad, orderAmount } from "./orderInput.ts"
import { applyCoupon, evmAddressInput, ledgerAddressInput, memberFeeBps, normalizeCouponCode } from "./policy.ts"

export { ORDER_WINDOW_MS } from "./orderInput.ts"
/** A ledger deposit counts from its first block; the registry may ask for more. */
export const ledgerConfirmations = (registry: number): number => Math.max(1, registry)
/** Confirmations of a stablecoin deposit on an EVM chain before the token is granted. */
export const EVM_DEPOSIT_CONFIRMATIONS = 3


/** The dollar token `code`, live; or why not. */
const liveDollarToken = (code: string) =>
  Effect.gen(function*() {
    const token = yield* findToken(code)
    if (token === undefined || token.kind !== "dollar") return yield* Effect.fail(bad(`asset must be a dollar token of the registry (GET /stables/assets), got "${code.slice(0, 20)}"`))
    if (!isLive(token)) return yield* Effect.fail(bad(`${token.code} is paused: it takes no orders now (GET /stables/assets shows when it is live)`))
    return token
  })

const payoutChain = (text: string) => {
  const chain = payoutChains.find((c) => c === text)
  return chain === undefined ? Effect.fail(bad(`chain must be one of ${payoutChains.join(", ")}, got "${text.slice(0, 20)}"`)) : Effect.succeed(chain)
}

export interface LedgerDepositRequest {
  readonly kind: "cashout" | "redeem"
  readonly tokenCode: string
  readonly amount: number | string
  readonly chain: string
  readonly payoutAddress?: string | undefined
  readonly refundAddress?: string | undefined
  readonly couponCode?: string | undefined
  readonly source?: string | undefined
}

/** Cash-out, or a dollar token's redeem: the token in at the order's ledger address, USDC out. */
export const createLedgerDepositOrder = (member: DeskCaller, req: LedgerDepositRequest) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const token = yield* liveDollarToken(req.tokenCode)
    const chain = yield* payoutChain(req.chain)
    const amount = yield* orderAmount(token, req.amount, TOKEN_DECIMALS)
    const account = yield* memberAccount(member)
    const payoutText = req.payoutAddress ?? (req.kind === "cashout" ? account.payoutAddress : null)
    if (payoutText === null) {
      return yield* Effect.fail(bad(req.kind === "cashout" ? "payoutAddress is required: no cash-out address is saved (POST /cashout/payout-address saves one)" : "payoutAddress is required for redeem"))
    }
    const payout = evmAddressInput("payoutAddress", payoutText)
    if (Either.isLeft(payout)) return yield* Effect.fail(bad(payout.left))
    // Spec: absent, the member's permanent token-ledger address: the linked wallet's, else the
    // member's permanent deposit address at the desk.
    const refund = ledgerAddressInput("refundAddress", req.refundAddress ?? account.tokenPayoutAddress ?? account.depositAddress)
    if (Either.isLeft(refund)) return yield* Effect.fail(bad(refund.left))
    let feeBps = memberFeeBps(token, member.feeBps)
    let couponCode: string | null = null
    if (req.couponCode !== undefined) {
      const code = normalizeCouponCode(req.couponCode)
      if (Either.isLeft(code)) return yield* Effect.fail(bad(`couponCode: ${code.left}`))
      const check = applyCoupon(yield* findCoupon(code.right), feeBps, new Date())
      if (!check.valid) return yield* Effect.fail(bad(`couponCode ${code.right}: ${check.reason}`))
      // A coupon that would not lower the fee is not used up.
      if (check.lowers) {
        feeBps = check.feeBps
        couponCode = code.right
      }
    }
    const q = quote(amount, feeBps, TOKEN_DECIMALS, yield* erc20Decimals(chain, "USDC"))
    if (q === undefined) return yield* Effect.fail(bad("amount is too small: after the fee nothing would be paid out"))
    const tip = yield* ledger.tip
    return new OrderDraft({
      kind: req.kind, memberId: member.memberId, keyId: member.keyId, asset: token.code, chain, depositChain: "ledger",
      amount: amount.toString(), fee: q.fee.toString(), payout: q.payout.toString(), feeBps, couponCode,
      payoutAddress: payout.right, refundAddress: refund.right, reference: null, source: req.source ?? null,
      requiredConfirmations: ledgerConfirmations(token.requiredConfirmations), depositFromHeight: tip.height, depositAsset: null
    })
  })

export interface MintRequest {
  readonly tokenCode: string
  readonly amount: number | string
  readonly chain: string
  readonly stablecoin: string | undefined
  readonly recipient: string | undefined
  /** An EVM address on the order's chain: where a wrong or late deposit goes back (else its sender; refunds.ts). */
  readonly refundAddress?: string | undefined
}

/** A dollar token's mint: the stablecoin in at a freshly derived EVM address, the token granted to `recipient`. */
export const createMintOrder = (member: DeskCaller, req: MintRequest) =>
  Effect.gen(function*() {
    const evm = yield* EvmLedgers
    const token = yield* liveDollarToken(req.tokenCode)
    const chain = yield* payoutChain(req.chain)
    const coin = stablecoins.find((s) => s === req.stablecoin?.trim().toUpperCase())
    if (coin === undefined) return yield* Effect.fail(bad(`token must be one of ${stablecoins.join(", ")} for mint`))
    if (req.recipient === undefined) return yield* Effect.fail(bad("recipient is required for mint: the legacy token-ledger (T…) address that receives the token"))
    const recipient = ledgerAddressInput("recipient", req.recipient)
    if (Either.isLeft(recipient)) return yield* Effect.fail(bad(recipient.left))
    const refund = req.refundAddress === undefined ? Either.right(null) : evmAddressInput(`refundAddress (an EVM address on ${chain})`, req.refundAddress)
    if (Either.isLeft(refund)) return yield* Effect.fail(bad(refund.left))
    const decimals = yield* Effect.mapError(erc20Decimals(chain, coin), () => bad(`chain ${chain} is not served by this desk`))
    const amount = yield* orderAmount(token, req.amount, decimals)
    const q = quote(amount, token.feeInBps, decimals, TOKEN_DECIMALS)
    if (q === undefined) return yield* Effect.fail(bad("amount is too small: after the fee nothing would be minted"))
    const ledger = yield* Effect.mapError(evm.get(chain), () => bad(`chain ${chain} is not served by this desk`))
    const head = yield* ledger.blockNumber
    return new OrderDraft({
      kind: "mint", memberId: member.memberId, keyId: member.keyId, asset: token.code, chain, depositChain: chain,
      amount: amount.toString(), fee: q.fee.toString(), payout: q.payout.toString(), feeBps: token.feeInBps, couponCode: null,
      payoutAddress: recipient.right, refundAddress: refund.right, reference: null, source: null,
      requiredConfirmations: EVM_DEPOSIT_CONFIRMATIONS, depositFromHeight: Number(head), depositAsset: coin
    })
  })

/** Cash-out is the redeem of the cash-out token to USDC. */
export const cashoutTokenCode = CASHOUT_TOKEN

export interface WrapRequest {
  readonly direction: string
  readonly asset: string
  readonly amount: number | string
  readonly payoutAddress: string
  readonly refundAddress?: string | undefined
  readonly reference?: string | undefined
}

/**
 * A wrap: the native coin in at the order's own address on its chain (BTC, LTC, or ETH at a
 * freshly derived EVM address on ethereum), the wrapped token granted to `payoutAddress` once
 * confirmed. An unwrap is `createUnwrapOrder` (createUnwrap.ts).
 */
export const createWrapOrder = (member: DeskCaller, req: WrapRequest) =>
  Effect.gen(function*() {
    const coins = yield* CoinLedgers
    if (req.direction !== "wrap" && req.direction !== "unwrap") return yield* Effect.fail(bad(`direction must be wrap or unwrap, got "${req.direction.slice(0, 10)}"`))
    const base = req.asset.trim().toUpperCase()
    const token = (yield* listTokens).find((t) => t.kind === "wrapped" && t.baseAsset === base)
    if (token === undefined) return yield* Effect.fail(bad(`asset must be BTC, LTC or ETH, got "${req.asset.slice(0, 10)}"`))
    const chain = baseChainOf(token.baseAsset)
    if (chain === undefined) return yield* Effect.fail(bad(`asset must be BTC, LTC or ETH, got "${req.asset.slice(0, 10)}"`))
    if (!isLive(token)) return yield* Effect.fail(bad(`${token.code} is paused: it takes no orders now (GET /wrap/assets shows when it is live)`))
    if (req.direction === "unwrap") return yield* createUnwrapOrder(member, token, chain, req)
    // ETH is taken in wei (18 decimals), the order amount having at most the token's 8.
    const coinDecimals = chain === "ethereum" ? 18 : TOKEN_DECIMALS
    const amount = yield* orderAmount(token, req.amount, coinDecimals)
    const payout = ledgerAddressInput("payoutAddress", req.payoutAddress)
    if (Either.isLeft(payout)) return yield* Effect.fail(bad(payout.left))
    let refund: string | null = null
    if (req.refundAddress !== undefined) {
      if (chain === "ethereum") {
        const check = evmAddressInput("refundAddress (an ETH address)", req.refundAddress)
        if (Either.isLeft(check)) return yield* Effect.fail(bad(check.left))
        refund = check.right
      } else {
        const check = validateLedgerAddress(req.refundAddress, coinChains[chain].params)
        if (!check.valid) return yield* Effect.fail(bad(`refundAddress (a ${base} address): ${check.error}`))
        refund = req.refundAddress
      }
    }
    const q = quote(amount, token.feeInBps, coinDecimals, TOKEN_DECIMALS)
    if (q === undefined) return yield* Effect.fail(bad("amount is too small: after the fee nothing would be wrapped"))
    // The deposit scan starts above the deposit chain's height now.
    const evm = yield* EvmLedgers
    const fromHeight = chain === "ethereum"
      ? Number(yield* Effect.flatMap(Effect.mapError(evm.get(chain), () => bad("ETH is not served by this desk (no ethereum ledger)")), (l) => l.blockNumber))
      : (yield* coins.get(chain).tip).height
    return new OrderDraft({
      kind: "wrap", memberId: member.memberId, keyId: member.keyId, asset: token.code, chain, depositChain: chain,
      amount: amount.toString(), fee: q.fee.toString(), payout: q.payout.toString(), feeBps: token.feeInBps, couponCode: null,
      payoutAddress: payout.right, refundAddress: refund, reference: req.reference ?? null, source: null,
      requiredConfirmations: Math.max(1, token.requiredConfirmations), depositFromHeight: fromHeight, depositAsset: null
    })
  })
