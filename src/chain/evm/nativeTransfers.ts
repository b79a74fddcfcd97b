// Native-coin transfers (ETH, BNB) on an EVM chain: what the desk needs to see an ETH wrap's
// deposit and to pay an ETH unwrap. A native transfer leaves no log, so deposits are found by
// reading blocks: every successful transaction whose `to` is a watched address and whose value
// is above zero. Transfers made inside a contract call (an exchange's batched withdrawal, a
// smart-contract wallet) have no transaction of their own and are not seen: documented in
// docs/desk-orders.md. Used by both backends (devnet engine, viem) through `EvmBackend`.
import type { Address, Hash } from "viem"

/** One transaction paying native coin to a watched address, mined and successful. */
export interface NativeTransfer {
  readonly txHash: Hash
  readonly from: Address
  readonly to: Address
  /** Wei. */
  readonly value: bigint
  readonly blockNumber: bigint
}

/** Blocks one `nativeTransfers` call reads at most: each block is read whole. */
export const nativeScanBlocksMax = 500n

/** A block's transactions as a backend reads them, before the filter. */
export interface BlockTx {
  readonly hash: Hash
  readonly from: Address
  readonly to: Address | null
  readonly value: bigint
}

/** The transactions of a block paying one of `to` (lowercase) something; in block order. */
export const paying = (txs: ReadonlyArray<BlockTx>, to: ReadonlySet<string>): ReadonlyArray<BlockTx> =>
  txs.filter((t) => t.to !== null && t.value > 0n && to.has(t.to.toLowerCase()))
