// Browser and wallet sessions of every listener in Postgres (web_sessions): the token is shown once
// (to the browser, by wallet-exchange) and stored as its SHA-256; each row names its service, and a
// session opens only its own. A session's public id is the first 16 hex of that hash: enough to
// name it in a list, useless to sign in with.
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { base62Token, isBase62Token, sha256Hex } from "../../crypto/token.ts"

/** How long a session lasts unless the flow says otherwise. */
export const sessionTtlMs = 7 * 24 * 3600_000
/** A list shows at most this many sessions (newest first). */
export const sessionListMax = 100

/** A live session as the node sees it. */
export interface WebSession {
  readonly service: string
  /** The wallet address that signed in. */
  readonly address: string
  readonly expiresAt: Date
  /** SHA-256 hex of the token: names the session for sign-out and "current" in the list. */
  readonly tokenHash: string
}

export const sessionIdOf = (tokenHash: string) => tokenHash.slice(0, 16)
export const isSessionId = (id: string) => /^[0-9a-f]{16}$/.test(id)

/** A new session for the address on one service; the token is returned once and never stored. */
export const mintSession = (service: string, address: string, ttlMs = sessionTtlMs) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => {
    const token = base62Token(64)
    const expiresAt = new Date(Date.now() + ttlMs)
    return Effect.as(sql`INSERT INTO web_sessions (token_hash, service, address, expires_at) VALUES (${sha256Hex(token)}, ${service}, ${address}, ${expiresAt})`, {
      token,
      address,
      expiresAt
    })
  })

/** Sign-out by the token itself: true when a live session was revoked. */
export const revokeSession = (token: string) => revokeByHash(sha256Hex(token))

export const revokeByHash = (tokenHash: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE web_sessions SET revoked_at = now() WHERE token_hash = ${tokenHash} AND revoked_at IS NULL RETURNING 1`.pipe(
      Effect.map((rows) => rows.length > 0)
    ))

/** Ends one of the address's own sessions by its id: the hashes it ended (none when the id names none of them). */
export const revokeSessionById = (service: string, address: string, id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ token_hash: string }>`UPDATE web_sessions SET revoked_at = now()
      WHERE service = ${service} AND address = ${address} AND left(token_hash, 16) = ${id} AND revoked_at IS NULL RETURNING token_hash`.pipe(
      Effect.map((rows) => rows.map((r) => r.token_hash))
    ))

/** The address's live sessions on one service, newest first. */
export const listSessions = (service: string, address: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ token_hash: string; created_at: Date; expires_at: Date }>`SELECT token_hash, created_at, expires_at FROM web_sessions
      WHERE service = ${service} AND address = ${address} AND revoked_at IS NULL AND expires_at > now()
      ORDER BY created_at DESC LIMIT ${sessionListMax}`)

/** A session not revoked (expiry is checked per request, so a cached session still ends on time). */
export const loadSession = (sql: SqlClient.SqlClient) => (tokenHash: string) =>
  sql<{ service: string; address: string; expires_at: Date }>`SELECT service, address, expires_at FROM web_sessions WHERE token_hash = ${tokenHash} AND revoked_at IS NULL`.pipe(
    Effect.map((rows) =>
      Option.fromNullable(rows[0]).pipe(Option.map((r): WebSession => ({ service: r.service, address: r.address, expiresAt: new Date(r.expires_at), tokenHash })))
    )
  )

export const isTokenShaped = (text: string): boolean => isBase62Token(text, 64)
