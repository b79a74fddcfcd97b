// A market follows its own settlement legs once per block (issue 22, point 3). Each trade used to
// get a Settlement entity with persisted Follow and Check messages (about three persisted messages
// and twenty statements per trade); now the Market entity, which wrote the legs, reads its open
// legs when the ledger has a new block, learns from the new blocks' transaction lists which legs
// were mined and from the block hashes which are still where they were, and writes every change
// in one statement. A confirmed leg that only got another block on top is not a change: its row
// keeps its block height, and readers count its confirmations from the tip the sweep records for
// the market (exchange_market_tips). Only a leg whose block was reorged away, or that should have
// been mined by now and was not, is looked up on its own (and its stored bytes sent again if the
// ledger lost it); a leg left unsigned goes to its grant's Authorization entity. Nothing here is
// durable but the rows: a market that wakes on another node reads its open legs again and carries on.
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { expectedBlockMs } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { type LegRow, makeLegLedger } from "./legLedger.ts"
import { afterSighting, type BlockFacts, factsOfBlocks, type LegUpdate, needsWrite, type OpenLeg, type Sighting, sweepStep, type SweepTiming } from "./legState.ts"
import { accountChannel } from "../account/AccountReadModel.ts"

/** Blocks read per sweep at most (a node far behind catches up over several sweeps; lookups cover the rest). */
const blocksPerSweepMax = 50

/** A market's open leg: the row a look reads, with its trade and how long ago it changed. */
interface OpenLegRow extends LegRow {
  readonly trade_id: string
  readonly age_ms: string
}

const openLegOf = (r: OpenLegRow): OpenLeg => ({
  tradeId: r.trade_id,
  leg: r.leg,
  grantId: r.grant_id,
  status: r.status,
  txHex: r.tx_hex,
  txid: r.txid,
  confirmations: r.confirmations,
  blockHeight: r.block_height,
  blockHash: r.block_hash,
  ageMs: Number(r.age_ms)
})

/** What one sweep did (the market logs a summary when it changed anything; the bench reads it). */
export interface SweepFigures {
  readonly open: number
  readonly updated: number
  readonly lookedUp: number
  readonly signed: number
}

