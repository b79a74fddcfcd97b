// The legs of a mint's and a wrap's automatic refund (the rules: refunds.ts), each recorded in
// desk_order_legs BEFORE it is broadcast; a recorded leg is only ever sent again with its bytes.
//
// Mint: `refund_gas` (native coin from the EVM hot wallet to the order's address, only when the
// address cannot pay the transfer's gas) must be mined before `refund` (the stablecoin back,
// signed by the order address's key, its fee capped to what the address holds) is signed.
// EVM legs choose their nonce under the cross-node advisory lock (nonceLock.ts).
// Wrap (BTC, LTC): `refund` spends the deposit's own outputs at the order's address to the refund
// address, less the network fee; later payments to that address are not touched (an order is one
// deposit). Wrap (ETH): `refund` sends the deposit's ETH back from the order's address, less the
// transfer's gas at most, to the refund address or else the deposit's sender (as a mint's).
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either } from "effect"
import { encodeFunctionData, erc20Abi, type Address } from "viem"
import type { EvmChain, EvmLedger, EvmLedgersShape } from "../../chain/evm/EvmLedger.ts"
import type { CoinLedgersShape } from "../../chain/ledger/CoinLedgers.ts"
import { tokenContractAddress } from "../../chain/evm/tokenAddress.ts"
import type { TokenSymbol } from "../../chain/evm/tokenContracts.ts"
import type { UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { type CoinChain, coinChainNames } from "../../chain/params.ts"
import { addressScript, buildSend, type Utxo } from "../../chain/txBuilder.ts"
import type { AppConfigShape } from "../../platform/Config.ts"
import type { DeskWalletsShape } from "../wallets/DeskWallets.ts"
import { deferred, ensureEvmSent, LegDeferred, type LegRow, readLeg, recordEvmLeg, recordLeg } from "./legs.ts"
import { legNonceGuard } from "./nonceLock.ts"
import type { OrderRow } from "./orderStore.ts"
import { coinRefundValue, ethRefundValue, gasTopUp, mintRefundTo, noRefundAddressReason } from "./refunds.ts"

/** Where a refund stands after one look: its leg recorded (txid), still waiting (gas top-up in flight), or refused for good. */
export type RefundStep =
  | { readonly _tag: "Recorded"; readonly txid: string }
  | { readonly _tag: "Waiting" }
  | { readonly _tag: "Refused"; readonly reason: string }

const waiting: RefundStep = { _tag: "Waiting" }


/** The key of the order's own deposit address on its chain (the desk's HD seed holds it). */
const orderKey = (wallets: DeskWalletsShape, row: OrderRow, chain: EvmChain | CoinChain) =>
  Effect.map(wallets.depositAddress({ chain, purpose: "order", owner: row.id, memberId: row.member_id }), (d) => wallets.depositKey(chain, d.index))

/**
 * The block the order's deposit is mined in, asked of the chain by its hash: a refund reads only
 * that block for the deposit's sender. (Reading from the order's start read at most one
 * `transfers` page, 2,000 blocks, so a late deposit's sender was never found; and an ETH wrap read
 * every block since the order, one request each.)
 */
const depositBlock = (l: EvmLedger, row: OrderRow) =>
  Effect.gen(function*() {
    if (row.deposit_txid === null) return yield* new LegDeferred({ message: "refund: the order has no deposit" })
    const status = yield* l.txStatus(row.deposit_txid).pipe(
      Effect.catchTags({ EvmTxNotFound: () => Effect.succeed(undefined), EvmTxFailed: () => Effect.succeed(undefined) }))
    if (status === undefined || status.kind !== "mined") return yield* new LegDeferred({ message: `refund: deposit ${row.deposit_txid} is not in a block` })
    return status.blockNumber
  })

/** `from` of the mint's deposit transfer (its Transfer log to the order's address). */
const depositSender = (l: EvmLedger, token: Address, row: OrderRow) =>
  Effect.gen(function*() {
    const block = yield* depositBlock(l, row)
    const scan = yield* l.transfers(token, block, block, { to: [row.deposit_address] })
    const log = scan.logs.find((x) => x.txHash.toLowerCase() === row.deposit_txid?.toLowerCase())
    if (log === undefined) return yield* new LegDeferred({ message: `refund: deposit ${row.deposit_txid} not found in block ${block}` })
    return log.from
  })

/** An EVM refund already recorded: followed (sent again with its bytes if the chain lost it). */
const recordedEvmRefund = (row: OrderRow, l: EvmLedger) =>
  Effect.gen(function*() {
    const known = yield* readLeg(row.id, "refund")
    if (known === undefined) return undefined
    yield* ensureEvmSent(row.id, known, l)
    return { _tag: "Recorded", txid: known.txid } satisfies RefundStep as RefundStep
  })

/** A mint's refund: the gas top-up first (if needed), then the stablecoin back from the order's address. */
export const evmRefund = (row: OrderRow, amount: bigint, l: EvmLedger, config: AppConfigShape, wallets: DeskWalletsShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const known = yield* recordedEvmRefund(row, l)
    if (known !== undefined) return known
    const token = tokenContractAddress(config.evmTokenContracts, l, (row.deposit_asset ?? "USDC") as TokenSymbol)
    const key = yield* orderKey(wallets, row, l.chain)
    const target = mintRefundTo(row.refund_address, yield* depositSender(l, token, row))
    if (target === undefined) return { _tag: "Refused", reason: "the deposit was minted to the order's address (no sender) and the order has no refundAddress: an operator returns it" } satisfies RefundStep
    const { to } = target
    const data = encodeFunctionData({ abi: erc20Abi, functionName: "transfer", args: [to as Address, amount] })
    const guard = legNonceGuard(sql, l.chain)

    const gas = yield* readLeg(row.id, "refund_gas")
    if (gas === undefined) {
      const estimate = yield* l.estimateSend({ from: key.address, to: token, data }).pipe(Effect.mapError(deferred("refund: gas estimate")))
      const top = gasTopUp(estimate.gas, estimate.maxFeePerGas, yield* l.nativeBalance(key.address).pipe(Effect.mapError(deferred("refund: balance"))))
      if (top > 0n) {
        yield* l.sendRecorded({ to: key.address, value: top }, recordEvmLeg(sql, row.id, "refund_gas", l.chain), guard).pipe(Effect.mapError(deferred("refund: gas top-up")))
        return waiting
      }
    } else {
      const status = yield* ensureEvmSent(row.id, gas, l)
      if (status === "failed") return { _tag: "Refused", reason: `refund gas top-up ${gas.txid} reverted` } satisfies RefundStep
      if (status !== "mined") return waiting
    }
    const budget = yield* l.nativeBalance(key.address).pipe(Effect.mapError(deferred("refund: balance")))
    const hash = yield* l.sendRecorded({ to: token, data, signerKey: key.privateKey, feeBudgetWei: budget }, recordEvmLeg(sql, row.id, "refund", l.chain), guard)
      .pipe(Effect.mapError(deferred("refund")))
    return { _tag: "Recorded", txid: hash } satisfies RefundStep as RefundStep
  })

