// The Authorization entity: holds one user's grant for one asset. It makes the delegated key
// itself (so key material never travels in a cluster message), seals it under the key of the
// epoch its grant expires in, plus the sweep grace (KeyEpochStore.ts), commits before it
// answers, and schedules its own durable expiry. It is the one owner of the delegated address:
// it signs the grant's settlement legs (SignLegs, DelegatedWallet.ts), and when the grant ends
// (expiry or replacement) it has the markets expire the grant's orders, signs what is still
// unsigned, sweeps what is left back to the user (and the fee coin back to the sponsor), and only
// then deletes the sealed key from every table; when the epoch ends the key that opens it is
// destroyed too, so no copy of the row (WAL, backup) opens any more.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { randomUUID } from "node:crypto"
import { ECPairFactory } from "ecpair"
import * as ecc from "tiny-secp256k1"
import { Data, Effect, Either, Layer, Option, Schedule } from "effect"
import { Authorization, Expire, GrantRefused, type Granted, LegsRefused, type SignLegs } from "../../../schemas/exchange/authorization.ts"
import { p2pkhAddressOfPubkey } from "../../chain/address.ts"
import { ledgerParams } from "../../chain/params.ts"
import { SignerPool } from "../../chain/signerPool.ts"
import { ExchangeConfig } from "../ExchangeConfig.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import { NodeIdentity } from "../../platform/NodeIdentity.ts"
import { notifyAccountChanged } from "../account/AccountReadModel.ts"
import { type DelegatedWallet, fundNewAddress, makeDelegatedWallet } from "./DelegatedWallet.ts"
import { LegStore } from "./legStore.ts"
import { LocalAuthorizations, type LocalSigner } from "./LocalAuthorizations.ts"
import { sealedEpoch } from "./keyEpochs.ts"
import { KeyEpochs, layer as keyEpochsLayer } from "./KeyEpochStore.ts"
import { expireInMarkets } from "./marketExpiry.ts"
import { parseCap, parseEntityId, type PolicyInvalid } from "./policy.ts"
import { sweepAgain, sweepRetryUntilMs } from "./sweepDeadline.ts"

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

/** How long the markets may take to expire a grant's orders: half the sweep grace, 1 to 30 s. */
export const marketBudgetMs = (sweepGraceMs: number) => Math.min(30_000, Math.max(1_000, Math.floor(sweepGraceMs / 2)))

