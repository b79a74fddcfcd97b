// Social session auth as HttpApi security middleware: the bearer token (or the sl_session cookie),
// checked against the node's session cache (src/platform/signin/sessionAuth.ts); 401
// invalid_session for a missing, unknown, expired or revoked one; 403 cross_site_refused for a
// cookie-session change that may come from another site (issue 27.2).
import { Effect, Layer } from "effect"
import { Forbidden, Unauthorized, unavailable } from "../../../schemas/social/errors.ts"
import { SessionAuth } from "../../../schemas/social/security.ts"
import { challengeBearer } from "../../platform/http/bearer.ts"
import { HttpServerRequest } from "@effect/platform"
import { authenticateSession } from "../../platform/signin/sessionAuth.ts"
import { WebSessions } from "../../platform/signin/WebSessions.ts"

/** The session cookie browsers send (set by wallet-exchange). */
export const socialSessionCookie = "sl_session"

const refused = (message: string) => new Unauthorized({ error: { code: "invalid_session", message } })

const makeVerifier = Effect.map(WebSessions, (sessions) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    // Either scheme: HttpApi tries them in turn, so each reads both (bearer.ts).
    const check = yield* authenticateSession("social", socialSessionCookie).pipe(
      Effect.provideService(WebSessions, sessions),
      Effect.mapError(() => unavailable("Sessions cannot be checked right now; please retry."))
    )
    switch (check._tag) {
      case "Missing":
        challengeBearer(request)
        return yield* Effect.fail(refused("A session is required: Authorization: Bearer <session token>."))
      case "Unknown":
        challengeBearer(request)
        return yield* Effect.fail(refused("The session is unknown, expired or revoked; sign in again."))
      case "CrossSite":
        return yield* Effect.fail(new Forbidden({ error: { code: "cross_site_refused", message: check.message } }))
      case "Found":
        return check.session
    }
  }))

export const layer = Layer.effect(SessionAuth, Effect.map(makeVerifier, (verify) => ({ bearer: () => verify, cookie: () => verify })))
