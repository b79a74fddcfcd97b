// The DeskLinkToken entity: the one owner of one single-use wallet-link token (entity id: the
// token's SHA-256). Mint records it and schedules its own durable 5-minute Expire; Redeem checks
// the envelope against the token's manifest and, in one transaction, uses the token, stores the
// wallet, fills the member's payout addresses and turns the member's keys over; then the
// member's LinkedWallet entity is told to watch. Messages run one at a time, and the token's row
// is also guarded in SQL, so a replay on any node, or on two owners during a shard move, is 410.
import { Entity } from "@effect/cluster"
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { ExpireLinkToken, LinkRefused } from "../../../schemas/common/linkToken.ts"
import { DeskLinkToken, LinkedWallet, WatchWallet } from "../../../schemas/desk/identity.ts"
import type { WalletLinked } from "../../../schemas/desk/walletLink.ts"
import { sha256Hex } from "../../crypto/token.ts"
import { entityMetrics } from "../../platform/entity/EntityMetrics.ts"
import {
  consumeLinkToken, countLinkFailure, issuedUrls, type LinkTokenRow, linkTokenGone, linkTokenLifecycle, usableLinkToken
} from "../../platform/identity/linkTokens.ts"
import { replaceMemberKeys } from "../keys/DeskKeyStore.ts"
import { recordFiring } from "../timerFirings.ts"
import { deskUrls } from "./urls.ts"
import { checkEnvelope, type LinkTokenFacts, linkUrl, manifestOf, type VerifiedLink } from "./walletLink.ts"

const metrics = entityMetrics("DeskLinkToken")

export const factsOf = (row: LinkTokenRow): LinkTokenFacts => ({
  challengeId: row.challenge_id,
  issuedAtMs: row.issued_at.getTime(),
  expiresAtMs: row.expires_at.getTime(),
  allowRebind: row.allow_rebind
})

/**
 * The callback URL this token's manifest names. The entity knows only the token's hash, so the
 * URL the envelope claims is accepted when it is this desk's link URL with a token of that hash.
 */
const callbackUrlOf = (base: string, tokenHash: string, claimed: string): string | undefined => {
  const prefix = linkUrl(base, "")
  return claimed.startsWith(prefix) && sha256Hex(claimed.slice(prefix.length)) === tokenHash ? claimed : undefined
}

