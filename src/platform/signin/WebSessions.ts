// The node's view of the listeners' sessions for authentication: a per-node cache over web_sessions
// (src/platform/CredentialCache.ts: no database round trip in steady state, a revocation seen by
// every node within 2 s; the node that revokes forgets it at once). Expiry is checked on every
// request against the cached expires_at; a session of another service is no session here.
import { SqlClient } from "@effect/sql"
import { Context, Effect, Layer, Option } from "effect"
import { sha256Hex } from "../../crypto/token.ts"
import { type CredentialsUnavailable, makeCredentialCache } from "../CredentialCache.ts"
import { isTokenShaped, loadSession, type WebSession } from "./sessionStore.ts"

export interface WebSessionsShape {
  /** A live session of `service`: well-formed, known, not revoked, not expired at `now`. */
  readonly session: (service: string, token: string, now: number) => Effect.Effect<Option.Option<WebSession>, CredentialsUnavailable>
  /** Drops a revoked session from this node's cache now (the other nodes' polls drop it within 2 s). */
  readonly forget: (tokenHash: string) => void
}

export class WebSessions extends Context.Tag("shardline/platform/WebSessions")<WebSessions, WebSessionsShape>() {}

export const layer = Layer.scoped(WebSessions, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cache = yield* makeCredentialCache({ name: "web sessions", table: "web_sessions", hashColumn: "token_hash", load: loadSession(sql) })
  return WebSessions.of({
    session: (service, token, now) =>
      isTokenShaped(token)
        ? Effect.map(cache.get(sha256Hex(token)), Option.filter((s) => s.service === service && s.expiresAt.getTime() > now))
        : Effect.succeed(Option.none()),
    forget: cache.forget
  })
}))
