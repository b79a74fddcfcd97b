// A new wallet-link token for a member (the account page's QR; the CLI's `desk link-token`): the
// token is made here and shown once; its DeskLinkToken entity (id: the token's hash) gets a
// persisted Mint through cluster storage, records it and schedules its own expiry. The answer is
// given once the row is there, so the token is live when it is shown.
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { MintLinkToken } from "../../../schemas/common/linkToken.ts"
import { DeskLinkToken } from "../../../schemas/desk/identity.ts"
import { awaitLinkTokenRecorded, freshLinkToken } from "../../platform/identity/linkTokens.ts"
import { deskUrls } from "./urls.ts"
import { linkUrl } from "./walletLink.ts"

export class LinkTokenRefused extends Data.TaggedError("LinkTokenRefused")<{ readonly message: string }> {}

export interface IssuedLinkToken {
  readonly token: string
  readonly url: string
  readonly memberId: string
  readonly expiresAt: string
  /** Not secret: names the token for its live state (link_tokens.challenge_id). */
  readonly challengeId: string
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)

/**
 * For `memberId`, or a new member when none is given. `base`: the desk listener's public URL to
 * print (the CLI passes a running node's); this process's settings when omitted.
 */
export const issueDeskLinkToken = (options: { readonly memberId?: string | undefined; readonly allowRebind: boolean; readonly base?: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const linkBase = options.base ?? (yield* deskUrls).base
    let memberId = options.memberId?.toLowerCase()
    if (memberId !== undefined) {
      const found = isUuid(memberId) ? yield* sql`SELECT 1 FROM desk_members WHERE id = ${memberId}` : []
      if (found.length === 0) return yield* new LinkTokenRefused({ message: `no desk member ${memberId.slice(0, 40)}` })
    } else {
      const [made] = yield* sql<{ id: string }>`INSERT INTO desk_members DEFAULT VALUES RETURNING id`
      memberId = made!.id
    }
    const t = freshLinkToken()
    const client = (yield* DeskLinkToken.client)(t.tokenHash)
    yield* client.Mint(new MintLinkToken({ subject: memberId, challengeId: t.challengeId, allowRebind: options.allowRebind, issuedAtMs: t.issuedAtMs, expiresAtMs: t.expiresAtMs, base: linkBase }), { discard: true })
    yield* awaitLinkTokenRecorded(t.tokenHash)
    return { token: t.token, url: linkUrl(linkBase, t.token), memberId, expiresAt: new Date(t.expiresAtMs).toISOString(), challengeId: t.challengeId } satisfies IssuedLinkToken
  })
