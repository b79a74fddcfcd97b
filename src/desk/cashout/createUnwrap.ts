// An unwrap order: the wrapped token (wBTC, wLTC, wETH) comes in on the token ledger at the
// order's own ledger address, is burned (swept to the issuer, revoked) once confirmed, and the
// native coin goes out to `payoutAddress` from the desk's hot vault (BTC, LTC) or the EVM hot
// wallet (ETH). Every check, then the order's draft, which the DeskOrder entity writes
// (orders/createOrder.ts): a refused request creates nothing.
import { Effect, Either } from "effect"
import { OrderDraft } from "../../../schemas/desk/orders.ts"
import type { DeskCaller } from "../../../schemas/desk/security.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { coinChains } from "../../chain/params.ts"
import { quote } from "../orders/deskOrderState.ts"
import { coinDecimals } from "../orders/orderView.ts"
import { type DeskToken, TOKEN_DECIMALS } from "../tokens/registry.ts"
import { memberAccount } from "./account.ts"
import { bad, orderAmount } from "./orderInput.ts"
import { evmAddressInput, ledgerAddressInput } from "./policy.ts"

/** Ledger confirmations of the token deposit before it is burned (the desk's own ledger; cash-out's too). */
export const UNWRAP_LEDGER_CONFIRMATIONS = 1

export interface UnwrapRequest {
  readonly amount: number | string
  readonly payoutAddress: string
  readonly refundAddress?: string | undefined
  readonly reference?: string | undefined
}

/** The native payout address: BTC and LTC for their network (the devnets' regtest prefixes), ETH checksummed. */
const payoutAddressOf = (chain: "btc" | "ltc" | "ethereum", base: string, text: string): Either.Either<string, string> => {
  if (chain === "ethereum") return evmAddressInput("payoutAddress (an ETH address)", text)
  const check = validateLedgerAddress(text, coinChains[chain].params)
  return check.valid ? Either.right(text) : Either.left(`payoutAddress (a ${base} address): ${check.error}`)
}

export const createUnwrapOrder = (member: DeskCaller, token: DeskToken, chain: "btc" | "ltc" | "ethereum", req: UnwrapRequest) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const amount = yield* orderAmount(token, req.amount, TOKEN_DECIMALS)
    const payout = payoutAddressOf(chain, token.baseAsset, req.payoutAddress)
    if (Either.isLeft(payout)) return yield* Effect.fail(bad(payout.left))
    if (req.refundAddress !== undefined) {
      const refund = ledgerAddressInput("refundAddress", req.refundAddress)
      if (Either.isLeft(refund)) return yield* Effect.fail(bad(refund.left))
    }
    const decimals = coinDecimals(chain)
    const q = quote(amount, token.feeOutBps, TOKEN_DECIMALS, decimals)
    if (q === undefined) return yield* Effect.fail(bad("amount is too small: after the fee nothing would be paid out"))
    // A coin output below the chain's dust limit would not relay.
    if (chain !== "ethereum" && q.payout < coinChains[chain].params.dustSats) {
      return yield* Effect.fail(bad(`amount is too small: the payout would be below ${chain}'s dust limit of ${coinChains[chain].params.dustSats} satoshis`))
    }
    // Spec (as cash-out): absent, the member's permanent token-ledger address: the linked wallet's, else the member's deposit address at the desk.
    const refund = req.refundAddress ?? (yield* Effect.map(memberAccount(member), (a) => a.tokenPayoutAddress ?? a.depositAddress))
    const tip = yield* ledger.tip
    return new OrderDraft({
      kind: "unwrap", memberId: member.memberId, keyId: member.keyId, asset: token.code, chain, depositChain: "ledger",
      amount: amount.toString(), fee: q.fee.toString(), payout: q.payout.toString(), feeBps: token.feeOutBps, couponCode: null,
      payoutAddress: payout.right, refundAddress: refund, reference: req.reference ?? null, source: null,
      requiredConfirmations: UNWRAP_LEDGER_CONFIRMATIONS, depositFromHeight: tip.height, depositAsset: null
    })
  })
