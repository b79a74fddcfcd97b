// What a leg's transaction looks like on the ledger, and sending its stored bytes again: shared by
// the Settlement entity (one trade) and the market's per-block sweep (legSweep.ts).
import { SqlClient } from "@effect/sql"
import { Duration, Effect, Either } from "effect"
import { Authorization, type LegName, SignLegs } from "../../../schemas/exchange/authorization.ts"
import { UtxoLedger } from "../../chain/ledger/UtxoLedger.ts"
import { FeeSponsor } from "../../platform/ledger/FeeSponsor.ts"
import { OmniView } from "../../platform/ledger/OmniView.ts"
import { entityIdOf } from "../authorization/policy.ts"
import type { LegStatus, Sighting } from "./legState.ts"

/** A settlement leg's row as a look reads it. */
export interface LegRow {
  readonly leg: LegName
  readonly grant_id: string
  readonly status: LegStatus
  readonly tx_hex: string | null
  readonly txid: string | null
  readonly confirmations: number
  readonly block_height: number | null
  readonly block_hash: string | null
}

/** How long a look waits for an Authorization entity to sign before trying again at the next look. */
export const signTimeoutMs = 30_000

export const makeLegLedger = Effect.gen(function*() {
  const ledger = yield* UtxoLedger
  const omni = yield* OmniView
  const sponsor = yield* FeeSponsor
  const sql = yield* SqlClient.SqlClient
  const authorization = yield* Authorization.client

  /**
   * Unsigned legs go to their grant's Authorization entity, one SignLegs per grant; the legs of a
   * grant that is gone are failed (its expiry signs what it can before the key goes, so one left
   * now never can be). True if there was anything to sign.
   */
  const signUnsigned = (legs: ReadonlyArray<{ readonly tradeId: string; readonly leg: LegName; readonly grantId: string }>) =>
    Effect.gen(function*() {
      const byGrant = new Map<string, Array<{ tradeId: string; leg: LegName }>>()
      for (const l of legs) byGrant.set(l.grantId, [...(byGrant.get(l.grantId) ?? []), { tradeId: l.tradeId, leg: l.leg }])
      for (const [grantId, refs] of byGrant) {
        const [grant] = yield* sql<{ user_id: string; asset: string }>`SELECT user_id::text AS user_id, asset FROM authorizations WHERE grant_id = ${grantId}`
        if (grant === undefined) {
          yield* sql`UPDATE settlement_legs SET status = 'failed', failure = 'the grant ended before the leg was signed', updated_at = now()
            WHERE grant_id = ${grantId} AND tx_hex IS NULL
              AND (trade_id, leg) IN (SELECT * FROM unnest(${refs.map((r) => r.tradeId)}::bigint[], ${refs.map((r) => r.leg)}::text[]))`
          continue
        }
        yield* authorization(entityIdOf(Number(grant.user_id), grant.asset)).SignLegs(new SignLegs({ grantId, legs: refs })).pipe(
          Effect.timeoutFail({ duration: Duration.millis(signTimeoutMs), onTimeout: () => ({ _tag: "Timeout", message: `no answer within ${signTimeoutMs} ms` }) }),
          Effect.catchAll((e: { readonly message: string }) => Effect.logWarning(`legs of grant ${grantId} not signed yet: ${e.message}`))
        )
      }
      return byGrant.size > 0
    })

  /** The Omni indexer's judgement of a transaction in `blockHash` at `blockHeight` (undefined: not judged yet). */
  const verdict = (txid: string, blockHeight: number, blockHash: string) =>
    Effect.gen(function*() {
      let judged = yield* omni.tx(txid)
      if (judged === undefined && (yield* omni.height) < blockHeight) {
        yield* omni.sync
        judged = yield* omni.tx(txid)
      }
      // A judgement from a block that was reorged away does not count.
      if (judged === undefined || judged.blockHash !== blockHash) return undefined
      return judged.valid ? { valid: true as const } : { valid: false as const, reason: judged.reason ?? "invalid" }
    })

  /** What the ledger and the Omni view say about one signed leg. */
  const sight = (txid: string): Effect.Effect<Sighting> =>
    Effect.gen(function*() {
      const found = yield* ledger.getTx(txid).pipe(Effect.either)
      if (Either.isLeft(found)) return found.left._tag === "LedgerTxNotFound" ? { _tag: "NotFound" } as const : { _tag: "Unknown" } as const
      const tx = found.right
      if (tx.confirmations < 1 || tx.blockHeight === undefined || tx.blockHash === undefined) return { _tag: "InMempool" } as const
      return { _tag: "InBlock", confirmations: tx.confirmations, blockHeight: tx.blockHeight, blockHash: tx.blockHash, omni: yield* verdict(txid, tx.blockHeight, tx.blockHash) } as const
    })

  /** Sends a leg's stored bytes again; 1 if the ledger took them. A missing parent may be the sponsor's lost funding: it goes back first. */
  const resend = (label: string, txid: string, txHex: string): Effect.Effect<number> =>
    ledger.broadcast(txHex).pipe(
      Effect.as(1),
      Effect.catchAll((e) =>
        Effect.gen(function*() {
          yield* Effect.logWarning(`${label}: rebroadcast of ${txid} refused: ${"reason" in e ? e.reason : e.message}`)
          // The leg's own parents are other legs, sent by their own looks.
          if (e._tag !== "LedgerTxRejected" || e.code !== "missing-inputs") return 0
          yield* sponsor.repair
          return yield* ledger.broadcast(txHex).pipe(Effect.as(1), Effect.orElseSucceed(() => 0))
        })),
      Effect.tap((sent) => sent === 1 ? Effect.logInfo(`${label}: ${txid} was not on the ledger; sent its stored bytes again`) : Effect.void)
    )

  return { signUnsigned, sight, verdict, resend }
})
