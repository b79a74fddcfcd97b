// A new wallet-link token for a social account (the CLI's `social link-token --account ADDR`):
// made and shown once here; its SocialLinkToken entity gets a persisted Mint through cluster
// storage and schedules its own expiry. Answered once the token is live.
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { MintLinkToken } from "../../../schemas/common/linkToken.ts"
import { SocialLinkToken } from "../../../schemas/social/identity.ts"
import { awaitLinkTokenRecorded, freshLinkToken } from "../../platform/identity/linkTokens.ts"
import { socialUrls } from "./urls.ts"
import { socialLinkUrl } from "./walletLink.ts"

export class SocialLinkTokenRefused extends Data.TaggedError("SocialLinkTokenRefused")<{ readonly message: string }> {}

/** `base`: the social listener's public URL to print (the CLI passes a running node's); this process's settings when omitted. */
export const issueSocialLinkToken = (account: string, base?: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const linkBase = base ?? (yield* socialUrls).base
    const found = account.length <= 100 ? yield* sql`SELECT 1 FROM social_accounts WHERE address = ${account}` : []
    if (found.length === 0) return yield* new SocialLinkTokenRefused({ message: `no social account ${account.slice(0, 60)}` })
    const t = freshLinkToken()
    const client = (yield* SocialLinkToken.client)(t.tokenHash)
    yield* client.Mint(new MintLinkToken({ subject: account, challengeId: t.challengeId, allowRebind: false, issuedAtMs: t.issuedAtMs, expiresAtMs: t.expiresAtMs, base: linkBase }), { discard: true })
    yield* awaitLinkTokenRecorded(t.tokenHash)
    return { token: t.token, challengeId: t.challengeId, url: `${socialLinkUrl(linkBase)}?token=${t.token}`, expiresAt: new Date(t.expiresAtMs).toISOString() }
  })
