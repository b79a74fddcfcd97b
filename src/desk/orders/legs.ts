// An order's legs on the chains, each recorded BEFORE it is broadcast (desk_order_legs): a
// ledger leg's signed bytes, an EVM payout's signed bytes and nonce. A leg already recorded is
// never made again, only sent again with the same bytes, so a kill -9 at any point neither pays
// twice nor loses a payout.
//
// Ledger legs spend one fresh coin the fee sponsor pays the sending address for that leg alone
// (its funding is journaled by the sponsor before broadcast), so legs of different orders never
// compete for coins and the sender (vin[0], Omni's rule) is the address itself. A leg whose Omni
// validity depends on an earlier transaction (a sweep or refund on its deposit, a burn on its
// sweep) also spends that transaction's output to the sender, so no miner can put the leg before
// it: after a reorg, consensus order is Omni order (docs/desk-orders.md, "Reorgs").
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either, Schema } from "effect"
import type { Hex } from "viem"
import type { SqlError } from "@effect/sql/SqlError"
import type { EvmLedger, SignedEvmTx } from "../../chain/evm/EvmLedger.ts"
import type { NonceGuard } from "../../chain/evm/nonceGuard.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import type { OmniPayload } from "../../chain/omni/codec.ts"
import type { OmniTxRecord } from "../../chain/omni/indexer.ts"
import { addressScript, buildOmni, type Utxo } from "../../chain/txBuilder.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { legNonceGuard } from "./nonceLock.ts"

/** `refund_gas`: the native coin a mint refund's deposit address needs to send the stablecoin back (refunds.ts). */
export type LegName = "sweep" | "burn" | "payout" | "refund" | "refund_gas"

/** A leg could not be made or sent now; the order stays where it is and tries again. */
export class LegDeferred extends Schema.TaggedError<LegDeferred>()("LegDeferred", { message: Schema.String }) {}

export interface LegRow {
  readonly leg: LegName
  readonly chain: string
  readonly txid: string
  readonly raw: string
  readonly nonce: number | null
  readonly attempt: number
}

/** Sats the sponsor pays an address for one Omni leg: dust for the reference plus the fee, with room. */
export const LEG_FLOAT_SATS = 20_000n

/** What went wrong, for the log: an EVM refusal's `reason`, else a message, else the tag. */
const describe = (e: unknown): string => {
  if (typeof e !== "object" || e === null) return String(e)
  const o = e as { readonly reason?: unknown; readonly message?: unknown; readonly _tag?: unknown }
  return o.reason !== undefined ? String(o.reason) : typeof o.message === "string" && o.message !== "" ? o.message : String(o._tag ?? e)
}

export const deferred = (what: string) => (e: unknown) => new LegDeferred({ message: `${what}: ${describe(e)}` })

export const readLeg = (orderId: string, leg: LegName) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<LegRow>`SELECT leg, chain, txid, raw, nonce, attempt FROM desk_order_legs WHERE order_id = ${orderId} AND leg = ${leg}`, (r) => r[0]))

/**
 * Every ledger leg an order recorded, oldest first: a leg spends an output of the one before it
 * (a burn its sweep), so one lost with its dependency is sent again after it.
 */
export const readLedgerLegs = (orderId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<LegRow>`SELECT leg, chain, txid, raw, nonce, attempt FROM desk_order_legs WHERE order_id = ${orderId} AND chain = 'ledger'
      ORDER BY desk_order_legs.recorded_at, desk_order_legs.txid`)

/** Writes a leg; the row already there wins (two owners during a shard move). */
export const recordLeg = (orderId: string, row: Omit<LegRow, "attempt"> & { readonly attempt?: number }) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.zipRight(
      sql`INSERT INTO desk_order_legs (order_id, leg, chain, txid, raw, nonce, attempt)
        VALUES (${orderId}, ${row.leg}, ${row.chain}, ${row.txid}, ${row.raw}, ${row.nonce}, ${row.attempt ?? 0})
        ON CONFLICT (order_id, leg) DO NOTHING`,
      Effect.flatMap(readLeg(orderId, row.leg), (r) => r === undefined ? Effect.dieMessage(`leg ${row.leg} of ${orderId}: written, then not found`) : Effect.succeed(r))
    ))

