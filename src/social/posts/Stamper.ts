// Stamping: a real ledger transaction from a derived address (a post's, or an account's identity
// address) whose only other output is change back to the same address, with one OP_RETURN
// `<tag>|<cid>|<suffix>` (opReturn.ts). The first stamp of an address spends a coin the fee
// sponsor pays it; each later one spends the previous stamp's change, so an address's stamps
// form one chain anyone can walk back from its unspent coin (Timeline.ts).
//
// Per address, stamps are serialised by a transaction-scoped advisory lock; each row is written
// (social_stamps) before its transaction is broadcast, so a stamp the ledger lost is sent again
// with the same bytes before the next one is built on it.
import { SqlClient } from "@effect/sql"
import { Transaction } from "bitcoinjs-lib"
import { Effect, Either, Schema } from "effect"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { addressScript, buildStamp } from "../../chain/txBuilder.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { encodeStamp, type StampTag } from "./opReturn.ts"

/** What the sponsor pays an address for its stamps, sats: about 300 stamps at 1 sat/vB. */
export const stampFloatSats = 100_000n
/** Below this the change cannot pay another stamp and stay above dust: fund again. */
const STAMP_FEE_HEADROOM_SATS = 1_000n

export class StampFailed extends Schema.TaggedError<StampFailed>()("StampFailed", { message: Schema.String }) {}

export interface StampRequest {
  readonly address: string
  readonly privateKey: Uint8Array
  readonly account: string
  readonly assetId: string
  readonly postId: string | null
  readonly tag: StampTag
  readonly cid: string
  /**
   * The social_owed_stamps row this stamp pays (owedStamps.ts): marked with the txid in the
   * transaction that records the stamp; a row already paid makes no second stamp (null answer).
   */
  readonly owedId?: string
  /**
   * A stamp the address makes once for its tag and CID (a post's required C, P and CHV1P, from the
   * post's own address): if one is recorded when the lock is taken, it is the answer and no other
   * is made. Two runs of one post's publish can overlap: a Post request is uninterruptible, so a
   * node that lost its shard in a database cut goes on while the shard's new owner runs the same
   * request again; both read "no C yet" before either had recorded one, and the post was stamped
   * twice (chaos seed 6).
   */
  readonly once?: boolean
}

export interface Stamp {
  readonly txid: string
  readonly opReturn: string
  readonly seq: number
}

interface StampRow {
  readonly txid: string
  readonly seq: number
  readonly tx_hex: string
  readonly change_vout: number | null
  readonly change_value: string | null
}

const failed = (e: unknown) =>
  new StampFailed({ message: `stamp: ${typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)}` })

