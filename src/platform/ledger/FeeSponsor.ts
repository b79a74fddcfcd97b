// The fee sponsor: a system wallet ('fee-sponsor') whose native coin pays for the settlement legs
// sent from delegated addresses. A delegated address holds only the user's Omni tokens; each leg
// spends native coin for its fee and for the dust output that carries the tokens to their
// receiver. The sponsor pays a delegated address a few small coins at once (`fund`), and the
// address's owner chains its legs on their change (docs/exchange.md, "Settlement").
//
// Every node may fund, so spends are serialised through Postgres: under a transaction-scoped
// advisory lock a node reads the sponsor's journal (`fee_sponsor_txs`, every transaction it
// signed), computes the coins (coinPool.ts: confirmed UTXOs plus the change of its pending
// transactions), signs, appends to the journal and commits; only then does it broadcast, so a
// transaction the ledger loses is sent again with the same bytes (`repair`), never re-made.
import { SqlClient, type SqlError } from "@effect/sql"
import { Context, Duration, Effect, Either, Layer, Metric, Schedule, Schema } from "effect"
import { addressScript, buildSend } from "../../chain/txBuilder.ts"
import { poolOf } from "../../chain/ledger/coinPool.ts"
import { devnetFaucet } from "../../chain/ledger/devnetFaucet.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { formatAmount } from "../../chain/units.ts"
import { ledgerKind, unconfirmedAncestorsMax } from "../ChainsLive.ts"
import { AppConfig } from "../Config.ts"
import { feeSponsorSats } from "../Metrics.ts"
import type { FeeSponsorReport } from "../ops/OpsView.ts"
import { systemWallet } from "./SystemWallet.ts"
import { keyWalletAddress } from "../../chain/ledger/keyWallet.ts"
import { ledgerParams } from "../../chain/params.ts"
import { SecretBox } from "../SecretBox.ts"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"

export const feeSponsorName = "fee-sponsor"
/** Journal rows read to compute the coins, newest first: anything older is long in a block. */
export const journalWindowMax = 500
/** Outputs one funding transaction pays. */
export const fundingCoinsMax = 50
/** What the devnet sponsor is given from the faucet at start (and again at a start that finds it below half), sats. */
export const devnetFloatSats = 20n * 100_000_000n
/** A repair asked for within this long of the last one is skipped (many legs may ask after one reorg), ms. */
export const repairMinIntervalMs = 1_000
/** How often a node reads the sponsor's balance again for /ops and /metrics, ms. */
export const balanceRefreshMs = 60_000
/** Fee headroom when choosing coins at 1 sat/vB: per transaction plus per output, and per input. */
const FEE_BASE_SATS = 100n
const FEE_PER_OUTPUT_SATS = 40n
const FEE_PER_INPUT_SATS = 150n
/** The advisory lock of the journal (two-int keyspace, beside the migrator's "SHMI", 1). */
const JOURNAL_LOCK = [0x53484d49, 2] as const

/** The sponsor cannot pay now: too little coin, the ledger or the database unreachable. */
export class SponsorRefused extends Schema.TaggedError<SponsorRefused>()("SponsorRefused", {
  message: Schema.String
}) {}

/** A funding transaction, stored before it was broadcast. */
export interface Funding {
  readonly txid: string
  readonly hex: string
  /** Its own unconfirmed ancestors, itself included. */
  readonly ancestors: number
}

export interface FeeSponsorShape {
  readonly address: string
  /** Pays `coins` outputs of `each` sats to `to` in one transaction; stored, then broadcast. */
  readonly fund: (to: string, coins: number, each: bigint) => Effect.Effect<Funding, SponsorRefused>
  /** Sats the sponsor can spend now (confirmed plus its pending change). */
  readonly balance: Effect.Effect<bigint, SponsorRefused>
  /**
   * Sends again what the ledger lost (a funding dropped, or reorged out and not taken back),
   * oldest first; marks dropped what can never be valid. At most once per repairMinIntervalMs.
   * Never fails.
   */
  readonly repair: Effect.Effect<void>
  /** The balance as last read (no I/O): for /ops. */
  readonly latest: Effect.Effect<FeeSponsorReport>
}

export class FeeSponsor extends Context.Tag("shardline/FeeSponsor")<FeeSponsor, FeeSponsorShape>() {}

const describe = (e: { readonly _tag: string; readonly message?: string; readonly reason?: string }) => e.reason ?? e.message ?? e._tag
const refused = (e: { readonly _tag: string; readonly message?: string; readonly reason?: string }) =>
  new SponsorRefused({ message: `fee sponsor: ${describe(e)}` })

/**
 * A sponsor key stored by an earlier build of this branch (the raw key as hex, sealed, where
 * SystemWallet.ts seals the WIF): sealed again as a WIF in place, once. Anything else dies as before.
 */