/** Confirmations of a recorded coin leg; one the chain does not know is sent again with its bytes. */
export const ensureCoinSent = (row: LegRow, coin: UtxoLedgerShape) =>
  Effect.gen(function*() {
    const known = yield* coin.getTx(row.txid).pipe(
      Effect.map((tx) => tx.confirmations),
      Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(undefined)),
      Effect.mapError(deferred(`${row.leg}: ${row.chain}`))
    )
    if (known !== undefined) return known
    yield* coin.broadcast(row.raw).pipe(
      Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed(row.txid) : Effect.fail(e))),
      Effect.mapError(deferred(`${row.leg}: broadcast on ${row.chain}`))
    )
    return 0
  })

/** A wrap's refund: the deposit's outputs at the order's address, less the network fee, to the refund address. */
export const coinRefund = (row: OrderRow, coin: UtxoLedgerShape, wallets: DeskWalletsShape) =>
  Effect.gen(function*() {
    const known = yield* readLeg(row.id, "refund")
    if (known !== undefined) {
      yield* ensureCoinSent(known, coin)
      return { _tag: "Recorded", txid: known.txid } satisfies RefundStep as RefundStep
    }
    if (row.refund_address === null) return { _tag: "Refused", reason: noRefundAddressReason("wrap") } satisfies RefundStep
    if (row.deposit_txid === null) return yield* new LegDeferred({ message: "refund: the deposit is not known yet" })
    const params = coin.params
    const key = yield* orderKey(wallets, row, row.chain as CoinChain)
    const deposit = yield* coin.getTx(row.deposit_txid).pipe(Effect.mapError(deferred("refund: deposit")))
    const target = Buffer.from(Either.getOrThrow(addressScript(row.deposit_address, params)))
    const inputs: Array<Utxo> = Transaction.fromHex(deposit.hex).outs.flatMap((o, vout) =>
      target.equals(Buffer.from(o.script)) ? [{ txid: row.deposit_txid!, vout, value: BigInt(o.value), script: Uint8Array.from(o.script), prevTxHex: deposit.hex }] : [])
    const total = inputs.reduce((n, u) => n + u.value, 0n)
    const value = coinRefundValue(total, inputs.length, params.minFeeRateSatPerVb, params.dustSats)
    if (value === undefined) return { _tag: "Refused", reason: `the deposit (${total} sats) does not cover the network fee of its refund` } satisfies RefundStep
    const built = buildSend(params, { inputs, signer: { privateKey: key.privateKey }, changeAddress: row.refund_address, outputs: [{ address: row.refund_address, value }] })
    if (Either.isLeft(built)) return { _tag: "Refused", reason: `refund: ${built.left.message}` } satisfies RefundStep
    const leg = yield* recordLeg(row.id, { leg: "refund", chain: row.chain ?? "", txid: built.right.txid, raw: built.right.hex, nonce: null })
    yield* ensureCoinSent(leg, coin)
    return { _tag: "Recorded", txid: leg.txid } satisfies RefundStep as RefundStep
  })

