// The SocialLinkToken entity: the one owner of one social wallet-link token (entity id: the
// token's SHA-256). Mint records it with its own durable 5-minute Expire; Redeem checks the
// envelope against the token's message (which holds the server-issued challenge, so an envelope
// signed for another app or link is refused) and, in one transaction, uses the token and stores
// the account's xpub. The same failure rules as the desk's: 400 leaves the token untouched; 401
// and 409 count toward LINK_FAILURES_MAX.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { ExpireLinkToken, LinkRefused } from "../../../schemas/common/linkToken.ts"
import { SocialLinkToken } from "../../../schemas/social/identity.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import {
  consumeLinkToken, countLinkFailure, issuedUrls, type LinkTokenRow, linkTokenGone, linkTokenLifecycle, usableLinkToken
} from "../../platform/identity/linkTokens.ts"
import { socialUrls } from "./urls.ts"
import { checkSocialEnvelope, postingAddress, type SocialLinkFacts } from "./walletLink.ts"

const metrics = entityMetrics("SocialLinkToken")

export const socialFactsOf = (row: LinkTokenRow, origin: string): SocialLinkFacts => ({
  challengeId: row.challenge_id,
  origin,
  identityAddress: row.subject,
  expiresAtMs: row.expires_at.getTime()
})

export const layer = SocialLinkToken.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const urls = yield* socialUrls
  const self = (yield* SocialLinkToken.client)(address.entityId)
  const tokenHash = address.entityId
  const lifecycle = linkTokenLifecycle(tokenHash, "social", (dueAtMs) => self.Expire(new ExpireLinkToken({ dueAtMs }), { discard: true }))
  yield* metrics.activated

  return SocialLinkToken.of({
    Mint: ({ payload }) => lifecycle.mint(payload).pipe(metrics.guard),
    Expire: ({ payload }) => metrics.timerFired(payload.dueAtMs).pipe(Effect.zipRight(lifecycle.expire), metrics.guard),

    Redeem: ({ payload }) =>
      Effect.gen(function*() {
        const row = yield* usableLinkToken(tokenHash, "social")
        const checked = checkSocialEnvelope(payload.envelope, socialFactsOf(row, issuedUrls(row, urls).origin))
        const envelope = payload.envelope
        const link = Either.isLeft(checked) ? Effect.fail(checked.left) : Effect.gen(function*() {
          const elsewhere = yield* sql`SELECT 1 FROM social_accounts WHERE xpub = ${checked.right.xpub} AND address <> ${envelope.identity_address}`
          if (elsewhere.length > 0) {
            return yield* new LinkRefused({ status: 409, code: "wallet_linked", message: "This xpub is already linked to another account." })
          }
          if (!(yield* consumeLinkToken(tokenHash))) return yield* linkTokenGone("used")
          yield* sql`UPDATE social_accounts SET xpub = ${checked.right.xpub}, xpub_path = ${envelope.xpub_path} WHERE address = ${envelope.identity_address}`
          const first = Either.getOrThrow(postingAddress(checked.right, 0))
          return {
            identity_address: envelope.identity_address,
            xpub_path: envelope.xpub_path,
            first_posting_address: first.address,
            posting_path: `${envelope.xpub_path}/0/0/0`
          }
        }).pipe(sql.withTransaction)
        return yield* link.pipe(Effect.tapError((e) => e._tag === "LinkRefused" ? countLinkFailure(tokenHash)(e) : Effect.void))
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
