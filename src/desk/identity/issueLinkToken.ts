// A new wallet-link token for a member (the account page's QR; the CLI's `desk link-token`): the
// token is made here and shown once; its DeskLinkToken entity (id: the token's hash) gets a
// persisted Mint through cluster storage, records it and schedules its own expiry. The answer is
// read back from the table, so it holds only once the token is live.
import { SqlClient } from "@effect/sql"
import { Data, Duration, Effect, Schedule } from "effect"
import { MintLinkToken } from "../../../schemas/common/linkToken.ts"
import { DeskLinkToken } from "../../../schemas/desk/identity.ts"
import { AppConfig } from "../../platform/Config.ts"
import { LINK_TOKEN_TTL_MS, linkTokenId, newChallengeId, newLinkToken } from "../../platform/identity/linkTokens.ts"
import { deskBaseUrl } from "./urls.ts"
import { linkUrl } from "./walletLink.ts"

export class LinkTokenRefused extends Data.TaggedError("LinkTokenRefused")<{ readonly message: string }> {}

export interface IssuedLinkToken {
  readonly token: string
  readonly url: string
  readonly memberId: string
  readonly expiresAt: string
}

/** How long to wait for the entity to record the token. */
const recordedWithin = Duration.seconds(20)

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)

/** For `memberId`, or a new member when none is given. */
export const issueDeskLinkToken = (options: { readonly memberId?: string | undefined; readonly allowRebind: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    let memberId = options.memberId?.toLowerCase()
    if (memberId !== undefined) {
      const found = isUuid(memberId) ? yield* sql`SELECT 1 FROM desk_members WHERE id = ${memberId}` : []
      if (found.length === 0) return yield* new LinkTokenRefused({ message: `no desk member ${memberId.slice(0, 40)}` })
    } else {
      const [made] = yield* sql<{ id: string }>`INSERT INTO desk_members DEFAULT VALUES RETURNING id`
      memberId = made!.id
    }
    const token = newLinkToken()
    const tokenHash = linkTokenId(token)
    const issuedAtMs = Date.now()
    const expiresAtMs = issuedAtMs + LINK_TOKEN_TTL_MS
    const client = (yield* DeskLinkToken.client)(tokenHash)
    yield* client.Mint(new MintLinkToken({ subject: memberId, challengeId: newChallengeId(), allowRebind: options.allowRebind, issuedAtMs, expiresAtMs }), { discard: true })
    yield* sql`SELECT 1 FROM link_tokens WHERE token_hash = ${tokenHash}`.pipe(
      Effect.filterOrFail((rows) => rows.length > 0, () => new LinkTokenRefused({ message: "pending" })),
      Effect.retry(Schedule.spaced(Duration.millis(100))),
      Effect.timeoutFail({ duration: recordedWithin, onTimeout: () => new LinkTokenRefused({ message: "the token was not recorded in time: is a node running?" }) })
    )
    return { token, url: linkUrl(deskBaseUrl(config), token), memberId, expiresAt: new Date(expiresAtMs).toISOString() } satisfies IssuedLinkToken
  })
