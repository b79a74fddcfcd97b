// Single-use link tokens in Postgres (link_tokens): what the desk's and the social service's
// link token entities share. The entity of a token is its one owner (messages run one at a time);
// every state change is also guarded in SQL (`WHERE status = 'issued'`), so even two owners for a
// moment during a shard move cannot use one token twice.
import { SqlClient } from "@effect/sql"
import { Data, Duration, Effect, Option, Schedule } from "effect"
import { Gone } from "../../../schemas/common/ErrorBody.ts"
import { LinkRefused, type MintLinkToken } from "../../../schemas/common/linkToken.ts"
import { base62Token, isBase62Token, sha256Hex } from "../../crypto/token.ts"
import { DEEP_LINK_SCHEME } from "../signin/challenge.ts"

/** Spec (desk Limits, social States): single use, valid 5 minutes. */
export const LINK_TOKEN_TTL_MS = 5 * 60_000
/** 43 base62 characters: 256 bits. */
export const LINK_TOKEN_LENGTH = 43
/** Verified-but-refused redeems (401, 403, 409) a token takes before it is spent (410). */
export const LINK_FAILURES_MAX = 5

export type LinkService = "desk" | "social"
export type LinkTokenStatus = "issued" | "used" | "expired" | "spent"

export interface LinkTokenRow {
  readonly token_hash: string
  readonly service: LinkService
  readonly subject: string
  readonly challenge_id: string
  readonly allow_rebind: boolean
  readonly issued_at: Date
  readonly expires_at: Date
  readonly failures: number
  readonly status: LinkTokenStatus
  /** The public base URL the token was issued for (NULL: issued before it was recorded). */
  readonly base_url: string | null
}

/** The link for a wallet app on the same device (the sign-in's scheme, `link` instead of `login`). */
export const linkDeepLink = (url: string) => `${DEEP_LINK_SCHEME}://link?url=${encodeURIComponent(url)}`

/** What a link token's row says to the account that asked for it (a web app's QR state). */
export const linkStatusOf = (status: string, expiresAt: Date, nowMs: number) =>
  status === "used" ? "linked" as const
  : status === "spent" ? "refused" as const
  : status === "expired" || expiresAt.getTime() <= nowMs ? "expired" as const
  : "waiting" as const

/** The status and expiry of the token of `challengeId`, if `subject` asked for it on `service`. */
export const linkTokenOfSubject = (service: LinkService, subject: string, challengeId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(sql<{ status: string; expires_at: Date }>`SELECT status, expires_at FROM link_tokens
      WHERE challenge_id = ${challengeId} AND service = ${service} AND subject = ${subject}`, (rows) => Option.fromNullable(rows[0])))

export const newLinkToken = () => base62Token(LINK_TOKEN_LENGTH)
export const newChallengeId = () => base62Token(22)
export const isLinkTokenShaped = (text: string) => isBase62Token(text, LINK_TOKEN_LENGTH)
/** The entity id of a token (and its row key). */
export const linkTokenId = (token: string) => sha256Hex(token)

export const insertLinkToken = (row: {
  readonly tokenHash: string
  readonly service: LinkService
  readonly subject: string
  readonly challengeId: string
  readonly allowRebind: boolean
  readonly issuedAtMs: number
  readonly expiresAtMs: number
  readonly base?: string | undefined
}) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`INSERT INTO link_tokens (token_hash, service, subject, challenge_id, allow_rebind, issued_at, expires_at, base_url)
      VALUES (${row.tokenHash}, ${row.service}, ${row.subject}, ${row.challengeId}, ${row.allowRebind},
        ${new Date(row.issuedAtMs)}, ${new Date(row.expiresAtMs)}, ${row.base ?? null})
      ON CONFLICT (token_hash) DO NOTHING`)

export const readLinkToken = (tokenHash: string, service: LinkService) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<LinkTokenRow>`SELECT token_hash, service, subject, challenge_id, allow_rebind, issued_at, expires_at, failures, status, base_url
      FROM link_tokens WHERE token_hash = ${tokenHash} AND service = ${service}`.pipe(
      Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r) => ({ ...r, issued_at: new Date(r.issued_at), expires_at: new Date(r.expires_at) }))))
    ))

/**
 * The public base URL and origin a token's manifest names, on any node: the ones it was issued
 * for, so a wallet's signature over that `from` verifies wherever the token's entity runs, and a
 * signature made for another origin does not. A token recorded without one takes this node's (`own`).
 */
export const issuedUrls = (row: LinkTokenRow, own: { readonly base: string; readonly origin: string; readonly configured?: boolean }): { readonly base: string; readonly origin: string } =>
  // A public URL the operator set is the cluster's one address (the same on every node): it wins
  // over what the issuer recorded (an issuer without the setting, such as a client process,
  // records its own default address). Without it, the recorded one makes links work across nodes.
  own.configured === true || row.base_url === null ? { base: own.base, origin: own.origin } : { base: row.base_url, origin: new URL(row.base_url).origin }