/**
 * The output of `after` (the transaction the leg's Omni validity depends on: the customer's
 * deposit for a sweep or refund, the sweep for the issuer's burn) paying the leg's sender, as the
 * leg's second input: the highest such vout, which is the Omni reference output (how a simple
 * send pays its receiver, at dust). Spending it, the leg cannot be mined before `after`, nor
 * without it.
 */
const dependencyInput = (leg: LegName, after: string, sender: string) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const tx = yield* ledger.getTx(after).pipe(Effect.mapError(deferred(`${leg}: its dependency ${after}`)))
    const script = Either.getOrThrow(addressScript(sender, ledger.params))
    const outs = Transaction.fromHex(tx.hex).outs
    let vout = -1
    outs.forEach((o, i) => { if (Buffer.from(o.script).equals(Buffer.from(script))) vout = i })
    if (vout < 0) return yield* new LegDeferred({ message: `${leg}: ${after} pays nothing to ${sender}` })
    return { txid: after, vout, value: BigInt(outs[vout]!.value), script, prevTxHex: tx.hex } satisfies Utxo
  })

/**
 * A ledger Omni leg from `key`: recorded (signed) once, then broadcast; sent again when the ledger
 * does not have it. vin[0] is the sponsor's fresh fee coin (the Omni sender); `after`, when given,
 * is the txid of the transaction the leg depends on, whose output to the sender is vin[1]. The txid.
 */
export const ledgerOmniLeg = (
  orderId: string,
  leg: LegName,
  key: { readonly address: string; readonly privateKey: Uint8Array },
  payload: OmniPayload,
  reference: string,
  after?: string
) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    let row = yield* readLeg(orderId, leg)
    if (row === undefined) {
      const chained = after === undefined ? [] : [yield* dependencyInput(leg, after, key.address)]
      const sponsor = yield* FeeSponsor
      const funding = yield* sponsor.fund(key.address, 1, LEG_FLOAT_SATS).pipe(Effect.mapError(deferred(`${leg}: fee coin`)))
      const script = Either.getOrThrow(addressScript(key.address, ledger.params))
      const built = buildOmni(ledger.params, {
        inputs: [{ txid: funding.txid, vout: 0, value: LEG_FLOAT_SATS, script, prevTxHex: funding.hex }, ...chained],
        signer: { privateKey: key.privateKey },
        changeAddress: key.address,
        payload,
        reference
      })
      if (Either.isLeft(built)) return yield* new LegDeferred({ message: `${leg}: ${built.left.message}` })
      row = yield* recordLeg(orderId, { leg, chain: "ledger", txid: built.right.txid, raw: built.right.hex, nonce: null })
    }
    yield* ensureLedgerSent(row)
    return row.txid
  })

/**
 * Where a settled order's ledger leg stands, from its confirmations and our Omni indexer's
 * judgement (undefined: the view is behind the ledger; "forgotten": the view is caught up and
 * no longer keeps it, OmniViewIndexer's txRecordsMax). `Pending` until the leg is `finalDepth`
 * deep and judged; then `Final` when valid, `Invalid` with the reason when not: a leg in a block
 * moved no token if it is Omni-invalid (docs/desk-orders.md, "Reorgs"). A forgotten judgement is
 * `Final`: it was made long ago, and waiting would never bring it back.
 */
export type LegStanding = { readonly _tag: "Pending" } | { readonly _tag: "Final" } | { readonly _tag: "Invalid"; readonly reason: string }

export const legStanding = (confirmations: number, judged: OmniTxRecord | "forgotten" | undefined, finalDepth: number): LegStanding =>
  confirmations < finalDepth || judged === undefined ? { _tag: "Pending" }
    : judged === "forgotten" || judged.valid ? { _tag: "Final" } : { _tag: "Invalid", reason: judged.reason ?? "no reason given" }

