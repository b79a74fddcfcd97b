// The refund rules of mint and wrap deposits, pure (docs/desk-orders.md, "Refund rule"). A deposit
// of another amount than ordered, or one confirmed after the order expired, goes back in full:
//
// - mint (a stablecoin at the order's own EVM address): to the order's `refundAddress` when the
//   request gave one (an EVM address, EIP-55 checked at creation), else to the sender of the
//   deposit (`from` of its Transfer log). The address holds no gas: the EVM hot wallet first tops
//   it up (`refund_gas`), then the address itself sends the whole deposit back (`refund`); both
//   legs are recorded before they are broadcast.
// - wrap (ETH at the order's own EVM address): the deposit's ETH goes back from that address, less
//   its transfer's gas at most, to the refund address, else the deposit's sender (as a mint).
// - wrap (BTC/LTC at the order's own address): the deposit's coins at that address go to the
//   order's `refundAddress` (checked for the coin's network at creation) less the network fee at
//   the chain's minimum relay rate; without a refundAddress the order ends `failed` for an
//   operator: in UTXO land there is no "sender" to return to (inputs may be anyone's, an
//   exchange's pooled wallet), so the desk does not guess one.
// - cash-out, redeem: an Omni send back to the refund address (that address always exists).
import { evmChainNames } from "../../chain/evm/chains.ts"
import type { DeskOrderKind } from "./deskOrderState.ts"

/**
 * Whether a mismatched or late deposit of an order can be returned automatically: a wrap on a
 * UTXO chain (BTC, LTC) only with a refund address; an ETH wrap, like a mint, always (its
 * deposit's sender is an account).
 */
export const refundable = (kind: DeskOrderKind, refundAddress: string | null, chain: string | null = null): boolean =>
  kind !== "wrap" || refundAddress !== null || (chain !== null && (evmChainNames as ReadonlyArray<string>).includes(chain))

/**
 * What an ETH wrap refund pays: the deposit less the most its transfer's gas can cost (gas limit
 * × max fee per gas); undefined when nothing would be left.
 */
export const ethRefundValue = (deposit: bigint, feeBudgetWei: bigint): bigint | undefined =>
  deposit > feeBudgetWei ? deposit - feeBudgetWei : undefined

/** Why an order whose deposit must go back ends `failed` instead. */
export const noRefundAddressReason = (kind: DeskOrderKind): string =>
  kind === "wrap"
    ? "the coin deposit was not the ordered amount (or came late) and the order named no refundAddress: the desk does not guess a sender on a UTXO chain; an operator returns it"
    : "the deposit was not the ordered amount (or came late) and there is no address to return it to: an operator returns it"

const ZERO_ADDRESS = /^0x0{40}$/

/**
 * Where a mint's stablecoin goes back: the order's refund address, else the deposit's sender;
 * undefined when the "sender" is the zero address (tokens minted straight to the order's address:
 * nobody to return them to, an operator looks).
 */
export const mintRefundTo = (refundAddress: string | null, depositSender: string): { readonly to: string; readonly source: "refundAddress" | "sender" } | undefined =>
  refundAddress !== null ? { to: refundAddress, source: "refundAddress" } : ZERO_ADDRESS.test(depositSender) ? undefined : { to: depositSender, source: "sender" }

/**
 * Wei the hot wallet sends a deposit address so it can pay for its refund transfer: twice the
 * fee the transfer would cost now (room for the fee rising before it is mined), less what the
 * address already holds; 0 when it holds enough.
 */
export const gasTopUp = (gas: bigint, maxFeePerGas: bigint, balance: bigint): bigint => {
  const need = gas * maxFeePerGas * 2n
  return balance >= need ? 0n : need - balance
}

/** vbytes of a P2PKH spend of `inputs` coins to one P2PKH output, rounded up (a signature is 71-73 bytes). */
export const p2pkhSweepVsize = (inputs: number): bigint => 10n + 149n * BigInt(inputs) + 34n

/**
 * What a wrap refund pays the refund address: the deposit's coins at the order's address less
 * the network fee (`p2pkhSweepVsize` × rate); undefined when that would be below dust.
 */
export const coinRefundValue = (total: bigint, inputs: number, feeRateSatPerVb: bigint, dustSats: bigint): bigint | undefined => {
  const value = total - p2pkhSweepVsize(inputs) * feeRateSatPerVb
  return value >= dustSats ? value : undefined
}
