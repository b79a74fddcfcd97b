// The Continuity entity, one per account (entity id: its identity address). Start stores a
// continuity manifest by CID ({account, newAddress, startedAt, completesAt}), stamps CHV1G from
// the identity address and sets its own timer for the end of the countdown
// (SHARDLINE_SOCIAL_CONTINUITY_COUNTDOWN_MS); Complete, unless the countdown was cancelled in
// between, stamps CHV1N with the same manifest: succession to the new identity address. State is
// the social_continuity row; a Complete whose countdown is not the row's (cancelled, or a newer
// one) does nothing.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Option, Stream } from "effect"
import { CompleteCountdown, Continuity, ContinuityRefused, type ContinuityView } from "../../../schemas/social/continuity.ts"
import { validateLedgerAddress } from "../../chain/address.ts"
import { canonicalJson } from "../../crypto/canonicalJson.ts"
import { SocialConfig } from "../SocialConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { ContentStore } from "../content/ContentStore.ts"
import { stamp } from "../posts/Stamper.ts"
import { accountKey, type AccountRow, findAccount } from "./Accounts.ts"
import { completeSuccession, identityTaken } from "./Succession.ts"
import { refuseOrRetry } from "../../platform/entity/refuseOrRetry.ts"

const metrics = entityMetrics("Continuity")

interface Row {
  readonly account: string
  readonly new_address: string
  readonly manifest_cid: string
  readonly completes_at_ms: string
  readonly state: "counting" | "completed" | "cancelled"
  readonly started_txid: string | null
  readonly completed_txid: string | null
  readonly started_at_ms: string
}

const viewOf = (r: Row): ContinuityView => ({
  account: r.account, newAddress: r.new_address, manifestCid: r.manifest_cid, state: r.state,
  completesAt: new Date(Number(r.completes_at_ms)).toISOString(), startedTxid: r.started_txid, completedTxid: r.completed_txid
})

const asRefusal = (e: unknown): ContinuityRefused =>
  e instanceof ContinuityRefused ? e : new ContinuityRefused({ code: (e as { code?: string })?.code ?? "unavailable", message: (e as { message?: string })?.message ?? String(e) })

export const layer = Continuity.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const config = yield* SocialConfig
  const store = yield* ContentStore
  const self = (yield* Continuity.client)(address.entityId)
  const accountAddress = address.entityId
  yield* metrics.activated

  const row = Effect.map(
    sql<Row>`SELECT account, new_address, manifest_cid, completes_at_ms::text AS completes_at_ms, state, started_txid, completed_txid,
      started_at_ms::text AS started_at_ms FROM social_continuity WHERE account = ${accountAddress}`,
    (rows) => Option.fromNullable(rows[0])
  )
  const account = Effect.flatMap(findAccount(accountAddress), Option.match({
    onNone: () => Effect.fail(new ContinuityRefused({ code: "unknown_account", message: `no social account ${accountAddress.slice(0, 40)}` })),
    onSome: Effect.succeed
  }))
  const stampIdentity = (a: AccountRow, tag: "CHV1G" | "CHV1N", cid: string) =>
    Effect.gen(function*() {
      const key = yield* accountKey(a, "identity")
      return yield* stamp({ address: a.address, privateKey: key.privateKey, account: a.address, assetId: a.asset_id, postId: null, tag, cid })
    })

  return Continuity.of({
    Start: ({ payload }) =>
      Effect.gen(function*() {
        const a = yield* account
        if (payload.account !== accountAddress) return yield* new ContinuityRefused({ code: "invalid_parameter", message: "account does not match the entity" })
        if (!validateLedgerAddress(payload.newAddress).valid || payload.newAddress === accountAddress) {
          return yield* new ContinuityRefused({ code: "invalid_parameter", message: "newAddress must be another ledger address (T…)" })
        }
        if (yield* identityTaken(payload.newAddress)) {
          return yield* new ContinuityRefused({ code: "invalid_parameter", message: "newAddress is already an identity address of a social account" })
        }
        const current = yield* row
        if (Option.isSome(current) && current.value.state !== "cancelled") {
          return yield* new ContinuityRefused({ code: "countdown_exists", message: `a countdown is already ${current.value.state}` })
        }
        const startedAtMs = Date.now()
        const completesAtMs = startedAtMs + config.socialContinuityCountdownMs
        const manifest = canonicalJson({
          version: 1, type: "continuity", account: accountAddress, newAddress: payload.newAddress,
          startedAt: new Date(startedAtMs).toISOString(), completesAt: new Date(completesAtMs).toISOString()
        })
        const stored = yield* store.put(Stream.succeed(Buffer.from(manifest, "utf8")), "application/json")
        yield* sql`INSERT INTO social_continuity (account, new_address, manifest_cid, completes_at_ms, state, started_at_ms)
          VALUES (${accountAddress}, ${payload.newAddress}, ${stored.cid}, ${completesAtMs}, 'counting', ${startedAtMs})
          ON CONFLICT (account) DO UPDATE SET new_address = EXCLUDED.new_address, manifest_cid = EXCLUDED.manifest_cid,
            completes_at_ms = EXCLUDED.completes_at_ms, state = 'counting', started_txid = NULL, completed_txid = NULL, started_at_ms = EXCLUDED.started_at_ms`
        const g = yield* stampIdentity(a, "CHV1G", stored.cid)
        yield* sql`UPDATE social_continuity SET started_txid = ${g.txid} WHERE account = ${accountAddress}`
        yield* self.Complete(new CompleteCountdown({ account: accountAddress, startedAtMs, dueAtMs: completesAtMs }), { discard: true })
        return viewOf(Option.getOrThrow(yield* row))
      }).pipe(refuseOrRetry(asRefusal), metrics.guard),

    Cancel: () =>
      Effect.gen(function*() {
        const current = yield* row
        if (Option.isNone(current) || current.value.state !== "counting") {
          return yield* new ContinuityRefused({ code: "no_countdown", message: "no countdown is running" })
        }
        yield* sql`UPDATE social_continuity SET state = 'cancelled' WHERE account = ${accountAddress} AND state = 'counting'`
        return viewOf(Option.getOrThrow(yield* row))
      }).pipe(refuseOrRetry(asRefusal), metrics.guard),

    Complete: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        const current = yield* row
        if (Option.isNone(current) || current.value.state !== "counting" || Number(current.value.started_at_ms) !== payload.startedAtMs) return
        const n = yield* stampIdentity(yield* account, "CHV1N", current.value.manifest_cid)
        // Succession, with the row's state in one commit: the account is known, and signs in, by the new address from now on.
        yield* Effect.gen(function*() {
          yield* sql`UPDATE social_continuity SET state = 'completed', completed_txid = ${n.txid} WHERE account = ${accountAddress} AND state = 'counting'`
          yield* completeSuccession(accountAddress, accountAddress, current.value.new_address, n.txid)
        }).pipe(sql.withTransaction)
        yield* Effect.logInfo(`account ${accountAddress}: succession to ${current.value.new_address} completed (${n.txid})`)
      }).pipe(Effect.orDie, metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
