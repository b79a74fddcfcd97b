// The UtxoLedger port: what the app needs from a bitcoin-like chain (the token ledger, the social
// chain). It never holds keys: transactions are built and signed by `../txBuilder.ts` and the
// same bytes go to any implementation. Implementations: `devnet.ts` (in-process, real bitcoinjs
// transactions and blocks) and `rpcLedger.ts` (bitcoind-compatible JSON-RPC, tested against
// litecoind -regtest). Both pass test/support/utxoLedgerContract.ts.
//
// Addresses cross this port in the ledger's own format (`params`, "T…"/"M…"); an adapter whose
// node uses other version bytes converts at its edge. Amounts are bigint satoshis.
import { Context, type Either, Effect, Schema } from "effect"
import type { UtxoChainParams } from "../params.ts"

/** Limits of the port, each with its unit. */
export const ledgerLimits = {
  /** Blocks one `blocks` call returns; ask again from `nextHeight` for more. */
  blocksPageMax: 100,
  /** Addresses or scripts in one `listUnspent` call. */
  listUnspentOwnersMax: 100,
  /** UTXOs one `listUnspent` call returns (oldest first); more is an error, not a silent cut. */
  listUnspentResultsMax: 2_000,
  /** Blocks one `mine` call may produce. */
  mineBlocksMax: 2_000,
  /** Serialized transaction size accepted for testAccept/broadcast, bytes. */
  txBytesMax: 400_000
} as const

/**
 * Why a node refused a transaction, normalised across implementations. `reason` on the error
 * keeps the node's own words (litecoind: "dust", "scriptpubkey", "txn-mempool-conflict", …).
 */
export const RejectCode = Schema.Literal(
  "dust", // an output below the dust threshold
  "nonstandard-script", // an output script that is not standard (e.g. OP_RETURN data over 80 bytes)
  "multi-op-return", // more than one OP_RETURN output
  "fee-too-low", // below the minimum relay fee rate
  "double-spend", // spends an output another mempool transaction already spends
  "missing-inputs", // spends an output that does not exist or is spent in a block
  "immature-coinbase", // spends a coinbase output with fewer than `coinbaseMaturity` confirmations
  "bad-signature", // a script or signature check failed
  "already-known", // already confirmed in the chain
  "mempool-full", // the devnet's bounded mempool is full
  "invalid" // anything else: unparseable, outputs above inputs, …
)
export type RejectCode = typeof RejectCode.Type

// Errors: data with a tag, carried in the types.

export class LedgerTxRejected extends Schema.TaggedError<LedgerTxRejected>()("LedgerTxRejected", {
  txid: Schema.String,
  code: RejectCode,
  reason: Schema.String
}) {}

export class LedgerTxNotFound extends Schema.TaggedError<LedgerTxNotFound>()("LedgerTxNotFound", {
  txid: Schema.String
}) {}

/** No block at this height on the active chain (above the tip). */
export class LedgerBlockNotFound extends Schema.TaggedError<LedgerBlockNotFound>()("LedgerBlockNotFound", {
  height: Schema.Number
}) {}

export class LedgerInvalidInput extends Schema.TaggedError<LedgerInvalidInput>()("LedgerInvalidInput", {
  field: Schema.String,
  message: Schema.String
}) {}

/** Transport trouble or an answer we could not use: refused connection, timeout, bad JSON. */
export class LedgerRpcError extends Schema.TaggedError<LedgerRpcError>()("LedgerRpcError", {
  method: Schema.String,
  message: Schema.String
}) {}

/** What one broadcast can fail with. */
export type BroadcastError = LedgerInvalidInput | LedgerTxRejected | LedgerRpcError

export type LedgerError = LedgerTxRejected | LedgerTxNotFound | LedgerBlockNotFound | LedgerInvalidInput | LedgerRpcError

// Values

export interface LedgerTip {
  readonly height: number
  readonly hash: string
}

export interface LedgerUtxo {
  readonly txid: string
  readonly vout: number
  readonly value: bigint
  /** scriptPubKey of the output. */
  readonly script: Uint8Array
  /** The whole transaction that created it, hex: the builder signs with it (PSBT nonWitnessUtxo). */
  readonly prevTxHex: string
  readonly height: number
  /** tip height − height + 1. */
  readonly confirmations: number
  /** Coinbase outputs are spendable only from `params.coinbaseMaturity` confirmations on. */
  readonly coinbase: boolean
}

export interface LedgerTx {
  readonly txid: string
  readonly hex: string
  /** 0 in the mempool, 1 in the tip block, +1 per block on top. */
  readonly confirmations: number
  readonly blockHash: string | undefined
  readonly blockHeight: number | undefined
}

export interface LedgerBlock {
  readonly height: number
  readonly hash: string
  readonly prevHash: string
  /** Header timestamp, seconds. */
  readonly time: number
  /** Transactions in block order, hex; the coinbase first. */
  readonly txs: ReadonlyArray<string>
}

export interface BlocksPage {
  readonly blocks: ReadonlyArray<LedgerBlock>
  /** Where the next call should start (tip + 1 when the page reached the tip). */
  readonly nextHeight: number
  readonly tip: LedgerTip
}

export type TestAcceptResult =
  | { readonly allowed: true; readonly txid: string; readonly vsize: number; readonly fee: bigint }
  | { readonly allowed: false; readonly txid: string; readonly code: RejectCode; readonly reason: string }

