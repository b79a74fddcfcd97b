// The SignInChallenge entity: the one owner of one QR sign-in on any listener (entity id: the
// challenge id; the row names the service whose session it ends in). It
// records the challenge and schedules its own durable 5-minute Expire; takes the wallet's one
// signature (a second is 409); releases a one-time token only to the browser that minted the
// challenge (its sign-in cookie); and trades that token for a session once. Every step is also
// guarded in SQL by the status it expects, so a replay on another node is refused as well.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { LinkRefused } from "../../../schemas/common/linkToken.ts"
import { ExpireChallenge, SignInChallenge } from "../../../schemas/common/signIn.ts"
import { signatureShapeError, signerAddressError, verifyMessage } from "../../chain/message.ts"
import { base62Token, sha256Hex } from "../../crypto/token.ts"
import { entityMetrics } from "../entity/EntityMetrics.ts"
import { mintSession } from "./sessionStore.ts"
import { type ChallengeFacts, signInMessage } from "./challenge.ts"

const metrics = entityMetrics("SignInChallenge")

interface Row {
  readonly id: string
  readonly nonce: string
  readonly service: string
  readonly origin: string
  readonly browser_hash: string
  readonly expires_at: Date
  readonly status: "pending" | "signed" | "released" | "exchanged" | "expired"
  readonly address: string | null
  readonly token_hash: string | null
}

export const factsOfChallenge = (r: Row): ChallengeFacts => ({ id: r.id, nonce: r.nonce, origin: r.origin, expiresAtMs: new Date(r.expires_at).getTime() })

/** The challenge's row, if any (read by the entity and by the keyless GET of the message). */
export const readChallenge = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<Row>`SELECT id, service, nonce, origin, browser_hash, expires_at, status, address, token_hash FROM signin_challenges WHERE id = ${id}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]))
    ))

export const isExpired = (r: Row, nowMs: number) => r.status === "expired" || new Date(r.expires_at).getTime() <= nowMs

const refuse = (status: 400 | 401 | 409 | 410, code: string, message: string) => Effect.fail(new LinkRefused({ status, code, message }))
const expired = () => refuse(410, "token_expired", "This sign-in challenge has expired (5 minutes); start again.")
const used = () => refuse(410, "token_used", "This sign-in challenge or token was already used; start again.")

export const layer = SignInChallenge.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const self = (yield* SignInChallenge.client)(address.entityId)
  const id = address.entityId
  yield* metrics.activated

  const live = Effect.gen(function*() {
    const row = yield* readChallenge(id)
    if (Option.isNone(row)) return yield* used()
    if (isExpired(row.value, Date.now())) return yield* expired()
    return row.value
  })

  return SignInChallenge.of({
    Mint: ({ payload }) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO signin_challenges (id, service, nonce, origin, browser_hash, issued_at, expires_at)
          VALUES (${id}, ${payload.service}, ${payload.nonce}, ${payload.origin}, ${payload.browserHash}, ${new Date(payload.issuedAtMs)}, ${new Date(payload.expiresAtMs)})
          ON CONFLICT (id) DO NOTHING`
        yield* self.Expire(new ExpireChallenge({ dueAtMs: payload.expiresAtMs }), { discard: true })
      }).pipe(Effect.orDie, metrics.guard),

    Expire: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        yield* sql`UPDATE signin_challenges SET status = 'expired', closed_at = now()
          WHERE id = ${id} AND status IN ('pending', 'signed', 'released')`.pipe(Effect.orDie)
      }).pipe(metrics.guard),

    Callback: ({ payload }) =>
      Effect.gen(function*() {
        const row = yield* live
        const badAddress = signerAddressError(payload.address)
        if (badAddress !== undefined) return yield* refuse(400, "invalid_parameter", `Parameter 'address' is invalid: ${badAddress}`)
        const badSignature = signatureShapeError(payload.signature)
        if (badSignature !== undefined) return yield* refuse(400, "invalid_parameter", `Parameter 'signature' is invalid: ${badSignature}`)
        if (row.status !== "pending") return yield* refuse(409, "already_signed", "This challenge was already signed.")
        const verified = verifyMessage({ address: payload.address, message: signInMessage(factsOfChallenge(row)), signature: payload.signature })
        if (!verified.valid) return yield* refuse(401, "invalid_signature", `The signature does not verify over this challenge's message: ${verified.reason}`)
        const done = yield* sql`UPDATE signin_challenges SET status = 'signed', address = ${payload.address}
          WHERE id = ${id} AND status = 'pending' AND expires_at > now() RETURNING 1`
        if (done.length === 0) return yield* refuse(409, "already_signed", "This challenge was already signed.")
        return { id, status: "signed" as const, address: payload.address }
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard),

    Status: ({ payload }) =>
      Effect.gen(function*() {
        const found = yield* readChallenge(id)
        if (Option.isNone(found)) return yield* used()
        const row = found.value
        const expiresAt = new Date(row.expires_at).toISOString()
        if (isExpired(row, Date.now())) return { id, status: "expired" as const, expiresAt }
        if (row.status === "exchanged") return { id, status: "used" as const, expiresAt }
        if (row.status === "pending") return { id, status: "pending" as const, expiresAt }
        if (payload.browserHash !== row.browser_hash) return { id, status: "signed" as const, expiresAt }
        // Each poll of the minting browser gets a fresh token (a lost answer is not a dead end); only the newest works.
        const token = `${id}.${base62Token(43)}`
        yield* sql`UPDATE signin_challenges SET status = 'released', token_hash = ${sha256Hex(token)}
          WHERE id = ${id} AND status IN ('signed', 'released')`
        return { id, status: "signed" as const, token, address: row.address ?? undefined, expiresAt }
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard),

    Exchange: ({ payload }) =>
      Effect.gen(function*() {
        const row = yield* live
        if (row.status !== "released" || row.token_hash !== payload.tokenHash || row.address === null) return yield* used()
        return yield* Effect.gen(function*() {
          const done = yield* sql`UPDATE signin_challenges SET status = 'exchanged', closed_at = now()
            WHERE id = ${id} AND status = 'released' AND token_hash = ${payload.tokenHash} AND expires_at > now() RETURNING 1`
          if (done.length === 0) return yield* used()
          const session = yield* mintSession(row.service, row.address!)
          return { token: session.token, tokenType: "Bearer" as const, address: session.address, expiresAt: session.expiresAt.toISOString() }
        }).pipe(sql.withTransaction)
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
