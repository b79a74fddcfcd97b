// The delegated address's wallet, kept by its Authorization entity (the one owner of the key):
// it signs settlement legs and the expiry sweep. Its coins live in memory between calls
// (coinPool.ts), so legs chain on each other's change within a block; they are rebuilt from the
// ledger and our own rows on first use and whenever the ledger disagrees.
//
// A leg is signed once: its bytes and txid are committed (status 'signed') before they are
// broadcast, the UPDATE only takes a row whose tx_hex is still NULL, and every later broadcast
// sends the stored bytes. So a leg is never paid by two different transactions.
import { SqlClient, type SqlError } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Data, Effect, Either } from "effect"
import { type LegName, LegsRefused, type LegRef, type LegTerms, type SignedLeg } from "../../../schemas/exchange/authorization.ts"
import { type CoinPool, type IncomingTx, outpointOf, poolOf, spendingOrder } from "../../chain/ledger/coinPool.ts"
import { fundingLegsFor, fundingLegsMin, lowWaterFor, recentWindowMs, SlidingCount } from "./fundingSize.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { knownParsed, rememberParsed } from "../../chain/parsedTx.ts"
import { inline, type SignerPoolShape } from "../../chain/signerPool.ts"
import { addressScript, buildOmni, buildSend, type BuiltTx } from "../../chain/txBuilder.ts"
import { unconfirmedAncestorsMax } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { legKey, type LegToStore, type Store, storeAlone } from "./legStore.ts"

/** Legs one SignLegs may carry. */
export const signLegsMax = 1_000
/** Fee headroom of a leg at 1 sat/vB (one input, OP_RETURN, change and reference: about 257 vB), and per extra input. */
export const legFeeSats = 300n
const FEE_PER_INPUT_SATS = 150n
/** Outputs of one sponsor funding (parallel chains of change); how many legs' worth: fundingSize.ts. */
export const fundingCoins = 4
/** Sponsor fundings to one address looked at when rebuilding its coins. */
const fundingsWindow = 50
/** A shortage looks at the ledger again (coins someone else sent) at most this often before asking the sponsor, ms. */
export const reloadIntervalMsDefault = 10_000
/** Snapshot attempts of the Omni view before a sweep gives up on a moving tip. */
const snapshotAttemptsMax = 20

/** Syncs of the Omni view a sweep makes when the ledger's tip moved past it meanwhile. */
const viewCatchUpTries = 3

/** The Omni view has not caught up with the ledger: a sweep read now could leave tokens behind. */
export class ViewBehind extends Data.TaggedError("ViewBehind")<{ readonly message: string }> {}

export interface LegRow {
  readonly trade_id: string
  readonly leg: LegName
  readonly property_id: string
  readonly amount: string
  readonly from_address: string
  readonly to_address: string
  readonly tx_hex: string | null
  readonly txid: string | null
  readonly status: string
}

const legColumns = "trade_id::text AS trade_id, leg, property_id::text AS property_id, amount::text AS amount, from_address, to_address, tx_hex, txid, status"
const keyOf = (r: { readonly trade_id: string; readonly leg: string }) => `${r.trade_id}:${r.leg}`

/** What the expiry sweep did. */
export interface SweepResult {
  readonly txid: string
  readonly amount: bigint
  readonly toAddress: string
  readonly repeated: boolean
}

/** Satoshis a leg's fee coin needs at least (dust output, fee, one more input). */
const perLegSatsOf = (params: { readonly dustSats: bigint }) => params.dustSats + legFeeSats + FEE_PER_INPUT_SATS
/** Each of the fundingCoins coins of one funding for `legs` legs' worth. */
const fundingEach = (params: { readonly dustSats: bigint }, legs: number) =>
  (BigInt(legs) * perLegSatsOf(params)) / BigInt(fundingCoins) + 1n

