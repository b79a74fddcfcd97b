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
import { Duration, Effect, Either, Option } from "effect"
import { Authorization, type LegName, SignLegs } from "../../../schemas/exchange/authorization.ts"
import { Check, Settlement } from "../../../schemas/exchange/settlement.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { expectedBlockMs } from "../../platform/ChainsLive.ts"
import { AppConfig } from "../../platform/Config.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { entityIdOf } from "../authorization/policy.ts"
import { afterSighting, isSettled, type LegStatus, nextCheckInMs, type Sighting } from "./legState.ts"

const metrics = entityMetrics("Settlement")
/**
 * Checks one Follow may schedule before the entity stops and says so (an operator looks; a new
 * Follow starts the count again): about 2000 blocks of a leg that never confirms.
 */
export const checksMax = 2_000
/** How long a check waits for an Authorization entity to sign before trying again at the next check. */
export const signTimeoutMs = 30_000

interface LegRow {
  readonly leg: LegName
  readonly grant_id: string
  readonly status: LegStatus
  readonly tx_hex: string | null
  readonly txid: string | null
  readonly confirmations: number
  readonly block_height: number | null
  readonly block_hash: string | null
}

export const layer = Settlement.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const ledger = yield* UtxoLedger
  const omni = yield* OmniView
  const sponsor = yield* FeeSponsor
  const config = yield* ExchangeConfig
  const self = (yield* Settlement.client)(address.entityId)
  const authorization = yield* Authorization.client
  const tradeId = address.entityId
  const finalDepth = config.settlementFinalDepth
  const blockMs = expectedBlockMs(yield* AppConfig)
  yield* metrics.activated

  const legs = sql<LegRow>`SELECT leg, grant_id, status, tx_hex, txid, confirmations, block_height, block_hash
    FROM settlement_legs WHERE trade_id = ${tradeId} ORDER BY leg`

  /** Unsigned legs go to their grant's Authorization entity; a grant that is gone fails them. */
  const signUnsigned = (rows: ReadonlyArray<LegRow>) =>
    Effect.gen(function*() {
      const byGrant = new Map<string, LegName[]>()
      for (const r of rows) if (r.status === "recorded" && r.tx_hex === null) byGrant.set(r.grant_id, [...(byGrant.get(r.grant_id) ?? []), r.leg])
      for (const [grantId, names] of byGrant) {
        const [grant] = yield* sql<{ user_id: string; asset: string }>`SELECT user_id::text AS user_id, asset FROM authorizations WHERE grant_id = ${grantId}`
        if (grant === undefined) {
          // The grant's expiry signs its unsigned legs before the key goes; one left now can never be.
          yield* sql`UPDATE settlement_legs SET status = 'failed', failure = 'the grant ended before the leg was signed', updated_at = now()
            WHERE trade_id = ${tradeId} AND grant_id = ${grantId} AND tx_hex IS NULL`
          continue
        }
        yield* authorization(entityIdOf(Number(grant.user_id), grant.asset))
          .SignLegs(new SignLegs({ grantId, legs: names.map((leg) => ({ tradeId, leg })) }))
          .pipe(
            Effect.timeoutFail({ duration: Duration.millis(signTimeoutMs), onTimeout: () => ({ _tag: "Timeout", message: `no answer within ${signTimeoutMs} ms` }) }),
            Effect.catchAll((e: { readonly message: string }) => Effect.logWarning(`trade ${tradeId}: legs of grant ${grantId} not signed yet: ${e.message}`))
          )
      }
      return byGrant.size > 0
    })

  /** What the ledger and the Omni view say about a signed leg. */
  const sight = (txid: string): Effect.Effect<Sighting> =>
    Effect.gen(function*() {
      const found = yield* ledger.getTx(txid).pipe(Effect.either)
      if (Either.isLeft(found)) return found.left._tag === "LedgerTxNotFound" ? { _tag: "NotFound" } as const : { _tag: "Unknown" } as const
      const tx = found.right
      if (tx.confirmations < 1 || tx.blockHeight === undefined || tx.blockHash === undefined) return { _tag: "InMempool" } as const
      let judged = yield* omni.tx(txid)
      if (judged === undefined && (yield* omni.height) < tx.blockHeight) {
        yield* omni.sync
        judged = yield* omni.tx(txid)
      }
      // A judgement from a block that was reorged away does not count.
      if (judged !== undefined && judged.blockHash !== tx.blockHash) judged = undefined
      const verdict = judged === undefined ? undefined : judged.valid ? { valid: true as const } : { valid: false as const, reason: judged.reason ?? "invalid" }
      return { _tag: "InBlock", confirmations: tx.confirmations, blockHeight: tx.blockHeight, blockHash: tx.blockHash, omni: verdict } as const
    })

  /** One look at every leg; the statuses and confirmations it leaves. */
  const look = Effect.gen(function*() {
    let rows = yield* legs
    if (yield* signUnsigned(rows)) rows = yield* legs
    for (const row of rows) {
      if (row.tx_hex === null || row.txid === null || isSettled(row.status)) continue
      const update = afterSighting(yield* sight(row.txid), finalDepth)
      if (update === undefined) continue
      let sent = 0
      if (update.rebroadcast) {
        sent = yield* ledger.broadcast(row.tx_hex).pipe(
          Effect.as(1),
          Effect.catchAll((e) =>
            Effect.gen(function*() {
              yield* Effect.logWarning(`trade ${tradeId} ${row.leg}: rebroadcast of ${row.txid} refused: ${"reason" in e ? e.reason : e.message}`)
              // A parent is missing: the sponsor's funding may be lost too (dropped, or reorged out).
              // Its bytes go back first; the leg's own parents are other legs, sent by their checks.
              if (e._tag !== "LedgerTxRejected" || e.code !== "missing-inputs") return 0
              yield* sponsor.repair
              return yield* ledger.broadcast(row.tx_hex!).pipe(Effect.as(1), Effect.orElseSucceed(() => 0))
            }))
        )
        if (sent === 1) yield* Effect.logInfo(`trade ${tradeId} ${row.leg}: ${row.txid} was not on the ledger; sent its stored bytes again`)
      }
      const unchanged = update.status === row.status && update.confirmations === row.confirmations &&
        update.blockHash === row.block_hash && sent === 0 && update.failure === null
      if (unchanged) continue
      yield* sql`UPDATE settlement_legs SET status = ${update.status}, confirmations = ${update.confirmations},
          block_height = ${update.blockHeight}, block_hash = ${update.blockHash}, failure = ${update.failure},
          broadcasts = broadcasts + ${sent}, updated_at = now()
        WHERE trade_id = ${tradeId} AND leg = ${row.leg} AND txid = ${row.txid}`
      // The account's free balance counts unconfirmed legs: both traders' nodes reload it.
      if (update.status !== row.status) {
        yield* sql`SELECT pg_notify('shardline_accounts', u::text) FROM (SELECT buyer_user AS u FROM trades WHERE trade_id = ${tradeId}
          UNION SELECT seller_user FROM trades WHERE trade_id = ${tradeId}) t`
      }
    }
    return yield* legs
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