const resealHexKey = (name: string, defect: unknown) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const box = yield* SecretBox
    const [row] = yield* sql<{ address: string; key_enc: string }>`SELECT address, key_enc FROM system_wallets WHERE name = ${name}`.pipe(Effect.orDie)
    const plain = row === undefined ? "" : Either.getOrElse(Either.try(() => box.open(row.key_enc)), () => "")
    if (row === undefined || !/^[0-9a-f]{64}$/.test(plain)) return yield* Effect.die(defect)
    const privateKey = Uint8Array.from(Buffer.from(plain, "hex"))
    if (keyWalletAddress(privateKey, ledgerParams) !== row.address) return yield* Effect.die(defect)
    const wif = ECPairFactory(ecc).fromPrivateKey(privateKey, { network: ledgerParams.network, compressed: true }).toWIF()
    yield* sql`UPDATE system_wallets SET key_enc = ${box.seal(wif)} WHERE name = ${name} AND key_enc = ${row.key_enc}`.pipe(Effect.orDie)
    return { address: row.address, privateKey }
  })

export const make = Effect.gen(function*() {
  const config = yield* AppConfig
  const ledger = yield* UtxoLedger
  const sql = yield* SqlClient.SqlClient
  const params = ledger.params
  const key = yield* systemWallet(feeSponsorName).pipe(Effect.orDie, Effect.catchAllDefect((d) => resealHexKey(feeSponsorName, d)))
  const script = Either.getOrThrow(addressScript(key.address, params))
  const ancestorsMax = unconfirmedAncestorsMax(config)

  const locked = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    sql`SELECT pg_advisory_xact_lock(${JOURNAL_LOCK[0]}, ${JOURNAL_LOCK[1]})`.pipe(Effect.zipRight(effect), sql.withTransaction)

  const journal = sql<{ txid: string; tx_hex: string }>`SELECT txid, tx_hex FROM fee_sponsor_txs WHERE dropped_at IS NULL
    ORDER BY seq DESC LIMIT ${journalWindowMax}`

  const pool = Effect.gen(function*() {
    const own = yield* journal
    const confirmed = yield* ledger.listUnspent([key.address])
    return poolOf({ script, confirmed, own: own.map((r) => r.tx_hex) }, params)
  })

  let seen: { readonly sats: bigint; readonly at: string } | undefined
  const publish = (sats: bigint) =>
    Effect.zipRight(Effect.sync(() => { seen = { sats, at: new Date().toISOString() } }), Metric.set(feeSponsorSats, Number(sats)))
  const latest = Effect.sync((): FeeSponsorReport => ({ address: key.address, sats: seen?.sats.toString() ?? null, checkedAt: seen?.at ?? null }))

  const markDropped = (txid: string) => sql`UPDATE fee_sponsor_txs SET dropped_at = now() WHERE txid = ${txid}`

  let repairedAt = 0
  const repairNow = locked(Effect.gen(function*() {
    const rows = yield* sql<{ txid: string; tx_hex: string }>`SELECT txid, tx_hex FROM fee_sponsor_txs
      WHERE dropped_at IS NULL AND created_at > now() - interval '1 day' ORDER BY seq DESC LIMIT ${journalWindowMax}`
    // Oldest first: a parent goes back into the mempool before its children.
    for (const row of [...rows].reverse()) {
      const known = yield* ledger.getTx(row.txid).pipe(Effect.as(true), Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(false)))
      if (known) continue
      yield* ledger.broadcast(row.tx_hex).pipe(
        Effect.catchTag("LedgerTxRejected", (e) =>
          e.code === "already-known" ? Effect.void : markDropped(row.txid).pipe(
            Effect.zipRight(Effect.logWarning(`fee sponsor: transaction ${row.txid} can never be valid (${e.reason}); its outputs are no longer counted`))
          ))
      )
    }
  })).pipe(Effect.catchAll((e) => Effect.logWarning("fee sponsor repair", e)))
  const repair: FeeSponsorShape["repair"] = Effect.suspend(() =>
    Date.now() - repairedAt < repairMinIntervalMs ? Effect.void : repairNow.pipe(Effect.ensuring(Effect.sync(() => { repairedAt = Date.now() }))))

  /** Broadcasts a stored funding; a lost parent is sent again first, once. */
  const send = (funding: Funding) => {
    const once = ledger.broadcast(funding.hex)
    return once.pipe(
      Effect.catchTag("LedgerTxRejected", (e) => (e.code === "missing-inputs" ? Effect.zipRight(repair, once) : Effect.fail(e))),
      Effect.catchTag("LedgerTxRejected", (e) =>
        e.code === "already-known"
          ? Effect.succeed(funding.txid)
          : markDropped(funding.txid).pipe(Effect.orDie, Effect.zipRight(Effect.fail(refused(e))))),
      Effect.mapError((e) => (e instanceof SponsorRefused ? e : refused(e)))
    )
  }

  const fund: FeeSponsorShape["fund"] = (to, coins, each) =>
    Effect.gen(function*() {
      if (!Number.isInteger(coins) || coins < 1 || coins > fundingCoinsMax) {
        return yield* new SponsorRefused({ message: `fee sponsor: ${coins} coins in one funding; 1 to ${fundingCoinsMax}` })
      }
      const funding = yield* locked(Effect.gen(function*() {
        const coinsNow = yield* pool
        const need = BigInt(coins) * each + FEE_BASE_SATS + FEE_PER_OUTPUT_SATS * BigInt(coins + 1)
        const inputs = coinsNow.pick(need, FEE_PER_INPUT_SATS, ancestorsMax)
        if (inputs === undefined) {
          yield* publish(coinsNow.total())
          return yield* new SponsorRefused({
            message: `the fee sponsor ${key.address} has ${coinsNow.total()} spendable satoshis, not enough for ${coins} × ${each} plus the fee; ` +
              "send native coin to that address (docs/exchange.md, \"Settlement\")"
          })
        }
        const built = buildSend(params, {
          inputs,
          signer: { privateKey: key.privateKey },
          changeAddress: key.address,
          outputs: Array.from({ length: coins }, () => ({ address: to, value: each }))
        })
        if (Either.isLeft(built)) return yield* new SponsorRefused({ message: `fee sponsor: ${built.left.message}` })
        const ancestors = 1 + inputs.reduce((n, c) => n + c.ancestors, 0)
        yield* sql`INSERT INTO fee_sponsor_txs (txid, tx_hex, to_address, amount, ancestors)
          VALUES (${built.right.txid}, ${built.right.hex}, ${to}, ${(BigInt(coins) * each).toString()}, ${ancestors})`
        coinsNow.spend(built.right.hex)
        yield* publish(coinsNow.total())
        return { txid: built.right.txid, hex: built.right.hex, ancestors }
      })).pipe(Effect.catchTags({
        SqlError: (e: SqlError.SqlError) => Effect.fail(refused(e)),
        LedgerInvalidInput: (e) => Effect.fail(refused(e)),
        LedgerRpcError: (e) => Effect.fail(refused(e))
      }))
      yield* send(funding)
      return funding
    })

  const balance: FeeSponsorShape["balance"] = pool.pipe(
    Effect.map((p) => p.total()),
    Effect.tap(publish),
    Effect.mapError(refused)
  )

  return FeeSponsor.of({ address: key.address, fund, balance, repair, latest })
})

