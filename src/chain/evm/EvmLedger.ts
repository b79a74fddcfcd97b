// The EvmLedger port: what the desk and settlement need from an EVM chain (ethereum, base, bsc).
// USDC-style ERC-20 payouts from the hot wallet, confirmations, and a restartable scan of
// Transfer logs by block range. Implementations: `devnet.ts` (in-process EVM) and
// `viemLedger.ts` (any JSON-RPC node through viem; tested against anvil). Both are built on the
// same core (`internal/ledger.ts`) and pass one contract suite (test/support/evmLedgerContract.ts).
//
// Inputs that come from users or config (addresses, hashes) are plain strings and are validated
// here: a bad one is an `EvmInvalidInput`, never a defect. Amounts are bigint in the token's
// smallest unit; decimals are read from the contract, never assumed.
import { Context, Effect, Schema } from "effect"
import type { Address, Hash, Hex } from "viem"
import { EvmChainName, type EvmChain } from "./chains.ts"
import type { NativeTransfer } from "./nativeTransfers.ts"
import type { NonceGuard, RecordedSendRequest } from "./nonceGuard.ts"

export { EvmChainName, evmChainNames, evmChains, type EvmChain } from "./chains.ts"

/** Limits of the port, each with its unit. */
export const evmLimits = {
  /**
   * Default blocks one `transfers` call scans (each ledger may set its own, e.g. its provider's
   * eth_getLogs limit); a longer range is cut and `nextBlock` says where to resume.
   */
  scanBlocksMax: 2_000n,
  /** Addresses in one `from`/`to` filter (they become an OR of log topics). */
  filterAddressesMax: 256,
  /** Blocks one `mine` call may produce. */
  mineBlocksMax: 10_000
} as const

// Errors: data with a tag, carried in the types.

export class EvmInvalidInput extends Schema.TaggedError<EvmInvalidInput>()("EvmInvalidInput", {
  field: Schema.String,
  value: Schema.String,
  message: Schema.String
}) {}

export class EvmInsufficientTokenBalance extends Schema.TaggedError<EvmInsufficientTokenBalance>()("EvmInsufficientTokenBalance", {
  chain: EvmChainName,
  token: Schema.String,
  holder: Schema.String,
  balance: Schema.BigIntFromSelf,
  amount: Schema.BigIntFromSelf
}) {}

/** The node (or its dry run) refused the transaction: revert on estimate, nonce, fee, funds for gas. */
export class EvmTxRejected extends Schema.TaggedError<EvmTxRejected>()("EvmTxRejected", {
  chain: EvmChainName,
  reason: Schema.String
}) {}

/** A read-only contract call failed: no contract at the address, a revert, or an undecodable answer. */
export class EvmCallFailed extends Schema.TaggedError<EvmCallFailed>()("EvmCallFailed", {
  chain: EvmChainName,
  to: Schema.String,
  function: Schema.String,
  reason: Schema.String
}) {}

export class EvmTxNotFound extends Schema.TaggedError<EvmTxNotFound>()("EvmTxNotFound", {
  chain: EvmChainName,
  hash: Schema.String
}) {}

/** The transaction will never take effect: mined but reverted, or dropped from the mempool. */
export class EvmTxFailed extends Schema.TaggedError<EvmTxFailed>()("EvmTxFailed", {
  chain: EvmChainName,
  hash: Schema.String,
  reason: Schema.String,
  blockNumber: Schema.optional(Schema.BigIntFromSelf)
}) {}

/** Transport trouble: connection refused, timeout, an answer that is not JSON-RPC. */
export class EvmRpcError extends Schema.TaggedError<EvmRpcError>()("EvmRpcError", {
  chain: EvmChainName,
  method: Schema.String,
  message: Schema.String
}) {}

/** A development-only operation (mine) on a ledger that cannot do it. */
export class EvmUnsupported extends Schema.TaggedError<EvmUnsupported>()("EvmUnsupported", {
  chain: EvmChainName,
  operation: Schema.String
}) {}

/** The node behind a ledger reports another chain id than the chain's. */
export class EvmChainMismatch extends Schema.TaggedError<EvmChainMismatch>()("EvmChainMismatch", {
  chain: EvmChainName,
  expected: Schema.Number,
  actual: Schema.Number
}) {}