/** Confirmations of a recorded ledger leg; one the ledger lost is sent again (its funding first). */
export const ensureLedgerSent = (row: LegRow) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const known = yield* ledger.getTx(row.txid).pipe(
      Effect.map((tx) => tx.confirmations),
      Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(undefined)),
      Effect.mapError(deferred(`${row.leg}: ledger`))
    )
    if (known !== undefined) return known
    yield* ledger.broadcast(row.raw).pipe(
      Effect.catchTag("LedgerTxRejected", (e) =>
        e.code !== "missing-inputs" ? Effect.fail(e) : Effect.flatMap(FeeSponsor, (s) => Effect.zipRight(s.repair, ledger.broadcast(row.raw)))),
      Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed(row.txid) : Effect.fail(e))),
      Effect.mapError(deferred(`${row.leg}: broadcast`))
    )
    return 0
  })

/**
 * An EVM leg made once: the recorded leg when there is one (followed, and sent again with its
 * bytes if the chain lost it), else `send` signs a new one whose nonce, bytes and sender are
 * recorded under the cross-node nonce guard (nonceLock.ts) before it is broadcast. Its hash.
 */
export const evmLegOnce = <E>(
  orderId: string,
  leg: LegName,
  ledger: EvmLedger,
  send: (record: (signed: SignedEvmTx) => Effect.Effect<void, SqlError>, guard: NonceGuard<SqlError>) => Effect.Effect<string, E>
) =>
  Effect.gen(function*() {
    const known = yield* readLeg(orderId, leg)
    if (known !== undefined) {
      yield* ensureEvmSent(orderId, known, ledger)
      return known.txid
    }
    const sql = yield* SqlClient.SqlClient
    return yield* send(recordEvmLeg(sql, orderId, leg, ledger.chain), legNonceGuard(sql, ledger.chain)).pipe(Effect.mapError(deferred(leg)))
  })

/** The USDC payout (mint, cash-out, redeem): an ERC-20 transfer from the hot wallet. */
export const evmPayoutLeg = (orderId: string, ledger: EvmLedger, token: string, to: string, amount: bigint) =>
  evmLegOnce(orderId, "payout", ledger, (record, guard) => ledger.erc20TransferRecorded(token, to, amount, record, guard))

/** Writes an EVM leg's signed bytes, nonce and sender (inside the nonce guard's transaction). */
export const recordEvmLeg = (sql: SqlClient.SqlClient, orderId: string, leg: LegName, chain: string) => (signed: SignedEvmTx) =>
  Effect.asVoid(sql`INSERT INTO desk_order_legs (order_id, leg, chain, txid, raw, nonce, sender)
    VALUES (${orderId}, ${leg}, ${chain}, ${signed.hash}, ${signed.raw}, ${signed.nonce}, ${signed.from})`)

/**
 * A recorded payout the chain does not know is sent again with its bytes. If the node refuses
 * them because the nonce was used by another transaction, these bytes can never be mined: only
 * then is the leg forgotten, so the next advance signs it afresh (never two live payouts).
 */
export const ensureEvmSent = (orderId: string, row: LegRow, ledger: EvmLedger) =>
  Effect.gen(function*() {
    const status = yield* ledger.txStatus(row.txid).pipe(
      Effect.map((s) => s.kind),
      Effect.catchTag("EvmTxNotFound", () => Effect.succeed("unknown" as const)),
      Effect.catchTag("EvmTxFailed", (e) => Effect.succeed(e.reason.startsWith("dropped") ? "unknown" as const : "failed" as const)),
      Effect.mapError(deferred("payout: status"))
    )
    if (status !== "unknown") return status
    const sent = yield* ledger.sendRaw(row.raw as Hex).pipe(
      Effect.as(true),
      // Only "too low" means the nonce went elsewhere; "too high" (a gap another node is filling) waits.
      Effect.catchTag("EvmTxRejected", (e) => /nonce too low|is lower than the current nonce/i.test(e.reason) ? Effect.succeed(false) : Effect.fail(e)),
      Effect.mapError(deferred("payout: resend"))
    )
    if (!sent) {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM desk_order_legs WHERE order_id = ${orderId} AND leg = ${row.leg} AND txid = ${row.txid}`
      yield* Effect.logWarning(`order ${orderId}: recorded ${row.leg} ${row.txid} can never be mined (its nonce ${row.nonce} went to another transaction); signing it again`)
    }
    return "pending" as const
  })
