// An unwrap's native-coin payout on BTC or LTC, from the desk's HOT vault on that chain
// (m/44'/{0|2}'/3'/0/0). The payout transaction is signed and RECORDED in desk_order_legs before
// it is broadcast; a restart only sends the recorded bytes again, so an order is paid once.
//
// Coin selection across orders and nodes: every payout of one hot vault picks its coins and
// records its transaction under one Postgres advisory lock (per chain, held by the
// transaction), and never picks a coin that an already recorded payout of that chain spends
// (the node still lists a coin as unspent until the spending transaction is in a block). So two
// payouts, of different orders, on different nodes, never spend the same coin, and a payout's
// coins are never given to another one. Only confirmed coins are taken: the change of a payout
// is spendable from its first block on.
//
// The network fee is the hot vault's, on top of the payout: the customer receives exactly
// amount − unwrap fee (the desk's unwrap fee pays the network fee).
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either } from "effect"
import type { UtxoLedgerShape } from "../../chain/ledger/UtxoLedger.ts"
import { spendable } from "../../chain/ledger/UtxoLedger.ts"
import type { CoinChain, UtxoChainParams } from "../../chain/params.ts"
import { buildSend, type Utxo } from "../../chain/txBuilder.ts"
import type { DeskKey } from "../wallets/hdTree.ts"
import { LegDeferred, type LegRow, readLeg, recordLeg } from "./legs.ts"

/** Inputs one payout spends at most (bounds the transaction; a vault of dust needs consolidating). */
export const PAYOUT_INPUTS_MAX = 50

/** Virtual bytes of a P2PKH transaction: 10 fixed, 148 per input, 34 per output (payout and change). */
const vbytes = (inputs: number): bigint => BigInt(10 + 148 * inputs + 34 * 2)

const outpoint = (txid: string, vout: number) => `${txid}:${vout}`

/** The outpoints a signed transaction spends. */
export const spentBy = (raw: string): ReadonlyArray<string> =>
  Transaction.fromHex(raw).ins.map((i) => outpoint(Buffer.from(i.hash).reverse().toString("hex"), i.index))

/**
 * Coins for a payout of `amount`, pure: largest first, skipping `taken`, until the amount and the
 * fee of the transaction they make are covered; undefined when the coins do not reach.
 */
export const pickCoins = <U extends Utxo>(coins: ReadonlyArray<U>, taken: ReadonlySet<string>, amount: bigint, params: UtxoChainParams): ReadonlyArray<U> | undefined => {
  const free = coins.filter((c) => !taken.has(outpoint(c.txid, c.vout))).sort((a, b) => (a.value === b.value ? 0 : a.value > b.value ? -1 : 1))
  const chosen: Array<U> = []
  let total = 0n
  for (const c of free.slice(0, PAYOUT_INPUTS_MAX)) {
    chosen.push(c)
    total += c.value
    if (total >= amount + vbytes(chosen.length) * params.minFeeRateSatPerVb) return chosen
  }
  return undefined
}

/** The advisory lock of a chain's hot vault (one 64-bit key per chain, from its name). */
const lockName = (chain: CoinChain) => `shardline desk hot vault ${chain}`

/**
 * The payout of `orderId`: recorded once (coins picked under the vault's lock), then sent; sent
 * again with the same bytes while the chain does not have it. Its txid.
 */
export const coinPayoutLeg = (
  orderId: string,
  chain: CoinChain,
  coin: UtxoLedgerShape,
  vault: DeskKey,
  to: string,
  amount: bigint,
  /** Where the chain has a faucet (a devnet): asks it for the vault's shortfall (hotVaultTopUp.ts). */
  topUp?: (vault: string, shortfall: bigint) => Effect.Effect<void>
) =>
  Effect.gen(function*() {
    let row = yield* readLeg(orderId, "payout")
    if (row === undefined) {
      const sql = yield* SqlClient.SqlClient
      row = yield* Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtextextended(${lockName(chain)}, 0))`
        // Another owner of this order (a shard move) may have recorded it while this one waited.
        const again = yield* readLeg(orderId, "payout")
        if (again !== undefined) return again
        const recorded = yield* sql<{ raw: string }>`SELECT l.raw FROM desk_order_legs l JOIN desk_orders o ON o.id = l.order_id
          WHERE l.chain = ${chain} AND l.leg = 'payout' AND o.status <> 'released'`
        const taken = new Set(recorded.flatMap((r) => spentBy(r.raw)))
        const coins = spendable(yield* coin.listUnspent([vault.address]).pipe(Effect.mapError((e) => new LegDeferred({ message: `payout: ${chain} coins: ${e._tag}` }))), coin.params)
        const inputs = pickCoins(coins, taken, amount, coin.params)
        if (inputs === undefined) {
          const free = coins.filter((c) => !taken.has(outpoint(c.txid, c.vout))).reduce((n, c) => n + c.value, 0n)
          const need = amount + vbytes(PAYOUT_INPUTS_MAX) * coin.params.minFeeRateSatPerVb
          if (topUp !== undefined) yield* topUp(vault.address, need > free ? need - free : 0n)
          return yield* new LegDeferred({
            message: `payout: the ${chain} hot vault ${vault.address} has ${free} confirmed satoshis free, not enough for ${amount} and the fee; waiting (fund the hot vault, or wait for its change to confirm)`
          })
        }
        const built = buildSend(coin.params, { inputs, signer: { privateKey: vault.privateKey }, changeAddress: vault.address, outputs: [{ address: to, value: amount }] })
        if (Either.isLeft(built)) return yield* new LegDeferred({ message: `payout: ${built.left.message}` })
        return yield* recordLeg(orderId, { leg: "payout", chain, txid: built.right.txid, raw: built.right.hex, nonce: null })
      }).pipe(sql.withTransaction)
    }
    yield* ensureCoinSent(coin, row)
    return row.txid
  })

/** Confirmations of a recorded coin payout; one the chain does not have is sent again (same bytes). */
export const ensureCoinSent = (coin: UtxoLedgerShape, row: LegRow) =>
  Effect.gen(function*() {
    const known = yield* coin.getTx(row.txid).pipe(
      Effect.map((tx) => tx.confirmations),
      Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(undefined)),
      Effect.mapError((e) => new LegDeferred({ message: `payout: ${row.chain}: ${e._tag}` }))
    )
    if (known !== undefined) return known
    yield* coin.broadcast(row.raw).pipe(
      Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed(row.txid) : Effect.fail(e))),
      Effect.mapError((e) => new LegDeferred({ message: `payout ${row.txid}: broadcast on ${row.chain}: ${"reason" in e ? e.reason : e._tag}` }))
    )
    return 0
  })