export const makeLegSweep = (marketId: number, label: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* UtxoLedger
    const chain = yield* makeLegLedger
    const finalDepth = (yield* ExchangeConfig).settlementFinalDepth
    const blockMs = expectedBlockMs(yield* AppConfig)
    // About two blocks out of every block before a sent leg is looked up on its own; an unsigned
    // leg is left to the market's inline signing for a little longer than it waits for it.
    const timing: SweepTiming = { staleMs: 2 * blockMs + 1_000, signAfterMs: 11_000 }
    /** Heights below this were read into `minedIn` by an earlier sweep. */
    let nextHeight: number | undefined
    let lastTip = ""
    /** The tip height this instance last recorded in exchange_market_tips. */
    let tipRecorded: number | undefined

    // A leg's bytes (hundreds of hex characters) only while it has no block: most open legs are
    // confirmed ones waiting for depth, and their bytes are needed only to send them again.
    const openLegs = sql<OpenLegRow>`SELECT l.trade_id::text AS trade_id, l.leg, l.grant_id, l.status,
        CASE WHEN l.block_height IS NULL THEN l.tx_hex END AS tx_hex, l.txid, l.confirmations,
        l.block_height, l.block_hash, (extract(epoch FROM now() - l.updated_at) * 1000)::bigint::text AS age_ms
      FROM settlement_legs l JOIN trades t USING (trade_id)
      WHERE l.status NOT IN ('final', 'failed') AND t.market_id = ${marketId}`

    /** The blocks since the last sweep (transaction → where it was mined) and the hashes at the legs' heights. */
    const blockFacts = (legs: ReadonlyArray<OpenLeg>, tipHeight: number) =>
      Effect.gen(function*() {
        // First sweep: nothing was read before; legs not in a block are looked up once they are stale.
        const from = Math.max(nextHeight ?? tipHeight + 1, tipHeight - blocksPerSweepMax + 1)
        const { hashAt, minedIn } = factsOfBlocks(tipHeight, from <= tipHeight ? (yield* ledger.blocks(from, tipHeight - from + 1)).blocks : [])
        for (const h of new Set(legs.flatMap((l) => (l.blockHeight === null ? [] : [l.blockHeight])))) {
          if (hashAt.has(h) || h > tipHeight) continue
          hashAt.set(h, (yield* ledger.blockAt(h)).hash)
        }
        return { tipHeight, hashAt, minedIn } satisfies BlockFacts
      })

    /** Sends a leg's stored bytes again, read now if the sweep did not (a leg whose block went away); 1 if the ledger took them. */
    const resend = (leg: OpenLeg) =>
      Effect.gen(function*() {
        const hex = leg.txHex ?? (yield* sql<{ tx_hex: string | null }>`SELECT tx_hex FROM settlement_legs
          WHERE trade_id = ${leg.tradeId} AND leg = ${leg.leg} AND txid = ${leg.txid}`)[0]?.tx_hex
        if (hex === undefined || hex === null) return 0 // its row moved on since the read (another look): the next sweep sees it as it is
        return yield* chain.resend(`${label} trade ${leg.tradeId} ${leg.leg}`, leg.txid!, hex)
      })

    /** One sweep: read the open legs, decide each, write what changed. */
    const sweep = Effect.gen(function*() {
      const tip = yield* ledger.tip
      const legs = (yield* openLegs).map(openLegOf)
      const facts = yield* blockFacts(legs, tip.height)
      nextHeight = tip.height + 1
      lastTip = tip.hash
      const toSign: Array<OpenLeg> = []
      const updates: Array<{ leg: OpenLeg; update: LegUpdate; sent: number }> = []
      let lookedUp = 0
      for (const leg of legs) {
        const step = sweepStep(leg, facts, timing)
        if (step._tag === "wait") continue
        if (step._tag === "sign") {
          toSign.push(leg)
          continue
        }
        let sighting: Sighting
        if (step._tag === "mined") {
          const omni = yield* chain.verdict(leg.txid!, step.blockHeight, step.blockHash)
          sighting = { _tag: "InBlock", confirmations: step.confirmations, blockHeight: step.blockHeight, blockHash: step.blockHash, omni }
        } else {
          lookedUp++
          sighting = yield* chain.sight(leg.txid!)
        }
        const update = afterSighting(sighting, finalDepth)
        if (update === undefined) continue
        const sent = update.rebroadcast ? yield* resend(leg) : 0
        if (needsWrite(leg, update, sent)) updates.push({ leg, update, sent })
      }
      if (toSign.length > 0) yield* chain.signUnsigned(toSign.map((l) => ({ tradeId: l.tradeId, leg: l.leg, grantId: l.grantId })))
      if (updates.length > 0) yield* write(updates)
      // Only legs in a block are counted from the tip; a market with none leaves its row as it is
      // (a later leg's count is never below its own row's, whatever the recorded tip).
      const inBlock = legs.some((l) => l.blockHeight !== null) || updates.some((u) => u.update.blockHeight !== null)
      if (inBlock && tip.height !== tipRecorded) yield* recordTip(tip.height)
      return { open: legs.length, updated: updates.length, lookedUp, signed: toSign.length } satisfies SweepFigures
    })

    /** Every change in one statement; both traders of a leg whose status moved get their account reloaded. */
    const write = (updates: ReadonlyArray<{ leg: OpenLeg; update: LegUpdate; sent: number }>) =>
      Effect.gen(function*() {
        const col = <A>(f: (u: { leg: OpenLeg; update: LegUpdate; sent: number }) => A) => updates.map(f)
        yield* sql`UPDATE settlement_legs l SET status = v.status, confirmations = v.confirmations, block_height = v.block_height,
            block_hash = v.block_hash, failure = v.failure, broadcasts = l.broadcasts + v.sent, updated_at = now()
          FROM unnest(${col((u) => u.leg.tradeId)}::bigint[], ${col((u) => u.leg.leg)}::text[], ${col((u) => u.leg.txid)}::text[],
                      ${col((u) => u.update.status)}::text[], ${col((u) => u.update.confirmations)}::int[],
                      ${col((u) => u.update.blockHeight)}::int[], ${col((u) => u.update.blockHash)}::text[],
                      ${col((u) => u.update.failure)}::text[], ${col((u) => u.sent)}::int[])
            AS v(trade_id, leg, txid, status, confirmations, block_height, block_hash, failure, sent)
          WHERE l.trade_id = v.trade_id AND l.leg = v.leg AND l.txid = v.txid`
        const moved = [...new Set(updates.filter((u) => u.update.status !== u.leg.status).map((u) => u.leg.tradeId))]
        if (moved.length > 0) {
          yield* sql`SELECT pg_notify(${accountChannel}, u::text) FROM (SELECT buyer_user AS u FROM trades WHERE trade_id = ANY(${moved}::bigint[])
            UNION SELECT seller_user FROM trades WHERE trade_id = ANY(${moved}::bigint[])) t`
        }
      })

    /** The tip readers count confirmed legs' confirmations from (legState.ts, `shownConfirmations`). */
    const recordTip = (height: number) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO exchange_market_tips (market_id, tip_height) VALUES (${marketId}, ${height})
          ON CONFLICT (market_id) DO UPDATE SET tip_height = EXCLUDED.tip_height, updated_at = now()`
        tipRecorded = height
      })

    /** Whether the ledger has a block the last sweep did not see. */
    const tipMoved = Effect.map(ledger.tip, (t) => t.hash !== lastTip)

    return { sweep, tipMoved }
  })
