// The node's view of social sessions for authentication: a per-node cache over social_sessions
// (src/platform/CredentialCache.ts: no database round trip in steady state, a revocation seen by
// every node within 2 s). Expiry is checked on every request against the cached expires_at.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import type { SessionInfo } from "../../../schemas/social/security.ts"
import { sha256Hex } from "../../crypto/token.ts"
import { type CredentialsUnavailable, makeCredentialCache } from "../../platform/CredentialCache.ts"
import { isTokenShaped, loadSession } from "./SessionStore.ts"

export interface SessionsShape {
  /** A live session: well-formed, known, not revoked, not expired at `now`. */
  readonly session: (token: string, now: number) => Effect.Effect<Option.Option<SessionInfo>, CredentialsUnavailable>
}

export class Sessions extends Context.Tag("shardline/social/Sessions")<Sessions, SessionsShape>() {}

export const layer = Layer.scoped(Sessions, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* makeCredentialCache({ name: "social sessions", table: "social_sessions", hashColumn: "token_hash", load: loadSession(sql) })
  return Sessions.of({
    session: (token, now) =>
      isTokenShaped(token)
        ? Effect.map(cache.get(sha256Hex(token)), Option.filter((s) => s.expiresAt.getTime() > now))
        : Effect.succeed(Option.none())
  })
}))
