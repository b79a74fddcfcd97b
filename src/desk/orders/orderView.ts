// An order row as the wire shows it (spec: "Cash-out order response" and "poll response"):
// amounts as exact decimals in their asset's unit, every txid under its own name.
import { Either } from "effect"
import type { CashoutOrder } from "../../../schemas/desk/cashout.ts"
import type { EvmChain } from "../../chain/evm/chains.ts"
import type { TokenSymbol } from "../../chain/evm/tokenContracts.ts"
import { formatAmount } from "../../chain/units.ts"
import type { Milestone } from "./deskOrderState.ts"
import type { OrderRow } from "./orderStore.ts"

/** Decimals of the deposit asset (the desk's Omni tokens: 8). */
export const DEPOSIT_DECIMALS = 8

export const decimal = (base: string | bigint, decimals: number): string => Either.getOrThrow(formatAmount(BigInt(base), decimals))

/** Decimals of a wrap's native coin: BTC and LTC 8 (as the wrapped tokens), ETH 18 (wei). */
export const coinDecimals = (chain: string | null): number => (chain === "ethereum" ? 18 : DEPOSIT_DECIMALS)

/** The ERC-20 an order takes or pays, if any: a mint's stablecoin; the USDC of a cash-out or redeem. */
export const orderErc20 = (r: OrderRow): { readonly chain: EvmChain; readonly symbol: TokenSymbol } | undefined =>
  r.kind === "mint"
    ? { chain: r.chain as EvmChain, symbol: (r.deposit_asset ?? "USDC") as TokenSymbol }
    : r.kind === "cashout" || r.kind === "redeem"
    ? { chain: (r.chain ?? "ethereum") as EvmChain, symbol: "USDC" }
    : undefined

/**
 * Decimals of an order's deposit and payout: a mint takes a stablecoin and grants the token; a
 * wrap takes the native coin and grants the token; an unwrap takes the token and pays the native
 * coin; cash-out and redeem take the token and pay USDC. `erc20Decimals`: the decimals of the
 * order's ERC-20 (`orderErc20`), as its contract says (orderDecimals.ts reads them).
 */
export const orderDecimals = (r: OrderRow, erc20Decimals: number): { readonly deposit: number; readonly payout: number } =>
  r.kind === "mint"
    ? { deposit: erc20Decimals, payout: DEPOSIT_DECIMALS }
    : r.kind === "wrap"
    ? { deposit: coinDecimals(r.chain), payout: DEPOSIT_DECIMALS }
    : r.kind === "unwrap"
    ? { deposit: DEPOSIT_DECIMALS, payout: coinDecimals(r.chain) }
    : { deposit: DEPOSIT_DECIMALS, payout: erc20Decimals }

/** `d`: the order's decimals (orderDecimals). */
export const cashoutView = (r: OrderRow, propertyId: number | null, d: { readonly deposit: number; readonly payout: number }): CashoutOrder => {
  // A mint or a wrap pays out by granting the token: that payout is its mint.
  const grants = r.kind === "mint" || r.kind === "wrap"
  const txids = {
    depositTxid: r.deposit_txid,
    mintTxid: grants ? r.payout_txid : null,
    burnTxid: r.burn_txid,
    payoutTxid: grants ? null : r.payout_txid,
    refundTxid: r.refund_txid
  }
  return {
    id: r.id,
    shortRef: r.short_ref,
    reference: r.reference,
    status: r.status,
    depositAddress: r.deposit_address,
    address: r.deposit_address,
    ledgerDepositAddress: r.deposit_address,
    sendTo: r.deposit_address,
    asset: r.asset,
    kind: r.kind as CashoutOrder["kind"],
    network: r.kind === "mint"
      ? `${r.chain} (${r.deposit_asset} ERC-20)`
      : r.kind === "wrap"
      ? `${r.chain} (native coin)`
      : `token ledger (Omni property ${propertyId ?? "not issued"})`,
    memo: null,
    chain: r.chain ?? "",
    amount: decimal(r.amount, d.deposit),
    amountReceived: r.deposit_amount === null ? null : decimal(r.deposit_amount, d.deposit),
    fee: decimal(r.fee, d.deposit),
    feeBps: r.fee_bps,
    payoutAmount: decimal(r.payout, d.payout),
    payoutAddress: r.payout_address ?? "",
    refundAddress: r.refund_address ?? "",
    confirmations: r.deposit_confirmations,
    requiredConfirmations: r.required_confirmations,
    expiresAt: new Date(r.expires_at).toISOString(),
    createdAt: new Date(r.created_at).toISOString(),
    txids,
    ...txids,
    failure: r.failure
  }
}

/** What each milestone says to a partner. */
export const milestoneMessage: Record<Milestone, string> = {
  deposit_seen: "The deposit is on its chain, waiting for confirmations.",
  deposit_confirmed: "The deposit has its confirmations.",
  burned: "The received token's burn was sent.",
  payout_sent: "The payout was sent.",
  refund_sent: "The deposit did not match the order (or came after expiry); its refund was sent.",
  expired: "No deposit came within the order's window.",
  failed: "A leg was refused; an operator is looking."
}
