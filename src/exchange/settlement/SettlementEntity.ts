// The Settlement entity, one per trade (entity id: the trade id). It follows the trade's two
// legs (settlement_legs) to the final depth with its own durable timers: a leg still unsigned is
// signed by its grant's Authorization entity (SignLegs); a signed one the ledger does not know
// (never sent, dropped, reorged out and lost) is sent again with its stored bytes; one in a
// block gets its confirmations, block and the Omni indexer's judgement recorded, and is final at
// SHARDLINE_SETTLEMENT_FINAL_DEPTH confirmations once judged valid, or failed if judged invalid.
// Everything it knows is in the rows, so a redelivered Follow or Check (kill -9, shard move) just
// looks again: it never builds a transaction, so it never pays a leg twice.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { Check, Settlement } from "../../../schemas/exchange/settlement.ts"
import { expectedBlockMs } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { type LegRow, makeLegLedger } from "./legLedger.ts"
import { afterSighting, isSettled, needsWrite, nextCheckInMs } from "./legState.ts"
import { accountChannel } from "../account/AccountReadModel.ts"

const metrics = entityMetrics("Settlement")
/**
 * Checks one Follow may schedule before the entity stops and says so (an operator looks; a new
 * Follow starts the count again): about 2000 blocks of a leg that never confirms.
 */
export const checksMax = 2_000


export const layer = Settlement.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const chain = yield* makeLegLedger
  const config = yield* ExchangeConfig
  const self = (yield* Settlement.client)(address.entityId)
  const tradeId = address.entityId
  const finalDepth = config.settlementFinalDepth
  const blockMs = expectedBlockMs(yield* AppConfig)
  yield* metrics.activated

  const legs = sql<LegRow>`SELECT leg, grant_id, status, tx_hex, txid, confirmations, block_height, block_hash
    FROM settlement_legs WHERE trade_id = ${tradeId} ORDER BY leg`

  /**
   * One look at every leg; the statuses and confirmations it leaves. A confirmed leg's row keeps
   * the count of its first block (`needsWrite`): the count the ledger gave now paces the next Check.
   */
  const look = Effect.gen(function*() {
    const counted = new Map<string, number>()
    let rows = yield* legs
    const unsigned = rows.filter((r) => r.status === "recorded" && r.tx_hex === null)
    if (yield* chain.signUnsigned(unsigned.map((r) => ({ tradeId, leg: r.leg, grantId: r.grant_id })))) rows = yield* legs
    for (const row of rows) {
      if (row.tx_hex === null || row.txid === null || isSettled(row.status)) continue
      const update = afterSighting(yield* chain.sight(row.txid), finalDepth)
      if (update === undefined) continue
      const sent = update.rebroadcast ? yield* chain.resend(`trade ${tradeId} ${row.leg}`, row.txid, row.tx_hex) : 0
      counted.set(row.leg, update.confirmations)
      if (!needsWrite({ status: row.status, confirmations: row.confirmations, blockHeight: row.block_height, blockHash: row.block_hash }, update, sent)) continue
      yield* sql`UPDATE settlement_legs SET status = ${update.status}, confirmations = ${update.confirmations},
          block_height = ${update.blockHeight}, block_hash = ${update.blockHash}, failure = ${update.failure},
          broadcasts = broadcasts + ${sent}, updated_at = now()
        WHERE trade_id = ${tradeId} AND leg = ${row.leg} AND txid = ${row.txid}`
      // The account's free balance counts unconfirmed legs: both traders' nodes reload it.
      if (update.status !== row.status) {
        yield* sql`SELECT pg_notify(${accountChannel}, u::text) FROM (SELECT buyer_user AS u FROM trades WHERE trade_id = ${tradeId}
          UNION SELECT seller_user FROM trades WHERE trade_id = ${tradeId}) t`
      }
    }
    return (yield* legs).map((r) => r.status === "confirmed" ? { ...r, confirmations: Math.max(r.confirmations, counted.get(r.leg) ?? 0) } : r)
  })

  /**
   * Looks at the legs, then schedules the next Check unless both are settled. `n` is the Check
   * being run (undefined for Follow): a Check older than the one the row expects is a stale
   * duplicate (a Follow delivered again started a newer one) and does nothing.
   */
  const run = (n: number | undefined) =>
    Effect.gen(function*() {
      const [follow] = yield* sql<{ check_n: string; done: boolean; checks: number }>`SELECT check_n::text AS check_n, done, checks
        FROM settlement_follows WHERE trade_id = ${tradeId}`
      if (n !== undefined && follow !== undefined && (follow.done || n < Number(follow.check_n))) return
      const now = yield* look
      if (now.length === 0) return yield* Effect.logWarning(`trade ${tradeId}: no settlement legs to follow`)
      const inMs = nextCheckInMs(now, finalDepth, blockMs)
      if (inMs === undefined) {
        yield* sql`INSERT INTO settlement_follows (trade_id, check_n, due_at_ms, done) VALUES (${tradeId}, 0, 0, true)
          ON CONFLICT (trade_id) DO UPDATE SET done = true, updated_at = now()`
        return
      }
      const checks = n === undefined ? 0 : (follow?.checks ?? 0)
      if (checks >= checksMax) {
        return yield* Effect.logError(`trade ${tradeId}: not settled after ${checks} checks; stopped (legs: ${now.map((l) => `${l.leg} ${l.status}`).join(", ")})`)
      }
      const next = Math.max(Date.now(), Number(follow?.check_n ?? 0) + 1)
      const dueAtMs = Date.now() + inMs
      // Sent before it is recorded: a crash in between leaves a Check newer than the row, which still runs.
      yield* self.Check(new Check({ tradeId, n: next, dueAtMs }), { discard: true })
      yield* sql`INSERT INTO settlement_follows (trade_id, check_n, due_at_ms, checks) VALUES (${tradeId}, ${next}, ${dueAtMs}, ${checks + 1})
        ON CONFLICT (trade_id) DO UPDATE SET check_n = GREATEST(settlement_follows.check_n, EXCLUDED.check_n),
          due_at_ms = EXCLUDED.due_at_ms, checks = EXCLUDED.checks, done = false, updated_at = now()`
    }).pipe(Effect.orDie)

  const validId = /^\d{1,19}$/.test(tradeId) ? Option.some(tradeId) : Option.none()

  return Settlement.of({
    Follow: () =>
      (Option.isNone(validId) ? Effect.logError(`Settlement: "${tradeId}" is not a trade id`) : run(undefined)).pipe(metrics.guard),
    Check: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        if (Option.isSome(validId)) yield* run(payload.n)
      }).pipe(metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
