// What a ledger needs from a node, in node terms. The devnet engine and a viem client each
// provide one; `ledger.ts` builds the port on top, so both implementations share every rule
// (validation, balance check, signing, confirmations, scan cursors) and differ only here.
import type { Effect } from "effect"
import type { Address, Hash, Hex } from "viem"
import type { EvmRpcError, EvmTxRejected, EvmUnsupported } from "../EvmLedger.ts"
import type { NativeTransfer } from "../nativeTransfers.ts"

export type CallResult = { readonly ok: true; readonly data: Hex } | { readonly ok: false; readonly reason: string }

/** Fields the hot wallet signs besides to/data; EIP-1559 on every chain we use. */
export interface TxFields {
  readonly nonce: number
  readonly gas: bigint
  readonly maxFeePerGas: bigint
  readonly maxPriorityFeePerGas: bigint
}

export type BackendTxState =
  | { readonly kind: "unknown" }
  | { readonly kind: "pending" }
  | { readonly kind: "dropped"; readonly reason: string }
  | {
    readonly kind: "mined"
    readonly blockNumber: bigint
    readonly blockHash: Hash
    readonly success: boolean
    readonly contractAddress: Address | undefined
  }

export interface RawLog {
  readonly address: Address
  readonly topics: ReadonlyArray<Hex>
  readonly data: Hex
  readonly blockNumber: bigint
  readonly blockHash: Hash
  readonly transactionHash: Hash
  readonly logIndex: number
}

export interface LogFilter {
  readonly address: Address
  /** Per position: null (any), or alternatives (OR). */
  readonly topics: ReadonlyArray<ReadonlyArray<Hex> | null>
  readonly fromBlock: bigint
  readonly toBlock: bigint
}

export interface EvmBackend {
  readonly chainId: Effect.Effect<number, EvmRpcError>
  readonly blockNumber: Effect.Effect<bigint, EvmRpcError>
  /** The native coin (wei) an account holds at the head block. */
  readonly nativeBalance: (address: Address) => Effect.Effect<bigint, EvmRpcError>
  /** eth_call on the head block, or on top of the mempool ("pending"). */
  readonly call: (
    request: { readonly from?: Address; readonly to: Address; readonly data: Hex },
    block: "latest" | "pending"
  ) => Effect.Effect<CallResult, EvmRpcError>
  /** Pending nonce, gas estimate (a dry run on the pending state: a revert is EvmTxRejected) and fees. */
  readonly prepare: (request: { readonly from: Address; readonly to: Address | undefined; readonly data: Hex; readonly value?: bigint }) => Effect.Effect<TxFields, EvmTxRejected | EvmRpcError>
  readonly sendRaw: (raw: Hex) => Effect.Effect<Hash, EvmTxRejected | EvmRpcError>
  readonly txState: (hash: Hash) => Effect.Effect<BackendTxState, EvmRpcError>
  readonly logs: (filter: LogFilter) => Effect.Effect<ReadonlyArray<RawLog>, EvmRpcError>
  /** Successful transactions of blocks `fromBlock..toBlock` paying native coin to one of `to`, in chain order. */
  readonly nativeTransfers: (fromBlock: bigint, toBlock: bigint, to: ReadonlyArray<Address>) => Effect.Effect<ReadonlyArray<NativeTransfer>, EvmRpcError>
  readonly mine: (blocks: number) => Effect.Effect<void, EvmUnsupported | EvmRpcError>
}
