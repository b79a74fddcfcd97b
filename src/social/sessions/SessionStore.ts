// Social sessions in Postgres: the token is shown once (to the browser, by wallet-exchange) and
// stored as its SHA-256. The sign-in flow mints with `mintSession`.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { SessionInfo } from "../../../schemas/social/security.ts"
import { base62Token, isBase62Token, sha256Hex } from "../../crypto/token.ts"

/** How long a session lasts unless the flow says otherwise. */
export const sessionTtlMs = 7 * 24 * 3600_000

/** A new session for the address; the token is returned once and never stored. */
export const mintSession = (address: string, ttlMs = sessionTtlMs) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const token = base62Token(64)
    const expiresAt = new Date(Date.now() + ttlMs)
    return Effect.as(sql`INSERT INTO social_sessions (token_hash, address, expires_at) VALUES (${sha256Hex(token)}, ${address}, ${expiresAt})`, {
      token,
      address,
      expiresAt
    })
  })

/** Sign-out: true when a live session was revoked. */
export const revokeSession = (token: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE social_sessions SET revoked_at = now() WHERE token_hash = ${sha256Hex(token)} AND revoked_at IS NULL RETURNING 1`.pipe(
      Effect.map((rows) => rows.length > 0)
    ))

/** A session not revoked (expiry is checked per request, so a cached session still ends on time). */
export const loadSession = (sql: SqlClient.SqlClient) => (tokenHash: string) =>
  sql<{ address: string; expires_at: Date }>`SELECT address, expires_at FROM social_sessions WHERE token_hash = ${tokenHash} AND revoked_at IS NULL`.pipe(
    Effect.map((rows) => Option.fromNullable(rows[0]).pipe(Option.map((r): SessionInfo => ({ address: r.address, expiresAt: new Date(r.expires_at) }))))
  )

export const isTokenShaped = (text: string): boolean => isBase62Token(text, 64)
