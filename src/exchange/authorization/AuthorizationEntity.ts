// The Authorization entity: holds one user's grant for one asset. It makes the delegated key
// itself (so key material never travels in a cluster message), seals it under the key of the
// epoch its grant expires in (KeyEpochStore.ts), commits before it answers, and schedules its own
// durable expiry, at which the sealed key is deleted from every table; when the epoch ends the
// key that opens it is destroyed too, so no copy of the row (WAL, backup) opens any more.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { randomUUID } from "node:crypto"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { Effect, Either, Layer, Option } from "effect"
import { Authorization, Expire, GrantRefused, type Granted, LegsRefused } from "../../../schemas/exchange/authorization.ts"
import { p2pkhAddressOfPubkey } from "../../chain/address.ts"
import { ledgerParams } from "../../chain/params.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { NodeIdentity } from "../../platform/NodeIdentity.ts"
import { notifyAccountChanged } from "../account/AccountReadModel.ts"
import { KeyEpochs, layer as keyEpochsLayer } from "./KeyEpochStore.ts"
import { parseCap, parseEntityId, type PolicyInvalid } from "./policy.ts"

const ECPair = ECPairFactory(ecc)
const metrics = entityMetrics("Authorization")

interface Row {
  readonly grant_id: string
  readonly cap: string
  readonly expires_at: Date
  readonly delegated_address: string
}

const newDelegatedKey = () => {
  const key = ECPair.makeRandom({ network: ledgerParams.network })
  // A fresh compressed key always has an address; anything else is a broken invariant.
  const address = Either.getOrThrowWith(
    p2pkhAddressOfPubkey(key.publicKey),
    (e) => new Error(`delegated key without an address: ${e.message}`)
  )
  return { wif: key.toWIF(), address }
}

const refused = (e: PolicyInvalid) => new GrantRefused({ message: e.message })

export const AuthorizationLive = Authorization.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const keys = yield* KeyEpochs
  const node = yield* NodeIdentity
  const self = (yield* Authorization.client)(address.entityId)
  const id = parseEntityId(address.entityId)
  yield* metrics.activated

  const current = sql<Row>`SELECT grant_id, cap::text AS cap, expires_at, delegated_address FROM authorizations
    WHERE user_id = ${Either.isRight(id) ? id.right.userId : -1} AND asset = ${Either.isRight(id) ? id.right.asset : ""}`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0]))
  )

  /** Deletes the key and the grant in one transaction; the event row records it happened once. */
  const destroy = (grantId: string, kind: "expired" | "replaced", dueAtMs: number | null) =>
    Effect.gen(function*() {
      yield* sql`DELETE FROM authorization_keys WHERE grant_id = ${grantId}`
      const gone = yield* sql<{ user_id: string; asset: string }>`DELETE FROM authorizations WHERE grant_id = ${grantId}
        RETURNING user_id, asset`
      if (gone.length > 0) {
        yield* sql`INSERT INTO authorization_events (grant_id, user_id, asset, kind, due_at, runner)
          VALUES (${grantId}, ${gone[0]!.user_id}, ${gone[0]!.asset}, ${kind},
            ${dueAtMs === null ? null : new Date(dueAtMs)}, ${node.name})
          ON CONFLICT (grant_id, kind) DO NOTHING`
        yield* notifyAccountChanged(Number(gone[0]!.user_id)) // delivered at commit
      }
      return gone.length > 0
    })

  const scheduleExpiry = (grantId: string, dueAtMs: number) =>
    self.Expire(new Expire({ grantId, dueAtMs }), { discard: true })

  // A grant whose timer was lost (it cannot be, but a restore from backup could) still expires.
  const existing = yield* current.pipe(Effect.orDie)
  if (Option.isSome(existing)) {
    yield* scheduleExpiry(existing.value.grant_id, existing.value.expires_at.getTime()).pipe(Effect.orDie)
  }

  return Authorization.of({
    Grant: ({ payload }) =>
      Effect.gen(function*() {
        const { userId, asset } = yield* Effect.mapError(id, refused)
        const cap = yield* Effect.mapError(parseCap(payload.cap), refused)
        if (payload.expiresAtMs <= Date.now()) {
          return yield* Effect.fail(new GrantRefused({ message: "expiry is in the past" }))
        }
        const result = yield* Effect.gen(function*() {
          const now = yield* current
          if (Option.isSome(now) && now.value.grant_id === payload.grantId) {
            // Redelivered after a crash between commit and reply: answer with what was committed.
            return { asset, grantId: payload.grantId, cap: now.value.cap, expiresAt: now.value.expires_at.getTime(), delegatedAddress: now.value.delegated_address }
          }
          if (Option.isSome(now)) yield* destroy(now.value.grant_id, "replaced", null)
          const key = newDelegatedKey()
          const sealed = yield* Effect.mapError(keys.seal(payload.grantId, payload.expiresAtMs, key.wif),
            (e) => new GrantRefused({ message: `cannot seal the delegated key: ${e.message}` }))
          yield* sql`INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address)
            VALUES (${userId}, ${asset}, ${payload.grantId}, ${cap}, ${new Date(payload.expiresAtMs)}, ${key.address})`
          yield* sql`INSERT INTO authorization_keys (grant_id, key_enc) VALUES (${payload.grantId}, ${sealed})`
          yield* sql`INSERT INTO authorization_events (grant_id, user_id, asset, kind, due_at, runner)
            VALUES (${payload.grantId}, ${userId}, ${asset}, 'granted', ${new Date(payload.expiresAtMs)}, ${node.name})
            ON CONFLICT (grant_id, kind) DO NOTHING`
          yield* notifyAccountChanged(userId) // every node's AccountReadModel drops the user at commit
          return { asset, grantId: payload.grantId, cap, expiresAt: payload.expiresAtMs, delegatedAddress: key.address } satisfies Granted
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die))
        // Scheduled after the commit; if we crash before this line the grant is redelivered
        // (no reply yet), finds its row above and schedules again (the timer key dedups).
        yield* scheduleExpiry(result.grantId, result.expiresAt).pipe(Effect.orDie)
        return result
      }).pipe(metrics.guard),

    Expire: ({ payload }) =>
      Effect.gen(function*() {
        const lag = Date.now() - payload.dueAtMs
        yield* metrics.timerFired(payload.dueAtMs)
        // A stale timer (its grant was replaced) finds nothing to delete and does nothing.
        const destroyed = yield* destroy(payload.grantId, "expired", payload.dueAtMs).pipe(sql.withTransaction, Effect.orDie)
        if (destroyed) {
          yield* Effect.logInfo("authorization expired").pipe(
            Effect.annotateLogs({ grantId: payload.grantId, entity: address.entityId, lagMs: lag })
          )
        }
      }).pipe(metrics.guard),

    // Filled in by the settlement work (legs signed by the key's one owner).
    SignLegs: () => Effect.fail(new LegsRefused({ message: "leg signing is not built yet" }))
  })
}), { maxIdleTime: "2 minutes", concurrency: 1 }).pipe(Layer.provide(keyEpochsLayer))

export const newGrantId = () => randomUUID()