export const layer = DeskLinkToken.toLayer(Effect.gen(function*() {
  const address = yield* Entity.CurrentAddress
  const sql = yield* SqlClient.SqlClient
  const urls = yield* deskUrls
  const self = (yield* DeskLinkToken.client)(address.entityId)
  const wallets = yield* LinkedWallet.client
  const tokenHash = address.entityId
  yield* metrics.activated

  const lifecycle = linkTokenLifecycle(tokenHash, "desk", (dueAtMs) => self.Expire(new ExpireLinkToken({ dueAtMs }), { discard: true }))

  /** The link itself, in one transaction: 409/403/410 refusals roll everything back. */
  const link = (row: LinkTokenRow, v: VerifiedLink) =>
    Effect.gen(function*() {
      const memberId = row.subject
      const elsewhere = yield* sql<{ member_id: string }>`SELECT member_id FROM desk_wallets
        WHERE (signing_address = ${v.signingAddress} OR xpub = ${v.xpub}) AND member_id <> ${memberId} LIMIT 1`
      if (elsewhere.length > 0) {
        return yield* new LinkRefused({ status: 409, code: "wallet_linked", message: "This wallet is already linked to another account." })
      }
      // A wallet that signed in to the web app is its own account (memberAccounts.ts): it links there.
      const ownAccount = yield* sql`SELECT 1 FROM desk_members WHERE account_address = ${v.signingAddress} AND id <> ${memberId} LIMIT 1`
      if (ownAccount.length > 0) {
        return yield* new LinkRefused({
          status: 409, code: "wallet_linked",
          message: "This wallet has its own account here (it signed in with this address); sign in with it and link it from there."
        })
      }
      const [current] = yield* sql<{ signing_address: string; xpub: string }>`SELECT signing_address, xpub FROM desk_wallets
        WHERE member_id = ${memberId} FOR UPDATE`
      if (current !== undefined && current.signing_address !== v.signingAddress && !row.allow_rebind) {
        return yield* new LinkRefused({
          status: 403, code: "unknown_signer",
          message: "Another wallet is linked to this account; re-binding a new wallet needs a link token that allows it."
        })
      }
      if (!(yield* consumeLinkToken(tokenHash))) return yield* linkTokenGone("used")
      const [linked] = yield* sql<{ linked_at: Date }>`INSERT INTO desk_wallets (member_id, signing_address, xpub, evm_address, base_address, wallet)
        VALUES (${memberId}, ${v.signingAddress}, ${v.xpub}, ${v.evmAddress}, ${v.baseAddress}, ${v.wallet})
        ON CONFLICT (member_id) DO UPDATE SET signing_address = EXCLUDED.signing_address, xpub = EXCLUDED.xpub,
          evm_address = EXCLUDED.evm_address, base_address = EXCLUDED.base_address, wallet = EXCLUDED.wallet, linked_at = now()
        RETURNING linked_at`
      // A new xpub: the LinkedWallet derives its window again (samples, history, stay).
      if (current !== undefined && current.xpub !== v.xpub) yield* sql`DELETE FROM linked_wallet_addresses WHERE member_id = ${memberId}`
      yield* sql`UPDATE desk_members SET token_payout_address = ${v.signingAddress}, usdc_payout_address = ${v.evmAddress},
        base_payout_address = ${v.baseAddress} WHERE id = ${memberId}`
      const key = yield* replaceMemberKeys(memberId)
      return {
        linkedAtMs: new Date(linked!.linked_at).getTime(),
        answer: {
          api_key: key.apiKey,
          scopes: [...key.scopes],
          member_id: memberId,
          signing_address: v.signingAddress,
          token_payout_address: v.signingAddress,
          usdc_payout_address: v.evmAddress,
          base_payout_address: v.baseAddress,
          revoked_keys: key.revoked
        } satisfies WalletLinked
      }
    }).pipe(sql.withTransaction)

  return DeskLinkToken.of({
    Mint: ({ payload }) => lifecycle.mint(payload).pipe(metrics.guard),
    Expire: ({ payload }) =>
      metrics.timerFired(payload.dueAtMs).pipe(
        Effect.zipRight(recordFiring("link_expire", tokenHash, payload.dueAtMs)),
        Effect.zipRight(lifecycle.expire),
        metrics.guard
      ),

    Redeem: ({ payload }) =>
      Effect.gen(function*() {
        const row = yield* usableLinkToken(tokenHash, "desk")
        // The URLs the token was issued for, whichever node served its manifest and whichever runs this entity.
        const { base, origin } = issuedUrls(row, urls)
        // A claimed URL that is not this token's link leaves the manifest's callback_url unmatched: 401.
        const claimed = callbackUrlOf(base, tokenHash, payload.envelope.payload.callback_url)
        const manifest = manifestOf(factsOf(row), { from: origin, callbackUrl: claimed ?? linkUrl(base, "<this token>") })
        const checked = checkEnvelope(payload.envelope, manifest, Date.now())
        const result = Either.isLeft(checked) ? Effect.fail(checked.left) : link(row, checked.right)
        const done = yield* result.pipe(Effect.tapError((e) => e._tag === "LinkRefused" ? countLinkFailure(tokenHash)(e) : Effect.void))
        yield* wallets(row.subject).Watch(new WatchWallet({ linkedAtMs: done.linkedAtMs }), { discard: true }).pipe(
          Effect.catchAll((e) => Effect.logError(`member ${row.subject}: linked, but its LinkedWallet was not told to watch: ${String(e)}`))
        )
        return done.answer
      }).pipe(Effect.catchTag("SqlError", Effect.die), metrics.guard)
  })
}), { maxIdleTime: "1 minute", concurrency: 1 })