/**
 * A new grant's address gets its first fee coins when the grant is made (issue 22), so its first
 * trade does not pay for the sponsor's transaction inside the order path. Once per address: a
 * redelivered grant, or an address the sponsor has paid before, is left as it is. A refusal (the
 * sponsor is short) is the caller's to log: the wallet still asks the sponsor at its first leg.
 */
export const fundNewAddress = (address: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sponsor = yield* FeeSponsor
    const ledger = yield* UtxoLedger
    const [paid] = yield* sql<{ n: number }>`SELECT 1 AS n FROM fee_sponsor_txs WHERE to_address = ${address} LIMIT 1`
    if (paid !== undefined) return false
    yield* sponsor.fund(address, fundingCoins, fundingEach(ledger.params, fundingLegsMin))
    return true
  })

/**
 * `liveKeyOf`: the grant whose sealed key must still be stored for a leg's bytes to be stored (the
 * Authorization entity passes its grant: a second activation elsewhere that destroyed the key
 * stops this one from storing more, without a read of the grant before every batch).
 */
export const makeDelegatedWallet = (
  address: string,
  privateKey: Uint8Array,
  options: { readonly reloadIntervalMs?: number; readonly liveKeyOf?: string; readonly store?: Store; readonly signer?: SignerPoolShape } = {}
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const omni = yield* OmniView
    const config = yield* AppConfig
    const params = ledger.params
    const script = Either.getOrThrow(addressScript(address, params))
    const ancestorsMax = unconfirmedAncestorsMax(config)
    const perLegSats = perLegSatsOf(params)
    // The node's signing workers come from the Authorization entity; without them, this thread.
    const signer = options.signer ?? inline
    let pool: CoinPool | undefined
    let reloadedAt = 0
    /** The ledger's tip when the pool was last read because it fell short. */
    let tipAtReload = ""
    const reloadIntervalMs = options.reloadIntervalMs ?? reloadIntervalMsDefault
    /** Legs built over the last recentWindowMs: a busy address is funded for its own rate. */
    const recentLegs = new SlidingCount(recentWindowMs)
    /** Transactions built in the batch being signed, not stored yet: a reload in the middle of a batch must count them. */
    let unstored: string[] = []

    /** Our unfinished transactions: legs from this address and the sweep, oldest first. */
    const ownTxs = sql<{ tx_hex: string }>`SELECT tx_hex FROM settlement_legs
      WHERE from_address = ${address} AND status IN ('signed', 'broadcast', 'confirmed') AND tx_hex IS NOT NULL
      UNION ALL SELECT tx_hex FROM authorization_sweeps WHERE from_address = ${address} AND tx_hex IS NOT NULL`

    /** Sponsor fundings to us still in the mempool (or lost and about to be repaired by the sponsor). */
    const pendingFundings = Effect.gen(function*() {
      const rows = yield* sql<{ txid: string; tx_hex: string; ancestors: number }>`SELECT txid, tx_hex, ancestors FROM fee_sponsor_txs
        WHERE to_address = ${address} AND dropped_at IS NULL ORDER BY seq DESC LIMIT ${fundingsWindow}`
      const incoming: IncomingTx[] = []
      for (const row of rows) {
        const seen = yield* ledger.getTx(row.txid).pipe(
          Effect.map((t) => t.confirmations),
          Effect.catchTag("LedgerTxNotFound", () => Effect.succeed(0))
        )
        if (seen === 0) incoming.push({ hex: row.tx_hex, ancestors: row.ancestors })
      }
      return incoming
    })

    const reload = Effect.gen(function*() {
      const own = yield* ownTxs
      const incoming = yield* pendingFundings
      const confirmed = yield* ledger.listUnspent([address])
      pool = poolOf({ script, confirmed, own: [...own.map((r) => r.tx_hex), ...unstored], incoming }, params)
      reloadedAt = Date.now()
      return pool
    })
    const coins = Effect.suspend(() => (pool === undefined ? reload : Effect.succeed(pool)))

    const fund = (legs: number) =>
      Effect.gen(function*() {
        const funding = yield* sponsor.fund(address, fundingCoins, fundingEach(params, fundingLegsFor(legs, recentLegs.total(Date.now()))))
        ;(yield* coins).receive(funding.hex, funding.ancestors)
      })

    /** Inputs for one more leg: from memory, else after a fresh look at the ledger, else after the sponsor pays. */
    const inputsForLeg = (legsLeft: number) =>
      Effect.gen(function*() {
        const need = params.dustSats + legFeeSats
        const now = (yield* coins).pick(need, FEE_PER_INPUT_SATS, ancestorsMax)
        if (now !== undefined) return now
        // A block since the last look may have confirmed what our coins hang from (a chain at the
        // mempool's limit of ancestors or descendants): look again before asking the sponsor.
        const tip = yield* Effect.orElseSucceed(Effect.map(ledger.tip, (t) => t.hash), () => tipAtReload)
        if (tip !== tipAtReload || Date.now() - reloadedAt >= reloadIntervalMs) {
          tipAtReload = tip
          const fresh = (yield* reload).pick(need, FEE_PER_INPUT_SATS, ancestorsMax)
          if (fresh !== undefined) return fresh
        }
        yield* fund(legsLeft)
        return (yield* coins).pick(need, FEE_PER_INPUT_SATS, ancestorsMax)
      })

    /** `spends`: the outpoints the transaction's inputs are (the builder adds exactly the inputs it was given, in order). */
    type Built = { readonly _tag: "Built"; readonly tx: BuiltTx; readonly spends: ReadonlyArray<string> } | { readonly _tag: "NoCoin"; readonly reason: string } | { readonly _tag: "Unbuildable"; readonly reason: string }

    /** One leg's transaction, spending from the pool; never fails (a shortage is a value). */
    const buildLeg = (row: LegRow, legsLeft: number): Effect.Effect<Built> =>
      Effect.gen(function*() {
        const inputs = yield* inputsForLeg(legsLeft)
        if (inputs === undefined) return { _tag: "NoCoin", reason: `no coin at ${address} for the fee within ${ancestorsMax} unconfirmed ancestors` } as const
        const request = {
          inputs,
          signer: { privateKey },
          changeAddress: address,
          payload: { type: "simpleSend", property: Number(row.property_id), amount: BigInt(row.amount) },
          reference: row.to_address
        } as const
        // Off the event loop when the node has signing workers. A worker lost mid-request, or one
        // being replaced, answers SignerUnavailable at once, and the leg is built here: a dead
        // pool slows settlement down, it never stops it. Nothing a lost worker computed counts:
        // only what is stored below is ever sent.
        const built = yield* signer.buildOmni(params, request, address).pipe(
          Effect.catchTag("SignerUnavailable", (e) =>
            Effect.logWarning(`leg ${keyOf(row)}: ${e.message}; built on the event loop`).pipe(Effect.zipRight(inline.buildOmni(params, request, address))))
        )
        if (Either.isLeft(built)) {
          // Only the leg's own data can make it unbuildable for good (its receiver, its amount);
          // anything about the coins is a shortage to retry.
          const permanent = built.left._tag === "InvalidAddress" || built.left._tag === "InvalidOmniPayload"
          return { _tag: permanent ? "Unbuildable" : "NoCoin", reason: built.left.message } as const
        }
        // Built by a worker, the bytes are new to this thread: remember them parsed with the txid
        // the worker computed, so the pool's spend and the broadcast do not hash them again.
        if (knownParsed(built.right.hex) === undefined) rememberParsed(built.right.hex, Transaction.fromHex(built.right.hex), built.right.txid)
        ;(yield* coins).spend(built.right.hex)
        return { _tag: "Built", tx: built.right, spends: inputs.map(outpointOf) } as const
      }).pipe(Effect.catchAll((e): Effect.Effect<Built> => Effect.succeed({ _tag: "NoCoin", reason: e.message })))

    /** Broadcasts stored bytes in order; the keys of the legs the ledger took. */
    /** `record`: false when the caller records the broadcasts itself (SignLegs.callerRecordsBroadcasts). */
    const broadcastAll = (rows: ReadonlyArray<{ readonly trade_id: string; readonly leg: string; readonly tx_hex: string }>, record = true) =>
      Effect.gen(function*() {
        const taken: string[] = []
        // All at once, in spending order: the ledger takes them in that order (rpcLedger sends
        // them, with other wallets' waiting broadcasts, as one request).
        const results = yield* ledger.broadcastMany(rows.map((r) => r.tx_hex))
        for (const [i, row] of rows.entries()) {
          const ok = yield* Either.match(results[i]!, {
            onRight: () => Effect.succeed(true),
            onLeft: (e) => {
              switch (e._tag) {
                case "LedgerTxRejected":
                  if (e.code === "already-known") return Effect.succeed(true)
                  // The ledger disagrees with our coins (a lost parent, say): look again next time.
                  if (e.code === "missing-inputs" || e.code === "double-spend") pool = undefined
                  return Effect.logWarning(`leg ${keyOf(row)} not broadcast: ${e.code} (${e.reason}); its stored bytes are sent again later`).pipe(Effect.as(false))
                case "LedgerRpcError":
                  return Effect.logWarning(`leg ${keyOf(row)} not broadcast: ${e.message}`).pipe(Effect.as(false))
                case "LedgerInvalidInput":
                  return Effect.die(e)
              }
            }
          })
          if (ok) taken.push(keyOf(row))
        }
        if (taken.length > 0 && record) {
          const [tradeIds, legs] = [taken.map((k) => k.split(":")[0]!), taken.map((k) => k.split(":")[1]!)]
          yield* sql`UPDATE settlement_legs l SET status = 'broadcast', broadcasts = l.broadcasts + 1, updated_at = now()
            FROM unnest(${tradeIds}::bigint[], ${legs}::text[]) AS v(trade_id, leg)
            WHERE l.trade_id = v.trade_id AND l.leg = v.leg AND l.status = 'signed'`
        }
        return new Set(taken)
      })

    /** The node's store, several wallets' legs a statement (legStore.ts); without one each store is its own statement. */
    const store = options.store ?? storeAlone(sql)

    /**
     * Signs the unsigned ones of `rows` (in order), stores them, then broadcasts every one still
     * 'signed'. A leg that can never be built (a bad receiver address) is marked failed.
     * Returns the txid of each leg that has one now, and why the others have none.
     *
     * Round trips (issue 22): one statement stores every built leg's bytes and answers which it
     * took (no transaction around it: one statement is atomic, and the failed-leg update, rare,
     * is guarded on its own); only legs it did not take are read again; one statement records the
     * broadcasts. The store takes a row only if it is the grant's, from this address, unsigned and
     * still paying what was built (property, amount, receiver), so bytes built from a caller's
     * terms that disagree with the row are never stored or sent.
     */
    const sign = (rows: ReadonlyArray<LegRow>, grantId: string, recordBroadcasts = true) =>
      Effect.gen(function*() {
        const built: Array<{ row: LegRow; tx: BuiltTx }> = []
        const failed: Array<{ row: LegRow; reason: string }> = []
        let shortOf: string | undefined
        const unsigned = rows.filter((r) => r.tx_hex === null && r.status === "recorded")
        unstored = []
        const spentInBatch = new Map<string, string>()
        for (const [i, row] of unsigned.entries()) {
          const result = yield* buildLeg(row, unsigned.length - i)
          if (result._tag === "Built") {
            recentLegs.add(1, Date.now())
            built.push({ row, tx: result.tx })
            unstored.push(result.tx.hex)
            // Two legs on one coin: one of them could never be paid. A bug, never a row.
            for (const outpoint of result.spends) {
              if (spentInBatch.has(outpoint)) return yield* Effect.dieMessage(`invariant: legs ${spentInBatch.get(outpoint)} and ${keyOf(row)} spend the same coin ${outpoint}`)
              spentInBatch.set(outpoint, keyOf(row))
            }
          }
          else if (result._tag === "Unbuildable") failed.push({ row, reason: result.reason })
          else {
            shortOf = result.reason
            break
          }
        }
        const stored = yield* Effect.gen(function*() {
          const won = yield* store(built.map((b): LegToStore => ({
            tradeId: b.row.trade_id, leg: b.row.leg, txHex: b.tx.hex, txid: b.tx.txid,
            propertyId: b.row.property_id, amount: b.row.amount, toAddress: b.row.to_address,
            grantId, fromAddress: address, keyGuard: options.liveKeyOf !== undefined
          })))
          if (failed.length > 0) {
            // Failed only if the row says what could not be built: a caller's wrong terms never fail a good leg.
            yield* sql`UPDATE settlement_legs l SET status = 'failed', failure = v.reason, updated_at = now()
              FROM unnest(${failed.map((f) => f.row.trade_id)}::bigint[], ${failed.map((f) => f.row.leg)}::text[],
                          ${failed.map((f) => `cannot build the leg: ${f.reason}`)}::text[],
                          ${failed.map((f) => f.row.property_id)}::bigint[], ${failed.map((f) => f.row.amount)}::numeric[],
                          ${failed.map((f) => f.row.to_address)}::text[]) AS v(trade_id, leg, reason, property_id, amount, to_address)
              WHERE l.trade_id = v.trade_id AND l.leg = v.leg AND l.tx_hex IS NULL AND l.status = 'recorded'
                AND l.grant_id = ${grantId} AND l.from_address = ${address}
                AND l.property_id = v.property_id AND l.amount = v.amount AND l.to_address = v.to_address`
          }
          return won
        }).pipe(
          // Not stored: the coins those transactions spent in memory are still ours.
          Effect.onError(() => Effect.sync(() => { pool = undefined })),
          Effect.ensuring(Effect.sync(() => { unstored = [] }))
        )
        // A row someone else signed first (a second activation during a shard move) keeps its
        // bytes; ours are never sent, and our coins are wrong: rebuild them.
        if (stored.size < built.length) pool = undefined
        const fresh = new Map(built.filter((b) => stored.has(keyOf(b.row))).map((b) => [keyOf(b.row), b.tx]))
        // What we stored we know; the rest (signed by someone else, failed, short of coin) is read.
        const others = yield* reread(rows.filter((r) => !fresh.has(keyOf(r))))
        const latest: Array<LegRow> = [
          ...built.filter((b) => fresh.has(keyOf(b.row))).map((b): LegRow => ({ ...b.row, tx_hex: b.tx.hex, txid: b.tx.txid, status: "signed" })),
          ...others
        ]
        const toSend = [
          ...built.filter((b) => fresh.has(keyOf(b.row))).map((b) => ({ trade_id: b.row.trade_id, leg: b.row.leg, tx_hex: b.tx.hex })),
          ...others.filter((r) => r.status === "signed" && r.tx_hex !== null).map((r) => ({ trade_id: r.trade_id, leg: r.leg, tx_hex: r.tx_hex! }))
        ]
        const taken = yield* broadcastAll(spendingOrder(toSend, (r) => r.tx_hex), recordBroadcasts)
        return { latest, shortOf, taken }
      })

    const reread = (rows: ReadonlyArray<LegRow>) =>
      rows.length === 0
        ? Effect.succeed([] as LegRow[])
        : sql<LegRow>`SELECT ${sql.literal(legColumns)} FROM settlement_legs
            WHERE (trade_id, leg) IN (SELECT * FROM unnest(${rows.map((r) => r.trade_id)}::bigint[], ${rows.map((r) => r.leg)}::text[]))`

    const topUp = Effect.gen(function*() {
      const p = yield* coins
      if (p.total() < BigInt(lowWaterFor(recentLegs.total(Date.now()))) * perLegSats) yield* fund(0)
    }).pipe(Effect.catchAll((e) => Effect.logWarning("delegated address top-up", e)))

    const refuse = (e: SqlError.SqlError) =>
      new LegsRefused({ message: `cannot sign now: ${e.message}` })

    /** A leg as its caller's terms describe it: what the store statement requires the row to still say. */
    const rowOfTerms = (r: LegRef, terms: LegTerms): LegRow => ({
      trade_id: BigInt(r.tradeId).toString(),
      leg: r.leg,
      property_id: String(terms.propertyId),
      amount: terms.amount,
      from_address: address,
      to_address: terms.to,
      tx_hex: null,
      txid: null,
      status: "recorded"
    })

    /** The legs to sign, in the order asked: from their terms when every ref carries them (the Market's own batch), else read. */
    const legsOf = (grantId: string, refs: ReadonlyArray<LegRef>) =>
      Effect.gen(function*() {
        if (refs.every((r) => r.terms !== undefined)) return refs.map((r) => rowOfTerms(r, r.terms!))
        const rows = yield* sql<LegRow>`SELECT ${sql.literal(legColumns)} FROM settlement_legs
          WHERE grant_id = ${grantId}
            AND (trade_id, leg) IN (SELECT * FROM unnest(${refs.map((r) => r.tradeId)}::bigint[], ${refs.map((r) => r.leg)}::text[]))`
        const found = new Map(rows.map((r) => [keyOf(r), r]))
        const missing = refs.filter((r) => !found.has(legKey(r.tradeId, r.leg)))
        if (missing.length > 0) {
          return yield* new LegsRefused({ message: `${missing.length} of the legs are not legs of grant ${grantId} (first: trade ${missing[0]!.tradeId} ${missing[0]!.leg})` })
        }
        for (const r of rows) {
          // The legs of a grant are paid from its delegated address; anything else is a corrupted row.
          if (r.from_address !== address) return yield* Effect.dieMessage(`leg ${keyOf(r)} is from ${r.from_address}, not the grant's address ${address}`)
        }
        return refs.map((r) => found.get(legKey(r.tradeId, r.leg))!)
      })

    /** SignLegs: the legs asked for, each answered with its txid, or refused if any is left unsigned. */
    const signLegs = (grantId: string, refs: ReadonlyArray<LegRef>, options: { readonly callerRecordsBroadcasts?: boolean | undefined } = {}) =>
      Effect.gen(function*() {
        if (refs.length > signLegsMax) return yield* new LegsRefused({ message: `${refs.length} legs in one request; at most ${signLegsMax}` })
        if (refs.length === 0) return []
        const bad = refs.find((r) => !/^\d{1,19}$/.test(r.tradeId))
        if (bad !== undefined) return yield* new LegsRefused({ message: `trade id "${bad.tradeId.slice(0, 40)}" is not a decimal id` })
        // One leg twice would be built twice, on two coins: both transactions could be sent.
        const keys = new Set(refs.map((r) => legKey(r.tradeId, r.leg)))
        if (keys.size < refs.length) return yield* new LegsRefused({ message: "the same leg is asked for twice" })
        const ordered = yield* legsOf(grantId, refs)
        const callerRecords = options.callerRecordsBroadcasts === true
        const { latest, shortOf, taken } = yield* sign(ordered, grantId, !callerRecords)
        if (shortOf === undefined) yield* topUp
        const now = new Map(latest.map((r) => [keyOf(r), r]))
        const answer: SignedLeg[] = []
        for (const r of ordered) {
          const row = now.get(keyOf(r))
          // Terms that named a leg of another address (or none): not this grant's to answer for.
          if (row !== undefined && row.from_address !== address) {
            return yield* new LegsRefused({ message: `leg ${keyOf(r)} is not a leg of grant ${grantId}` })
          }
          if (row?.txid === null || row === undefined) {
            return yield* new LegsRefused({ message: `leg ${keyOf(r)} is not signed: ${row?.status === "failed" ? "it failed to build" : shortOf ?? "unknown"}` })
          }
          answer.push(callerRecords ? { tradeId: r.trade_id, leg: r.leg, txid: row.txid, broadcast: taken.has(keyOf(r)) } : { tradeId: r.trade_id, leg: r.leg, txid: row.txid })
        }
        return answer
      }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(refuse(e))))

    /** Every leg of the grant still unsigned (the expiry's last chance); the number left unsigned. */
    const signAllUnsigned = (grantId: string) =>
      Effect.gen(function*() {
        let left = 0
        for (;;) {
          const rows = yield* sql<LegRow>`SELECT ${sql.literal(legColumns)} FROM settlement_legs
            WHERE grant_id = ${grantId} AND tx_hex IS NULL AND status = 'recorded' ORDER BY trade_id, leg LIMIT ${signLegsMax}`
          if (rows.length === 0) return left
          const { latest } = yield* sign(rows, grantId)
          left = latest.filter((r) => r.tx_hex === null && r.status === "recorded").length
          if (left > 0) return left
        }
      })

    /** Marks the grant's legs that can no longer be signed as failed (the key is about to go). */
    const failUnsigned = (grantId: string, reason: string) =>
      sql`UPDATE settlement_legs SET status = 'failed', failure = ${reason}, updated_at = now()
        WHERE grant_id = ${grantId} AND tx_hex IS NULL AND status = 'recorded'`

    /** Sends every unfinished leg's stored bytes again, parents first: the sweep chains on their change. */
    const rebroadcastPending = Effect.gen(function*() {
      const rows = yield* sql<LegRow>`SELECT ${sql.literal(legColumns)} FROM settlement_legs
        WHERE from_address = ${address} AND status IN ('signed', 'broadcast') AND tx_hex IS NOT NULL`
      const sendable = rows.map((r) => ({ trade_id: r.trade_id, leg: r.leg, tx_hex: r.tx_hex! }))
      yield* broadcastAll(spendingOrder(sendable, (r) => r.tx_hex))
    })

    /**
     * What the Omni view says is left at the address for `property`, minus the legs whose
     * transactions it has not applied yet: read at one height (the view moves in the background).
     */
    const remainder = (property: number) =>
      Effect.gen(function*() {
        // A block may land between the view's sync and the tip read (1 s blocks on a busy node did,
        // attempt after attempt, in chaos seed 1): sync again a few times before giving the try up.
        let reached = yield* omni.sync
        let tip = yield* ledger.tip
        for (let i = 0; i < viewCatchUpTries && reached < tip.height; i++) {
          reached = yield* omni.sync
          tip = yield* ledger.tip
        }
        if (reached < tip.height) {
          return yield* new ViewBehind({ message: `the Omni view is at ${reached}, the ledger at ${tip.height}; the sweep waits for it` })
        }
        // Final legs are deep in blocks the view has applied; failed ones never move tokens.
        const legs = yield* sql<{ txid: string; amount: string }>`SELECT txid, amount::text AS amount FROM settlement_legs
          WHERE from_address = ${address} AND property_id = ${property} AND status IN ('signed', 'broadcast', 'confirmed')`
        for (let attempt = 0; attempt < snapshotAttemptsMax; attempt++) {
          const before = yield* omni.height
          const balance = yield* omni.balance(address, property)
          let pending = 0n
          for (const leg of legs) if ((yield* omni.tx(leg.txid)) === undefined) pending += BigInt(leg.amount)
          if ((yield* omni.height) !== before) continue
          if (pending > balance) {
            yield* Effect.logError(`sweep of ${address}: legs not yet applied (${pending}) exceed the balance (${balance}) of property ${property}; some will be invalid`)
          }
          return pending > balance ? 0n : balance - pending
        }
        return yield* Effect.dieMessage(`sweep of ${address}: the Omni view moved during ${snapshotAttemptsMax} reads`)
      })

    /**
     * The expiry sweep: what is left of the asset goes to the user's own address and the native
     * coin back to the fee sponsor, in one transaction, recorded (signed bytes) before it is
     * broadcast. A second call sends the recorded bytes again. Nothing to sweep: no row.
     */
    const sweep = (grant: { readonly grantId: string; readonly userId: number; readonly asset: string }) =>
      Effect.gen(function*() {
        const [done] = yield* sql<{ tx_hex: string; txid: string; amount: string; to_address: string }>`SELECT tx_hex, txid, amount::text AS amount, to_address
          FROM authorization_sweeps WHERE grant_id = ${grant.grantId}`
        if (done !== undefined) {
          yield* broadcastSweep(done.tx_hex)
          return { txid: done.txid, amount: BigInt(done.amount), toAddress: done.to_address, repeated: true } satisfies SweepResult
        }
        yield* rebroadcastPending
        const [asset] = yield* sql<{ property_id: string }>`SELECT property_id::text AS property_id FROM exchange_assets WHERE code = ${grant.asset}`
        const [owner] = yield* sql<{ address: string }>`SELECT address FROM user_addresses WHERE user_id = ${grant.userId} ORDER BY created_at, address LIMIT 1`
        const property = asset === undefined ? undefined : Number(asset.property_id)
        let amount = property === undefined ? 0n : yield* remainder(property)
        if (amount > 0n && owner === undefined) {
          yield* Effect.logError(`sweep of ${address}: user ${grant.userId} has no address; ${amount} of ${grant.asset} stay at the delegated address`)
          amount = 0n
        }
        const p = yield* reload
        if (amount > 0n && p.total() < params.dustSats + legFeeSats + FEE_PER_INPUT_SATS * BigInt(p.size + 1)) yield* fund(1)
        const inputs = (yield* coins).usable(Number.MAX_SAFE_INTEGER).slice(0, 500)
        if (inputs.length === 0) return undefined
        const built = amount > 0n
          ? buildOmni(params, {
            inputs,
            signer: { privateKey },
            changeAddress: sponsor.address,
            payload: { type: "simpleSend", property: property!, amount },
            reference: owner!.address
          })
          : buildSend(params, { inputs, signer: { privateKey }, changeAddress: sponsor.address, outputs: [{ address: sponsor.address, value: params.dustSats }] })
        if (Either.isLeft(built)) {
          // Dust too small to pay its own fee is left behind; anything else is a bug worth a line.
          if (amount > 0n || built.left._tag !== "InsufficientFunds") yield* Effect.logError(`sweep of ${address}: ${built.left.message}`)
          return undefined
        }
        const toAddress = amount > 0n ? owner!.address : sponsor.address
        yield* Effect.gen(function*() {
          yield* sql`INSERT INTO authorization_sweeps (grant_id, user_id, asset, from_address, to_address, amount, tx_hex, txid)
            VALUES (${grant.grantId}, ${grant.userId}, ${grant.asset}, ${address}, ${toAddress}, ${amount.toString()}, ${built.right.hex}, ${built.right.txid})`
          yield* sql`INSERT INTO authorization_events (grant_id, user_id, asset, kind, due_at, runner)
            VALUES (${grant.grantId}, ${grant.userId}, ${grant.asset}, 'swept', NULL, NULL) ON CONFLICT (grant_id, kind) DO NOTHING`
        }).pipe(sql.withTransaction)
        ;(yield* coins).spend(built.right.hex)
        yield* broadcastSweep(built.right.hex)
        return { txid: built.right.txid, amount, toAddress, repeated: false } satisfies SweepResult
      })

    const broadcastSweep = (hex: string) =>
      ledger.broadcast(hex).pipe(
        Effect.catchTag("LedgerTxRejected", (e) =>
          e.code === "already-known" ? Effect.void : Effect.logError(`sweep not broadcast: ${e.code} (${e.reason}); its bytes are in authorization_sweeps`)),
        Effect.catchTag("LedgerRpcError", (e) => Effect.logError(`sweep not broadcast: ${e.message}; its bytes are in authorization_sweeps`)),
        Effect.asVoid
      )

    return { address, signLegs, signAllUnsigned, failUnsigned, sweep }
  })

export type DelegatedWallet = Effect.Effect.Success<ReturnType<typeof makeDelegatedWallet>>