export interface RefundChains {
  readonly evm: EvmLedgersShape
  readonly coins: CoinLedgersShape
  readonly wallets: DeskWalletsShape
  readonly config: AppConfigShape
}

/** `from` of an ETH wrap's deposit transaction (read again from the deposit's block). */
const nativeDepositSender = (l: EvmLedger, row: OrderRow) =>
  Effect.gen(function*() {
    const block = yield* depositBlock(l, row)
    const { transfers } = yield* l.nativeTransfers(block, block, [row.deposit_address])
    const t = transfers.find((x) => x.txHash.toLowerCase() === row.deposit_txid?.toLowerCase())
    if (t === undefined) return yield* new LegDeferred({ message: `refund: deposit ${row.deposit_txid} not found in block ${block}` })
    return t.from
  })

/**
 * An ETH wrap's refund: the deposit's wei back from the order's own address (it pays its own gas:
 * what it received is ETH) to the refund address, else the deposit's sender. The gas is taken
 * from the deposit at its most (gas limit × max fee per gas, the fee budget the signed
 * transaction may not exceed); what the chain charges less stays at the address.
 */
export const ethRefund = (row: OrderRow, amount: bigint, l: EvmLedger, wallets: DeskWalletsShape) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const known = yield* recordedEvmRefund(row, l)
    if (known !== undefined) return known
    const target = mintRefundTo(row.refund_address, yield* nativeDepositSender(l, row).pipe(Effect.mapError(deferred("refund: deposit"))))
    if (target === undefined) return { _tag: "Refused", reason: "the deposit has no sender to return it to and the order has no refundAddress: an operator returns it" } satisfies RefundStep
    const key = yield* orderKey(wallets, row, l.chain)
    const estimate = yield* l.estimateSend({ from: key.address, to: target.to }).pipe(Effect.mapError(deferred("refund: gas estimate")))
    const feeBudgetWei = estimate.gas * estimate.maxFeePerGas
    const value = ethRefundValue(amount, feeBudgetWei)
    if (value === undefined) return { _tag: "Refused", reason: `the deposit (${amount} wei) does not cover the gas of its refund (${feeBudgetWei} wei)` } satisfies RefundStep
    const hash = yield* l.sendRecorded({ to: target.to, value, signerKey: key.privateKey, feeBudgetWei }, recordEvmLeg(sql, row.id, "refund", l.chain), legNonceGuard(sql, l.chain))
      .pipe(Effect.mapError(deferred("refund")))
    return { _tag: "Recorded", txid: hash } satisfies RefundStep as RefundStep
  })