/** Usable, or why not (an unknown token reads as used: nothing tells a guesser it never existed). */
export const linkTokenState = (row: Option.Option<LinkTokenRow>, nowMs: number): "usable" | "used" | "expired" => {
  if (Option.isNone(row)) return "used"
  const r = row.value
  if (r.status === "expired" || (r.status === "issued" && r.expires_at.getTime() <= nowMs)) return "expired"
  return r.status === "issued" ? "usable" : "used"
}

/** The timer's work: an unused token becomes expired. */
export const expireLinkToken = (tokenHash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE link_tokens SET status = 'expired', closed_at = now() WHERE token_hash = ${tokenHash} AND status = 'issued'`)

/** Marks the token used, inside the caller's transaction; false when it was not usable any more. */
export const consumeLinkToken = (tokenHash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE link_tokens SET status = 'used', closed_at = now()
      WHERE token_hash = ${tokenHash} AND status = 'issued' AND expires_at > now() RETURNING 1`.pipe(Effect.map((rows) => rows.length > 0)))

/** One more refused redeem; the LINK_FAILURES_MAX-th spends the token. */
export const recordLinkFailure = (tokenHash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE link_tokens SET failures = failures + 1,
        status = CASE WHEN failures + 1 >= ${LINK_FAILURES_MAX} THEN 'spent' ELSE status END,
        closed_at = CASE WHEN failures + 1 >= ${LINK_FAILURES_MAX} THEN now() ELSE closed_at END
      WHERE token_hash = ${tokenHash} AND status = 'issued'`)

/** How long an issuer waits for the token's entity to record it (its Mint went through cluster storage). */
export const recordedWithinMs = 20_000

/** Waits until the token's row exists: the token is live once this succeeds. */
export const awaitLinkTokenRecorded = (tokenHash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM link_tokens WHERE token_hash = ${tokenHash}`.pipe(
      Effect.filterOrFail((rows) => rows.length > 0, () => "pending" as const),
      Effect.retry({ schedule: Schedule.spaced(Duration.millis(100)), while: (e) => e === "pending" }),
      Effect.timeoutFail({ duration: Duration.millis(recordedWithinMs), onTimeout: () => "timeout" as const }),
      Effect.mapError((e) => new LinkTokenNotRecorded({
        message: e === "timeout" || e === "pending" ? "the token was not recorded in time: is a node running?" : `the token could not be read back: ${e.message}`
      }))
    ))

export class LinkTokenNotRecorded extends Data.TaggedError("LinkTokenNotRecorded")<{ readonly message: string }> {}

/** A fresh token and the facts its Mint carries. */
export const freshLinkToken = (nowMs = Date.now()) => {
  const token = newLinkToken()
  return { token, tokenHash: linkTokenId(token), challengeId: newChallengeId(), issuedAtMs: nowMs, expiresAtMs: nowMs + LINK_TOKEN_TTL_MS }
}

const goneText = {
  used: "This link token was already used; ask for a new QR code.",
  expired: "This link token has expired (5 minutes); ask for a new QR code."
} as const

/** A used or expired token as a redeem's refusal (410). */
export const linkTokenGone = (state: "used" | "expired") =>
  new LinkRefused({ status: 410, code: state === "expired" ? "token_expired" : "token_used", message: goneText[state] })

/** The same as the 410 body of a manifest GET. */
export const linkTokenGoneBody = (state: "used" | "expired") =>
  new Gone({ error: { code: state === "expired" ? "token_expired" : "token_used", message: goneText[state] } })

/** The token's row when it can still be redeemed, else its 410. */
export const usableLinkToken = (tokenHash: string, service: LinkService) =>
  Effect.flatMap(readLinkToken(tokenHash, service), (row) => {
    const state = linkTokenState(row, Date.now())
    return state === "usable" && Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(linkTokenGone(state === "expired" ? "expired" : "used"))
  })

/** After a refused redeem: 400 (malformed) and 410 leave the token as it is; anything else counts a failure. */
export const countLinkFailure = (tokenHash: string) => (e: LinkRefused) =>
  e.status === 400 || e.status === 410 ? Effect.void : Effect.asVoid(recordLinkFailure(tokenHash))

/**
 * Mint and Expire, the same in every link token entity: Mint records the token, then schedules
 * its durable Expire (a crash in between redelivers Mint, which inserts nothing and schedules
 * again); Expire turns an unused token into an expired one.
 */
export const linkTokenLifecycle = <E>(tokenHash: string, service: LinkService, scheduleExpire: (dueAtMs: number) => Effect.Effect<void, E>) => ({
  mint: (payload: MintLinkToken) =>
    Effect.gen(function*() {
      yield* insertLinkToken({ tokenHash, service, ...payload })
      yield* scheduleExpire(payload.expiresAtMs)
    }).pipe(Effect.orDie),
  expire: expireLinkToken(tokenHash).pipe(Effect.orDie)
})
