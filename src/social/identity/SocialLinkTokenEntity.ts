// The SocialLinkToken entity: the one owner of one social wallet-link token (entity id: the
// token's SHA-256). Mint records it with its own durable 5-minute Expire; Redeem checks the
// envelope against the token's message (which holds the server-issued challenge, so an envelope
// signed for another app or link is refused) and, in one transaction, uses the token and stores
// the account's xpub. The same failure rules as the desk's: 400 leaves the token untouched; 401
// and 409 count toward LINK_FAILURES_MAX.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Either, Option } from "effect"
import { ExpireLinkToken, LinkRefused } from "../../../schemas/common/linkToken.ts"
import { SocialLinkToken } from "../../../schemas/social/identity.ts"
import { AppConfig } from "../../platform/Config.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import {
  consumeLinkToken, expireLinkToken, insertLinkToken, type LinkTokenRow, linkTokenState, readLinkToken, recordLinkFailure
} from "../../platform/identity/linkTokens.ts"
import { socialOrigin } from "./urls.ts"
import { checkSocialEnvelope, postingAddress, type SocialLinkFacts } from "./walletLink.ts"

const metrics = entityMetrics("SocialLinkToken")

export const socialFactsOf = (row: LinkTokenRow, origin: string): SocialLinkFacts => ({
  challengeId: row.challenge_id,
  origin,
  identityAddress: row.subject,
  expiresAtMs: row.expires_at.getTime()
})

export const SocialLinkTokenLive = SocialLinkToken.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const self = (yield* SocialLinkToken.client)(address.entityId)
  const tokenHash = address.entityId
  yield* metrics.activated

  return SocialLinkToken.of({
    Mint: ({ payload }) =>
      Effect.gen(function*() {
        yield* insertLinkToken({ tokenHash, service: "social", ...payload })
        yield* self.Expire(new ExpireLinkToken({ dueAtMs: payload.expiresAtMs }), { discard: true })
      }).pipe(Effect.orDie, metrics.guard),

    Expire: ({ payload }) =>
      Effect.gen(function*() {
        yield* metrics.timerFired(payload.dueAtMs)
        yield* expireLinkToken(tokenHash).pipe(Effect.orDie)
      }).pipe(metrics.guard),

    Redeem: ({ payload }) =>
      Effect.gen(function*() {
        const row = yield* readLinkToken(tokenHash, "social")
        const state = linkTokenState(row, Date.now())
        if (state !== "usable" || Option.isNone(row)) {
          return yield* new LinkRefused(state === "expired"
            ? { status: 410, code: "token_expired", message: "This link token has expired (5 minutes); ask for a new QR code." }
            : { status: 410, code: "token_used", message: "This link token was already used; ask for a new QR code." })
        }
        const checked = checkSocialEnvelope(payload.envelope, socialFactsOf(row.value, socialOrigin(config)))
        const envelope = payload.envelope
        const link = Either.isLeft(checked) ? Effect.fail(checked.left) : Effect.gen(function*() {
          const elsewhere = yield* sql`SELECT 1 FROM social_accounts WHERE xpub = ${checked.right.xpub} AND address <> ${envelope.identity_address}`
          if (elsewhere.length > 0) {
            return yield* new LinkRefused({ status: 409, code: "wallet_linked", message: "This xpub is already linked to another account." })
          }
          if (!(yield* consumeLinkToken(tokenHash))) {
            return yield* new LinkRefused({ status: 410, code: "token_used", message: "This link token was already used; ask for a new QR code." })
          }
          yield* sql`UPDATE social_accounts SET xpub = ${checked.right.xpub}, xpub_path = ${envelope.xpub_path} WHERE address = ${envelope.identity_address}`
          const first = Either.getOrThrow(postingAddress(checked.right, 0))
          return {
            identity_address: envelope.identity_address,
            xpub_path: envelope.xpub_path,
            first_posting_address: first.address,
            posting_path: `${envelope.xpub_path}/0/0`
          }
        }).pipe(sql.withTransaction)
        return yield* link.pipe(
          Effect.tapError((e) => e._tag === "LinkRefused" && (e.status === 400 || e.status === 410) ? Effect.void : recordLinkFailure(tokenHash))
        )
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