export type EvmLedgerError =
  | EvmInvalidInput
  | EvmInsufficientTokenBalance
  | EvmTxRejected
  | EvmCallFailed
  | EvmTxNotFound
  | EvmTxFailed
  | EvmRpcError
  | EvmUnsupported

// Values

export interface TransferLog {
  readonly token: Address
  readonly from: Address
  readonly to: Address
  readonly value: bigint
  readonly blockNumber: bigint
  readonly blockHash: Hash
  readonly txHash: Hash
  readonly logIndex: number
}

export interface TransferFilter {
  readonly from?: string | ReadonlyArray<string>
  readonly to?: string | ReadonlyArray<string>
}

/**
 * One page of a scan. Blocks `fromBlock..toBlock` were read completely; save `nextBlock` and
 * pass it as the next `fromBlock` to resume without missing or repeating a log. `toBlock` never
 * passes the head, and a range longer than the ledger's `scanBlocksMax` is cut.
 */
export interface TransferScan {
  readonly logs: ReadonlyArray<TransferLog>
  readonly fromBlock: bigint
  readonly toBlock: bigint
  readonly nextBlock: bigint
}

export type EvmTxStatus =
  | { readonly kind: "pending" }
  | {
    readonly kind: "mined"
    readonly blockNumber: bigint
    readonly blockHash: Hash
    readonly confirmations: number
    readonly contractAddress: Address | undefined
  }

export interface EvmLedger {
  readonly chain: EvmChain
  /** The hot wallet's address (the key never leaves the ledger). */
  readonly hotWallet: Address
  /** Blocks one `transfers` call reads at most. */
  readonly scanBlocksMax: bigint
  /** Asked of the node each time. */
  readonly chainId: Effect.Effect<number, EvmRpcError>
  readonly blockNumber: Effect.Effect<bigint, EvmRpcError>
  /** `decimals()` of the token contract. */
  readonly tokenDecimals: (token: string) => Effect.Effect<number, EvmInvalidInput | EvmCallFailed | EvmRpcError>
  readonly tokenBalance: (token: string, holder: string) => Effect.Effect<bigint, EvmInvalidInput | EvmCallFailed | EvmRpcError>
  /** The chain's native coin (ETH, BNB) `holder` holds, in wei. */
  readonly nativeBalance: (holder: string) => Effect.Effect<bigint, EvmInvalidInput | EvmRpcError>
  /**
   * Pays `amount` (smallest unit) of `token` from the hot wallet to `to`: checked against the
   * balance, dry-run, signed locally, sent raw. Returns the hash (keccak of the signed bytes).
   * Sends are serialised per ledger so two payouts never take the same nonce.
   */
  readonly erc20Transfer: (
    token: string,
    to: string,
    amount: bigint
  ) => Effect.Effect<Hash, EvmInvalidInput | EvmInsufficientTokenBalance | EvmCallFailed | EvmTxRejected | EvmRpcError>
  /**
   * `erc20Transfer` whose signed bytes go to `record` before they are sent (the desk writes them
   * to Postgres): under the same per-ledger lock, so no other send takes the nonce in between.
   * A failing `record` sends nothing. A crash after `record` leaves bytes `sendRaw` sends again.
   */
  readonly erc20TransferRecorded: <E>(
    token: string,
    to: string,
    amount: bigint,
    record: (signed: SignedEvmTx) => Effect.Effect<void, E>,
    /** Cross-process nonce safety (nonceGuard.ts); without it only this process's sends are serialised. */
    guard?: NonceGuard<E>
  ) => Effect.Effect<Hash, EvmInvalidInput | EvmInsufficientTokenBalance | EvmCallFailed | EvmTxRejected | EvmRpcError | E>
  /**
   * Pays `amount` wei of the chain's native coin from the hot wallet to `to`, its signed bytes
   * and nonce going to `record` before they are sent (as `erc20TransferRecorded`; without
   * `record`, a plain payment: `devnet pay`). Checked against the pending balance, gas included.
   */
  readonly nativeTransfer: <E = never>(
    to: string,
    amount: bigint,
    record?: (signed: SignedEvmTx) => Effect.Effect<void, E>,
    /** Cross-process nonce safety (nonceGuard.ts), as for `sendRecorded`. */
    guard?: NonceGuard<E>
  ) => Effect.Effect<Hash, EvmInvalidInput | EvmInsufficientTokenBalance | EvmTxRejected | EvmRpcError | E>
  /**
   * Mined, successful transactions paying native coin to one of `to` in blocks
   * `fromBlock..toBlock` (at most `nativeScanBlocksMax` of them, never past the head), in chain
   * order; `nextBlock` says where to resume. Native deposits have no logs: blocks are read.
   */
  readonly nativeTransfers: (
    fromBlock: bigint,
    toBlock: bigint,
    to: ReadonlyArray<string>
  ) => Effect.Effect<{ readonly transfers: ReadonlyArray<NativeTransfer>; readonly nextBlock: bigint }, EvmInvalidInput | EvmRpcError>
  /**
   * A recorded send of native coin and/or calldata, from the hot wallet or from `signerKey` (a
   * deposit address's key): prepared, signed, given to `record`, then sent, like
   * `erc20TransferRecorded`. A gas top-up and a token refund from a deposit address use it.
   */
  readonly sendRecorded: <E>(
    request: RecordedSendRequest,
    record: (signed: SignedEvmTx) => Effect.Effect<void, E>,
    guard?: NonceGuard<E>
  ) => Effect.Effect<Hash, EvmInvalidInput | EvmTxRejected | EvmRpcError | E>
  /** What a send from `from` would be signed with now: gas limit (a dry run) and fees per gas, in wei. */
  readonly estimateSend: (request: { readonly from: string; readonly to: string; readonly data?: Hex }) => Effect.Effect<
    { readonly gas: bigint; readonly maxFeePerGas: bigint },
    EvmInvalidInput | EvmTxRejected | EvmRpcError
  >
  /** Sends already signed bytes (again); their hash. The node's refusal (a used nonce, say) is EvmTxRejected. */
  readonly sendRaw: (raw: Hex) => Effect.Effect<Hash, EvmTxRejected | EvmRpcError>
  /** 0 while pending, 1 in the head block, +1 per block on top. Reverted or dropped: EvmTxFailed. */
  readonly confirmations: (hash: string) => Effect.Effect<number, EvmInvalidInput | EvmTxNotFound | EvmTxFailed | EvmRpcError>
  readonly txStatus: (hash: string) => Effect.Effect<EvmTxStatus, EvmInvalidInput | EvmTxNotFound | EvmTxFailed | EvmRpcError>
  /** Transfer events of `token` in blocks `fromBlock..toBlock` (inclusive), in chain order. */
  readonly transfers: (
    token: string,
    fromBlock: bigint,
    toBlock: bigint,
    filter?: TransferFilter
  ) => Effect.Effect<TransferScan, EvmInvalidInput | EvmRpcError>
  /**
   * Lower-level send of calldata from the hot wallet (a deployment when `to` is absent); what
   * `erc20Transfer` and the devnet helpers use. Domain code pays with `erc20Transfer`.
   */
  readonly sendTransaction: (request: { readonly to?: string; readonly data: Hex }) => Effect.Effect<Hash, EvmInvalidInput | EvmTxRejected | EvmRpcError>
  /** Devnet and anvil only: mines `blocks` blocks now. */
  readonly mine: (blocks: number) => Effect.Effect<void, EvmInvalidInput | EvmUnsupported | EvmRpcError>
}