export const stamp = (req: StampRequest) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const sponsor = yield* FeeSponsor
    const params = ledger.params
    const script = Either.getOrThrow(addressScript(req.address, params))
    const rows = sql<StampRow>`SELECT txid, seq, tx_hex, change_vout, change_value::text AS change_value FROM social_stamps
      WHERE address = ${req.address} ORDER BY seq`

    /**
     * Builds, signs and records the next stamp of the address under its lock, on the previous
     * stamp's change or else on `funded`; without either it asks for a funding (undefined).
     */
    /** The oldest sponsor funding of this address (journaled, not dropped) that none of its stamps spends. */
    const unspentFunding = (chain: ReadonlyArray<StampRow>) =>
      Effect.map(
        sql<{ txid: string; tx_hex: string }>`SELECT txid, tx_hex FROM fee_sponsor_txs WHERE to_address = ${req.address} AND dropped_at IS NULL ORDER BY seq`,
        (fundings) => {
          const spent = new Set(chain.flatMap((row) => Transaction.fromHex(row.tx_hex).ins.map((i) => Buffer.from(i.hash).reverse().toString("hex"))))
          return fundings.find((f) => !spent.has(f.txid))
        }
      )

    const build = (funded: { readonly txid: string; readonly tx_hex: string } | undefined) => Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`social-stamp:${req.address}`}))`
      if (req.once === true) {
        const [made] = yield* sql<{ txid: string; op_return: string; seq: number }>`SELECT txid, op_return, seq FROM social_stamps
          WHERE address = ${req.address} AND tag = ${req.tag} AND cid = ${req.cid} ORDER BY seq LIMIT 1`
        if (made !== undefined) return { txid: made.txid, hex: undefined, opReturn: made.op_return, seq: made.seq }
      }
      if (req.owedId !== undefined) {
        const [owed] = yield* sql<{ txid: string | null }>`SELECT txid FROM social_owed_stamps WHERE id = ${req.owedId} FOR UPDATE`
        if (owed?.txid != null) return yield* new StampFailed({ message: "already_paid" })
      }
      const chain = yield* rows
      const last = chain.at(-1)
      const seq = last === undefined ? 0 : last.seq + 1
      const opReturn = encodeStamp({ tag: req.tag, cid: req.cid, assetId: req.assetId, seq })
      let input = last !== undefined && last.change_vout !== null && BigInt(last.change_value!) >= params.dustSats + STAMP_FEE_HEADROOM_SATS
        ? { txid: last.txid, vout: last.change_vout, value: BigInt(last.change_value!), script, prevTxHex: last.tx_hex }
        : undefined
      if (input === undefined) {
        // A funding journaled for this address earlier that no stamp spends yet (its stamp
        // failed after it, or its broadcast did not get through) is used before a new one.
        const coin = funded ?? (yield* unspentFunding(chain))
        if (coin === undefined) return undefined
        input = { txid: coin.txid, vout: 0, value: stampFloatSats, script, prevTxHex: coin.tx_hex }
      }
      const built = buildStamp(params, { inputs: [input], signer: { privateKey: req.privateKey }, changeAddress: req.address, data: Buffer.from(opReturn, "ascii") })
      if (Either.isLeft(built)) return yield* new StampFailed({ message: `stamp: ${built.left.message}` })
      const outs = Transaction.fromHex(built.right.hex).outs
      const change = outs[1]
      yield* sql`INSERT INTO social_stamps (txid, address, seq, post_id, account, tag, cid, op_return, tx_hex, change_vout, change_value)
        VALUES (${built.right.txid}, ${req.address}, ${seq}, ${req.postId}, ${req.account}, ${req.tag}, ${req.cid}, ${opReturn},
          ${built.right.hex}, ${change === undefined ? null : 1}, ${change === undefined ? null : change.value.toString()})`
      if (req.owedId !== undefined) {
        yield* sql`UPDATE social_owed_stamps SET txid = ${built.right.txid} WHERE id = ${req.owedId}`
        // A comment's txid is its X's (its XM follows on the same address).
        if (req.tag === "X") yield* sql`UPDATE social_comments SET txid = ${built.right.txid} WHERE id = (SELECT comment_id FROM social_owed_stamps WHERE id = ${req.owedId})`
      }
      return { txid: built.right.txid, hex: built.right.hex, opReturn, seq }
    }).pipe(sql.withTransaction)
    // The sponsor's funding is journaled and committed in its own transaction before it is
    // broadcast (FeeSponsor.fund), never inside this stamp's: a crash can never leave a funding on
    // the chain that the journal does not hold. Two stamps of one address racing for a funding
    // leave at most one unused coin at that address (the loser builds on the winner's change).
    const first = yield* build(undefined)
    const signed = first ?? (yield* Effect.flatMap(sponsor.fund(req.address, 1, stampFloatSats), (funding) => build({ txid: funding.txid, tx_hex: funding.hex })))
    if (signed === undefined) return yield* new StampFailed({ message: "stamp: no coin to build on after funding" })
    // Made already (`once`): whoever recorded it sends it; a lost one is sent again by StampCompletion.ts.
    if (signed.hex === undefined) return { txid: signed.txid, opReturn: signed.opReturn, seq: signed.seq } satisfies Stamp
    const hex = signed.hex

    /** Sends the stamp; when a parent is missing, the address's earlier stamps (and the sponsor's fundings) go again first. */
    const send = ledger.broadcast(hex).pipe(
      Effect.catchTag("LedgerTxRejected", (e) =>
        e.code !== "missing-inputs" ? Effect.fail(e) : Effect.gen(function*() {
          yield* sponsor.repair
          for (const row of yield* rows) {
            if (row.txid === signed.txid) break
            yield* ledger.broadcast(row.tx_hex).pipe(Effect.ignore)
          }
          return yield* ledger.broadcast(hex)
        })),
      Effect.catchTag("LedgerTxRejected", (e) => (e.code === "already-known" ? Effect.succeed(signed.txid) : Effect.fail(e)))
    )
    // A refused stamp is dropped (the next attempt builds another); one the ledger did not answer
    // for (unreachable, timed out) may have reached it: its row stays and is sent again with the
    // same bytes (StampCompletion.ts), never re-made on the same coin.
    yield* send.pipe(Effect.tapError((e) =>
      e._tag === "LedgerTxRejected"
        ? Effect.all([
          sql`DELETE FROM social_stamps WHERE txid = ${signed.txid}`,
          // An owed stamp refused is owed again (made anew on the next attempt).
          sql`UPDATE social_owed_stamps SET txid = NULL WHERE txid = ${signed.txid}`,
          sql`UPDATE social_comments SET txid = NULL WHERE txid = ${signed.txid}`
        ]).pipe(sql.withTransaction, Effect.ignore)
        : Effect.void))
    return { txid: signed.txid, opReturn: signed.opReturn, seq: signed.seq } satisfies Stamp
  }).pipe(Effect.mapError((e) => (e instanceof StampFailed ? e : failed(e))))