/** On a devnet, tops the sponsor up from the faucet (then mines a block, so both are settled). */
const fundOnDevnet = (sponsor: FeeSponsorShape) =>
  Effect.gen(function*() {
    const ledger = yield* UtxoLedger
    const have = yield* sponsor.balance
    if (have >= devnetFloatSats / 2n) return
    const faucet = devnetFaucet(ledger)
    yield* faucet.pay(sponsor.address, devnetFloatSats)
    yield* ledger.mine(1, faucet.address)
  })

const coinsText = (sats: bigint) => `${Either.getOrElse(formatAmount(sats, 8), () => "?")} coins (${sats} sat)`

/** The sponsor of this node; logs its address and balance at start (operators fund it on a real node). */
export const layer = Layer.scoped(FeeSponsor, Effect.gen(function*() {
  const config = yield* AppConfig
  const sponsor = yield* make
  const startup = Effect.gen(function*() {
    yield* sponsor.repair
    if (ledgerKind(config) === "devnet") yield* fundOnDevnet(sponsor).pipe(Effect.orDie)
    const balance = yield* sponsor.balance.pipe(Effect.option)
    const shown = balance._tag === "Some" ? `${coinsText(balance.value)} spendable` : "balance unknown (the ledger did not answer)"
    if (balance._tag === "Some" && balance.value === 0n) {
      yield* Effect.logWarning(`fee sponsor ${sponsor.address}: empty; settlement legs wait until native coin is sent to this address`)
    } else {
      yield* Effect.logInfo(`fee sponsor ${sponsor.address}: ${shown}`)
    }
  })
  // The in-process devnet answers at once and is funded before anything settles. A real node may
  // be slow or silent (each call waits up to the RPC timeout): the node must not wait for it to
  // start serving, so the repair and the balance report run beside the start.
  if (ledgerKind(config) === "devnet") yield* startup
  else yield* Effect.forkScoped(startup)
  yield* sponsor.balance.pipe(Effect.ignore, Effect.repeat(Schedule.spaced(Duration.millis(balanceRefreshMs))), Effect.delay(Duration.millis(balanceRefreshMs)), Effect.forkScoped)
  return sponsor
}))
