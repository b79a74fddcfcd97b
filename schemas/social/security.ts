// A signed-in member's session (spec: Authentication, sign-in flow step d): a bearer token the
// wallet-exchange step mints, sent as Authorization: Bearer or, by browsers, as the sl_session cookie. Implemented in src/social/auth/SessionAuth.ts.
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Context, Schema } from "effect"
import { ServiceUnavailable } from "../common/ErrorBody.ts"
import { Forbidden, Unauthorized } from "./errors.ts"

export interface SessionInfo {
  readonly service: string
  /** The wallet address that signed in. */
  readonly address: string
  readonly expiresAt: Date
  /** SHA-256 hex of the session token (names it for sign-out and the session list). */
  readonly tokenHash: string
}

export class Session extends Context.Tag("shardline/social/Session")<Session, SessionInfo>() {}

export class SessionAuth extends HttpApiMiddleware.Tag<SessionAuth>()("social/SessionAuth", {
  provides: Session,
  failure: Schema.Union(Unauthorized, Forbidden, ServiceUnavailable),
  security: {
    bearer: HttpApiSecurity.bearer.pipe(HttpApiSecurity.annotate(OpenApi.Description, "The session token from POST /api/public/auth/wallet-exchange.")),
    cookie: HttpApiSecurity.apiKey({ in: "cookie", key: "sl_session" }).pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The same session token as the HttpOnly cookie wallet-exchange sets, for browsers.")
    )
  }
}) {}