/** Refunds on an EVM chain: a mint's stablecoin, an ETH wrap's ETH. */
const isEvmRefund = (row: OrderRow): boolean => row.kind === "mint" || (row.kind === "wrap" && !isCoinChain(row.chain))

const evmRefundOf = (row: OrderRow, amount: bigint, l: EvmLedger, chains: RefundChains) =>
  row.kind === "mint" ? evmRefund(row, amount, l, chains.config, chains.wallets) : ethRefund(row, amount, l, chains.wallets)

/** The refund leg of a mint or wrap order (other kinds refund on the ledger, in the entity). */
export const refundLeg = (row: OrderRow, amount: bigint, chains: RefundChains) =>
  isEvmRefund(row)
    ? Effect.flatMap(Effect.mapError(chains.evm.get(row.chain as EvmChain), deferred("refund")), (l) => evmRefundOf(row, amount, l, chains))
    : isCoinChain(row.chain)
    ? coinRefund(row, chains.coins.get(row.chain), chains.wallets)
    : Effect.succeed<RefundStep>({ _tag: "Refused", reason: `refunds of ${row.chain ?? "this chain"}'s deposits are not automated: an operator returns it` })

const isCoinChain = (chain: string | null): chain is CoinChain => (coinChainNames as ReadonlyArray<string | null>).includes(chain)

/**
 * Whether a mint's or wrap's recorded refund `txid` is in a block. An EVM refund whose bytes can
 * never be mined (ensureEvmSent forgot them) is signed again and the order's refund txid follows.
 */
export const followRefund = (row: OrderRow, txid: string, amount: bigint, chains: RefundChains) =>
  Effect.gen(function*() {
    if (!isEvmRefund(row)) {
      const leg = yield* readLeg(row.id, "refund")
      if (leg === undefined || !isCoinChain(row.chain)) return "pending" as const
      return (yield* ensureCoinSent(leg, chains.coins.get(row.chain))) >= 1 ? "confirmed" as const : "pending" as const
    }
    const l = yield* Effect.mapError(chains.evm.get(row.chain as EvmChain), deferred("refund"))
    const leg = yield* readLeg(row.id, "refund")
    if (leg === undefined || leg.txid !== txid) {
      const again = yield* evmRefundOf(row, amount, l, chains)
      if (again._tag === "Refused") return again
      if (again._tag === "Recorded" && again.txid !== txid) {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE desk_orders SET refund_txid = ${again.txid}, updated_at = now() WHERE id = ${row.id} AND status = 'refunding'`
      }
      return "pending" as const
    }
    const status = yield* ensureEvmSent(row.id, leg, l)
    if (status === "failed") return { _tag: "Refused", reason: `refund ${leg.txid} reverted` } satisfies RefundStep as RefundStep
    return status === "mined" ? "confirmed" as const : "pending" as const
  })