/** An address (ledger format) or a raw output script. */
export type Owner = string | Uint8Array

export interface UtxoLedgerShape {
  /** The ledger-side chain rules: address format, dust, fee rate, OP_RETURN size, maturity. */
  readonly params: UtxoChainParams
  readonly tip: Effect.Effect<LedgerTip, LedgerRpcError>
  /**
   * Confirmed unspent outputs paying these addresses or scripts, as the node's UTXO set has them
   * (like `scantxoutset`): outputs of mempool transactions are not listed and outputs spent only
   * by a mempool transaction still are. Ordered by height, then txid and vout.
   */
  readonly listUnspent: (owners: ReadonlyArray<Owner>) => Effect.Effect<ReadonlyArray<LedgerUtxo>, LedgerInvalidInput | LedgerRpcError>
  readonly getTx: (txid: string) => Effect.Effect<LedgerTx, LedgerInvalidInput | LedgerTxNotFound | LedgerRpcError>
  /** Would the mempool take it? A refusal is a value here, not an error. */
  readonly testAccept: (hex: string) => Effect.Effect<TestAcceptResult, LedgerInvalidInput | LedgerRpcError>
  /**
   * Sends the transaction; returns its txid, always equal to the txid computed locally. Sending a
   * transaction already in the mempool again succeeds; one already in a block is `already-known`.
   */
  readonly broadcast: (hex: string) => Effect.Effect<string, LedgerInvalidInput | LedgerTxRejected | LedgerRpcError>
  /**
   * `broadcast` of each, in this order (a child after its parent is taken), each with its own
   * answer; never fails as a whole. An implementation may send them together: rpcLedger puts every
   * broadcast waiting at once into one JSON-RPC batch (issue 22: one HTTP request per trade leg
   * was most of the node's ledger cost).
   */
  readonly broadcastMany: (hexes: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Either.Either<string, BroadcastError>>>
  /** Blocks from `fromHeight` up to the tip, at most `limit` (≤ blocksPageMax). The indexer feed. */
  readonly blocks: (fromHeight: number, limit?: number) => Effect.Effect<BlocksPage, LedgerInvalidInput | LedgerRpcError>
  /**
   * The block at `height` on the active chain, one block of the indexer feed. Above the tip it is
   * LedgerBlockNotFound, so a poller can ask for tip + 1 until it appears.
   */
  readonly blockAt: (height: number) => Effect.Effect<LedgerBlock, LedgerInvalidInput | LedgerBlockNotFound | LedgerRpcError>
  /** Devnet and regtest only: mines `n` blocks paying their coinbase to `toAddress`; block hashes. */
  readonly mine: (n: number, toAddress: string) => Effect.Effect<ReadonlyArray<string>, LedgerInvalidInput | LedgerRpcError>
}

export class UtxoLedger extends Context.Tag("shardline/UtxoLedger")<UtxoLedger, UtxoLedgerShape>() {}

/** Total of a list of UTXOs. */
export const sumValues = (utxos: ReadonlyArray<{ readonly value: bigint }>): bigint => utxos.reduce((n, u) => n + u.value, 0n)

/** Outputs that may be spent in the next block: coinbase outputs need `coinbaseMaturity` confirmations. */
export const spendable = <U extends LedgerUtxo>(utxos: ReadonlyArray<U>, params: UtxoChainParams): ReadonlyArray<U> =>
  utxos.filter((u) => !u.coinbase || u.confirmations >= params.coinbaseMaturity)

/** Validates the arguments every implementation checks the same way. */
export const checkPage = (fromHeight: number, limit: number | undefined): Effect.Effect<number, LedgerInvalidInput> => {
  const max = limit ?? ledgerLimits.blocksPageMax
  if (!Number.isInteger(fromHeight) || fromHeight < 0) return Effect.fail(new LedgerInvalidInput({ field: "fromHeight", message: `must be a non-negative integer, got ${fromHeight}` }))
  if (!Number.isInteger(max) || max < 1 || max > ledgerLimits.blocksPageMax) {
    return Effect.fail(new LedgerInvalidInput({ field: "limit", message: `must be an integer in 1..${ledgerLimits.blocksPageMax}, got ${max}` }))
  }
  return Effect.succeed(max)
}

export const checkHeight = (height: number): Effect.Effect<number, LedgerInvalidInput> =>
  Number.isInteger(height) && height >= 0
    ? Effect.succeed(height)
    : Effect.fail(new LedgerInvalidInput({ field: "height", message: `must be a non-negative integer, got ${height}` }))

export const checkMine = (n: number): Effect.Effect<number, LedgerInvalidInput> =>
  Number.isInteger(n) && n >= 1 && n <= ledgerLimits.mineBlocksMax
    ? Effect.succeed(n)
    : Effect.fail(new LedgerInvalidInput({ field: "n", message: `must be an integer in 1..${ledgerLimits.mineBlocksMax}, got ${n}` }))

const TXID = /^[0-9a-f]{64}$/

export const checkTxid = (txid: string): Effect.Effect<string, LedgerInvalidInput> =>
  TXID.test(txid) ? Effect.succeed(txid) : Effect.fail(new LedgerInvalidInput({ field: "txid", message: "must be 64 lowercase hex characters" }))