export const layer = Authorization.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const keys = yield* KeyEpochs
  const node = yield* NodeIdentity
  const config = yield* ExchangeConfig
  const { store } = yield* LegStore
  // The node's signing workers (ChainsLive); a wallet outside a node signs on its own thread.
  const signer = Option.getOrUndefined(yield* Effect.serviceOption(SignerPool))
  const self = (yield* Authorization.client)(address.entityId)
  const id = parseEntityId(address.entityId)
  const services = yield* Effect.context<Effect.Effect.Context<ReturnType<typeof makeDelegatedWallet>> | Effect.Effect.Context<ReturnType<typeof expireInMarkets>>>()
  yield* metrics.activated
  // Grant and Expire run one at a time (they change which grant is live). SignLegs waits only for
  // the key and its coins, so a market's SignLegs never waits behind an expiry that is waiting
  // for that market's answer.
  const lifecycle = yield* Effect.makeSemaphore(1)
  const keyLock = yield* Effect.makeSemaphore(1)
  let opened: { readonly grantId: string; readonly wallet: DelegatedWallet } | undefined

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

  /** The live grant's wallet: its key opened once per activation (under keyLock). */
  const walletOf = (row: Row) =>
    Effect.gen(function*() {
      if (opened?.grantId === row.grant_id) return opened.wallet
      const [stored] = yield* sql<{ key_enc: string }>`SELECT key_enc FROM authorization_keys WHERE grant_id = ${row.grant_id}`.pipe(Effect.orDie)
      if (stored === undefined) return yield* new LegsRefused({ message: `the key of grant ${row.grant_id} is gone` })
      const wif = yield* Effect.mapError(keys.open(row.grant_id, stored.key_enc),
        (e) => new LegsRefused({ message: `the key of grant ${row.grant_id} does not open: ${e.message}` }))
      const pair = ECPair.fromWIF(wif, ledgerParams.network)
      if (Either.getOrUndefined(p2pkhAddressOfPubkey(pair.publicKey)) !== row.delegated_address) {
        return yield* Effect.dieMessage(`grant ${row.grant_id}: the sealed key is not the key of ${row.delegated_address}`)
      }
      const wallet = yield* Effect.provide(makeDelegatedWallet(row.delegated_address, pair.privateKey!, { liveKeyOf: row.grant_id, store, ...(signer === undefined ? {} : { signer }) }), services)
      opened = { grantId: row.grant_id, wallet }
      return wallet
    })

  /**
   * The end of a grant before its key goes: no new orders (the Market reserves only while
   * expires_at > now()), its open orders expired by every market of its asset, its unsigned legs
   * signed, and what is left at the delegated address swept back. Each step can run again.
   */
  const retire = (row: Row, asset: string, userId: number) =>
    Effect.gen(function*() {
      const [sealed] = yield* sql<{ key_enc: string }>`SELECT key_enc FROM authorization_keys WHERE grant_id = ${row.grant_id}`.pipe(Effect.orDie)
      const horizon = sealed === undefined ? undefined : Either.getOrUndefined(keys.horizonMs(sealed.key_enc))
      const retryUntilMs = sweepRetryUntilMs(row.expires_at.getTime(), Date.now(), config.sweepGraceMs, horizon)
      let attempt = 0
      yield* sql`UPDATE authorizations SET expires_at = LEAST(expires_at, now()) WHERE grant_id = ${row.grant_id}`.pipe(Effect.orDie)
      yield* Effect.provide(expireInMarkets(row.grant_id, asset, marketBudgetMs(config.sweepGraceMs)), services)
      yield* keyLock.withPermits(1)(Effect.gen(function*() {
        attempt++
        const wallet = yield* walletOf(row)
        const left = yield* wallet.signAllUnsigned(row.grant_id)
        // A leg left unsigned (no fee coin now: the sponsor's funding refused while the ledger or
        // the database is away, or its coins dropped by a reorg) is tried again with the sweep,
        // every second while the key still opens; only the last attempt fails it. Failing it at
        // the first shortage left a trade's counterparty unpaid for good (chaos seed 1, session
        // 21: a grant expired during a 7 s ledger refusal with a base leg unsigned).
        if (left > 0 && sweepAgain(attempt, Date.now(), retryUntilMs)) return yield* new LegsUnsignedYet({ left })
        if (left > 0) yield* wallet.failUnsigned(row.grant_id, "the grant ended before the leg could be signed (no fee coin)")
        const swept = yield* wallet.sweep({ grantId: row.grant_id, userId, asset })
        if (swept !== undefined && !swept.repeated) {
          yield* Effect.logInfo("authorization swept").pipe(Effect.annotateLogs({ grantId: row.grant_id, txid: swept.txid, amount: swept.amount.toString(), to: swept.toAddress }))
        }
      })).pipe(
        // A key that does not open will not open on a second try; the ledger or the database may
        // come back: tried every second until shortly before the sealed key's horizon (sweepDeadline.ts).
        Effect.retry({ schedule: Schedule.spaced("1 second"), while: (e) => e._tag !== "LegsRefused" && sweepAgain(attempt, Date.now(), retryUntilMs) }),
        Effect.catchAll((e) => Effect.logError(`grant ${row.grant_id}: not swept before its key is destroyed: ${e.message}`))
      )
    })

  const scheduleExpiry = (grantId: string, dueAtMs: number) =>
    self.Expire(new Expire({ grantId, dueAtMs }), { discard: true })

  // A grant whose timer was lost (it cannot be, but a restore from backup could) still expires.
  const existing = yield* current.pipe(Effect.orDie)
  if (Option.isSome(existing)) {
    yield* scheduleExpiry(existing.value.grant_id, existing.value.expires_at.getTime()).pipe(Effect.orDie)
  }

  const signLegs = (payload: SignLegs) =>
    keyLock.withPermits(1)(Effect.gen(function*() {
      // The signing key stays here (issue 22 asked whether a batch's legs could be signed for
      // all grants in one pass by the Market: not without the key or the address's coins
      // leaving their one owner, which is what keeps two legs off one coin). So the work per
      // grant is made small instead: one call per batch for this grant (straight from a market on
      // this node, LocalAuthorizations.ts), no read of the grant while its wallet is open here
      // (`opened` is dropped whenever this entity ends or replaces the grant, and the wallet's
      // store statement requires the grant's key row, so another activation that destroyed it
      // stops this one too), no read of legs that come with their
      // terms, and one statement (the bytes) before the ledger's calls: the Market records the
      // broadcasts of all its grants' legs in one statement after (callerRecordsBroadcasts).
      const options = { callerRecordsBroadcasts: payload.callerRecordsBroadcasts }
      if (opened?.grantId === payload.grantId) return yield* opened.wallet.signLegs(payload.grantId, payload.legs, options)
      const now = yield* current.pipe(Effect.mapError((e) => new LegsRefused({ message: `cannot read the grant: ${e.message}` })))
      // Legs of a grant that has ended after its sweep cannot be signed any more (the key is gone).
      if (Option.isNone(now) || now.value.grant_id !== payload.grantId) {
        return yield* new LegsRefused({ message: `grant ${payload.grantId} is not live (expired or replaced); its key is gone` })
      }
      const wallet = yield* walletOf(now.value)
      return yield* wallet.signLegs(payload.grantId, payload.legs, options)
    }))

  // This node's markets call it without a cluster message while it is active here (LocalAuthorizations.ts).
  const locals = yield* LocalAuthorizations
  // Named as the cluster names the handler, so a trace reads the same whichever way the call came.
  const localSpan = `Authorization(${address.entityId}).SignLegs`
  const local: LocalSigner = {
    signLegs: (payload) =>
      signLegs(payload).pipe(
        metrics.guard,
        Effect.withSpan(localSpan, { captureStackTrace: false, attributes: { "entity.type": "Authorization", "entity.id": address.entityId, "shardline.call": "local" } })
      )
  }
  yield* Effect.acquireRelease(Effect.sync(() => locals.set(address.entityId, local)), () =>
    Effect.sync(() => {
      if (locals.get(address.entityId) === local) locals.delete(address.entityId)
    }))

  return Authorization.of({
    Grant: ({ payload }) =>
      lifecycle.withPermits(1)(Effect.gen(function*() {
        const { userId, asset } = yield* Effect.mapError(id, refused)
        const cap = yield* Effect.mapError(parseCap(payload.cap), refused)
        if (payload.expiresAtMs <= Date.now()) {
          return yield* Effect.fail(new GrantRefused({ message: "expiry is in the past" }))
        }
        const before = yield* current.pipe(Effect.orDie)
        // The grant being replaced ends first: its orders, legs and funds are settled while its key still opens.
        if (Option.isSome(before) && before.value.grant_id !== payload.grantId) yield* retire(before.value, asset, userId)
        const result = yield* keyLock.withPermits(1)(Effect.gen(function*() {
          const now = yield* current
          if (Option.isSome(now) && now.value.grant_id === payload.grantId) {
            // Redelivered after a crash between commit and reply: answer with what was committed.
            return { asset, grantId: payload.grantId, cap: now.value.cap, expiresAt: now.value.expires_at.getTime(), delegatedAddress: now.value.delegated_address }
          }
          if (Option.isSome(now)) yield* destroy(now.value.grant_id, "replaced", null)
          opened = undefined
          const key = newDelegatedKey()
          // Sealed under the epoch of expiry + the sweep grace: the expiry sweep needs the key after the due time.
          const sealed = yield* Effect.mapError(keys.seal(payload.grantId, payload.expiresAtMs + config.sweepGraceMs, key.wif),
            (e) => new GrantRefused({ message: `cannot seal the delegated key: ${e.message}` }))
          yield* sql`INSERT INTO authorizations (user_id, asset, grant_id, cap, expires_at, delegated_address)
            VALUES (${userId}, ${asset}, ${payload.grantId}, ${cap}, ${new Date(payload.expiresAtMs)}, ${key.address})`
          yield* sql`INSERT INTO authorization_keys (grant_id, key_enc) VALUES (${payload.grantId}, ${sealed})`
          // The sealing epoch, kept past the key's row: `authorizations show` says when it ended (keyDestroyedAt).
          const keyEpoch = Either.getOrNull(sealedEpoch(sealed))
          yield* sql`INSERT INTO authorization_events (grant_id, user_id, asset, kind, due_at, runner, key_epoch)
            VALUES (${payload.grantId}, ${userId}, ${asset}, 'granted', ${new Date(payload.expiresAtMs)}, ${node.name}, ${keyEpoch})
            ON CONFLICT (grant_id, kind) DO NOTHING`
          yield* notifyAccountChanged(userId) // every node's AccountReadModel drops the user at commit
          return { asset, grantId: payload.grantId, cap, expiresAt: payload.expiresAtMs, delegatedAddress: key.address } satisfies Granted
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", Effect.die)))
        // Scheduled after the commit; if we crash before this line the grant is redelivered
        // (no reply yet), finds its row above and schedules again (the timer key dedups).
        yield* scheduleExpiry(result.grantId, result.expiresAt).pipe(Effect.orDie)
        // The address's first fee coins now, not at its first trade (issue 22): a failure here
        // only moves that funding back to the first leg, as before. Under the key lock, so a
        // SignLegs for a trade placed meanwhile opens its wallet after this funding, and finds it.
        yield* keyLock.withPermits(1)(Effect.provide(fundNewAddress(result.delegatedAddress), services)).pipe(
          Effect.catchAll((e) => Effect.logWarning(`grant ${result.grantId}: its address is funded at its first leg instead: ${e.message}`))
        )
        return result
      })).pipe(metrics.guard),

    Expire: ({ payload }) =>
      lifecycle.withPermits(1)(Effect.gen(function*() {
        const lag = Date.now() - payload.dueAtMs
        yield* metrics.timerFired(payload.dueAtMs)
        // A stale timer (its grant was replaced) finds nothing to sweep or delete and does nothing.
        const now = yield* current.pipe(Effect.orDie)
        if (Option.isSome(now) && now.value.grant_id === payload.grantId && Either.isRight(id)) {
          yield* retire(now.value, id.right.asset, id.right.userId)
        }
        const destroyed = yield* keyLock.withPermits(1)(destroy(payload.grantId, "expired", payload.dueAtMs).pipe(sql.withTransaction, Effect.orDie))
        if (opened?.grantId === payload.grantId) opened = undefined
        if (destroyed) {
          yield* Effect.logInfo("authorization expired").pipe(
            Effect.annotateLogs({ grantId: payload.grantId, entity: address.entityId, lagMs: lag })
          )
        }
      })).pipe(metrics.guard),

    EndNow: () =>
      lifecycle.withPermits(1)(Effect.gen(function*() {
        const now = yield* current.pipe(Effect.orDie)
        if (Option.isNone(now) || Either.isLeft(id)) return { grantId: null }
        const grantId = now.value.grant_id
        yield* retire(now.value, id.right.asset, id.right.userId)
        yield* keyLock.withPermits(1)(destroy(grantId, "expired", Date.now()).pipe(sql.withTransaction, Effect.orDie))
        if (opened?.grantId === grantId) opened = undefined
        yield* Effect.logInfo("authorization ended by its user").pipe(Effect.annotateLogs({ grantId, entity: address.entityId }))
        return { grantId }
      })).pipe(metrics.guard),

    SignLegs: ({ payload }) => signLegs(payload).pipe(metrics.guard)
  })
}), { maxIdleTime: "2 minutes", concurrency: "unbounded" }).pipe(Layer.provide(keyEpochsLayer))

/** Legs of an ending grant not signed yet: its end is tried again (retire). */
class LegsUnsignedYet extends Data.TaggedError("LegsUnsignedYet")<{ readonly left: number }> {
  override get message() {
    return `${this.left} leg(s) not signed yet (no fee coin)`
  }
}

export const newGrantId = () => randomUUID()