/** A signed transaction (of the hot wallet, or of `sendRecorded`'s signer): its hash (keccak of `raw`), bytes, nonce and sender. */
export interface SignedEvmTx {
  readonly hash: Hash
  readonly raw: Hex
  readonly nonce: number
  readonly from: Address
}

/** The ledgers of every chain the app runs with, built by one layer (devnet or viem). */
export interface EvmLedgersShape {
  readonly chains: ReadonlyArray<EvmChain>
  readonly get: (chain: EvmChain) => Effect.Effect<EvmLedger, EvmUnsupported>
}

export class EvmLedgers extends Context.Tag("shardline/EvmLedgers")<EvmLedgers, EvmLedgersShape>() {}

/** A registry over ledgers already built; asking for a chain it lacks is a typed error. */
export const ledgersOf = (ledgers: ReadonlyArray<EvmLedger>): EvmLedgersShape => {
  const byChain = new Map(ledgers.map((l) => [l.chain, l] as const))
  return EvmLedgers.of({
    chains: ledgers.map((l) => l.chain),
    get: (chain) => {
      const ledger = byChain.get(chain)
      return ledger === undefined ? Effect.fail(new EvmUnsupported({ chain, operation: "ledger not configured" })) : Effect.succeed(ledger)
    }
  })
}
